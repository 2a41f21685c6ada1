"""Per program: a C++ header of handler ids, flags and argument accessors, and Python builders.

``include/<layout>/programs/<program>.hpp`` includes the layout's C header and gives
``kHandler<Name>``, ``kFlags<Name>`` and ``<handler>_<argument>(command)`` in the program's
namespace. The Python builders live in the layout's codec package as
``<package>/programs/<program>.py`` because each one returns the package's command class:
one import (``komorebi_abi.programs.mapcollect``) gives a program's host side, and the
codec package stays importable without any program.
"""

from __future__ import annotations

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit.abi_python import package_dir
from ttlgen.model.programs import Program, ProgramModel
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan


def emit_program(program: Program, ctx: EmitContext) -> list[GeneratedFile]:
    layout = program.layout
    sources = (program.file, layout.file)
    header = ctx.render("programs/program.hpp.j2", program=program, shape=program.command, layout_names=layout.names)
    builders = ctx.render("programs/program.py.j2", program=program, shape=program.command)
    return [
        GeneratedFile(path="include/" + program.names.cpp_header, body=header, sources=sources),
        GeneratedFile(path=f"{package_dir(layout)}/programs/{program.names.py_module}.py", body=builders, sources=sources),
    ]


def emit_programs(model: ProgramModel, ctx: EmitContext) -> list[GeneratedFile]:
    files: list[GeneratedFile] = []
    for program in model.programs:
        files.extend(emit_program(program, ctx))
    layouts = sorted({p.layout.name: p.layout for p in model.programs}.items())
    for _, layout in layouts:
        programs = model.for_layout(layout.name)
        files.append(
            GeneratedFile(
                path=f"{package_dir(layout)}/programs/__init__.py",
                body=ctx.render("programs/__init__.py.j2", layout=layout, programs=programs),
                sources=tuple(p.file for p in programs),
            )
        )
    return files


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    return emit_programs(project.programs, ctx)
