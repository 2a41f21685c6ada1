"""The signatures of the generated helpers a caller writes code against, compared.

Derived from the model's name records, exactly as the templates print them: each word's C
pack function takes its free bit fields positionally, in bit order; each handler's Python
builder takes the handler's arguments as required keywords and the command's own fields and
flags as keywords with defaults. C has neither keywords nor defaults, so any change of a
pack function's parameters breaks its callers (a new field too: the arity changes). A Python
builder's command-field keywords all have defaults, so only a vanished one breaks callers;
its required keywords are the handler's arguments, compared with the program.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttlgen.compat.changes import Area, Change, Impact
from ttlgen.compat.sides import Side
from ttlgen.errors import Mark
from ttlgen.model.layout import Layout
from ttlgen.model.programs import Program


@dataclass(frozen=True)
class CFunction:
    name: str
    params: tuple[str, ...]
    mark: Mark

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.params)})"


@dataclass(frozen=True)
class Builder:
    qualified: str  # komorebi_abi.programs.mapcollect.map_command
    optional: tuple[str, ...]  # the keywords with defaults (the required ones are the handler's arguments)
    mark: Mark


def c_functions(layout: Layout) -> dict[str, CFunction]:
    out = {}
    for word in layout.words:
        params = tuple(f.names.c_parameter for f in word.free_fields if f.names.c_parameter is not None)
        out[word.names.c_pack] = CFunction(word.names.c_pack, params, word.mark)
    return out


def builders(program: Program) -> dict[str, Builder]:
    shape = program.command
    module = f"{program.layout.names.py_package}.programs.{program.names.py_module}"
    optional = [f.names.py_attribute for f in shape.caller_fields if f.names.py_attribute is not None]
    if shape.flags_field.names.py_attribute is not None:
        optional.append(shape.flags_field.names.py_attribute)
    out = {}
    for handler in program.handlers:
        name = f"{module}.{handler.names.py_builder}"
        out[name] = Builder(name, tuple(optional), handler.name_mark)
    return out


def compare_signatures(old_side: Side, new_side: Side) -> list[Change]:
    """Changed C pack functions and Python builders (helpers that vanish with their word or
    handler are reported with it)."""
    changes: list[Change] = []
    old_layouts = {layout.name: layout for layout in old_side.project.layouts.layouts}
    for layout in new_side.project.layouts.layouts:
        old = old_layouts.get(layout.name)
        if old is None:
            continue
        before, after = c_functions(old), c_functions(layout)
        for name in sorted(before.keys() & after.keys()):
            o, n = before[name], after[name]
            if o.params == n.params:
                continue
            arity = f"{len(o.params)} -> {len(n.params)} parameters; " if len(o.params) != len(n.params) else ""
            changes.append(
                Change(
                    Area.LAYOUT, Impact.SOURCE, "c-signature", f"C function {name}", f"{arity}{o} -> {n}",
                    old_side.node(o.mark), new_side.node(n.mark), layout=layout.name,
                )
            )
    old_programs = {p.name: p for p in old_side.project.programs.programs}
    for program in new_side.project.programs.programs:
        old_program = old_programs.get(program.name)
        if old_program is None:
            continue
        old_builders, new_builders = builders(old_program), builders(program)
        for name in sorted(old_builders.keys() & new_builders.keys()):
            ob, nb = old_builders[name], new_builders[name]
            # The handler's own arguments are compared with the program (programs_diff).
            gone = [k for k in ob.optional if k not in nb.optional]
            added = [k for k in nb.optional if k not in ob.optional]

            def change(impact: Impact, kind: str, message: str, ob: Builder = ob, nb: Builder = nb, layout: str = program.layout.name) -> None:
                changes.append(
                    Change(
                        Area.PROGRAMS, impact, kind, f"Python builder {nb.qualified}", message,
                        old_side.node(ob.mark), new_side.node(nb.mark), layout=layout,
                    )
                )

            if gone:
                change(Impact.SOURCE, "python-keyword-removed", f"no longer takes {', '.join(gone)}")
            if added:
                default = program.command.caller_default
                change(Impact.COMPATIBLE, "python-keyword-added", f"takes new keyword {', '.join(added)} (default {default})")
    return changes
