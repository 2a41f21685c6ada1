"""The reference tables of each layout as Markdown: ``docs/<layout>-abi.md``.

Every table of the layout (constants, structs, bit-field words, enumerations, word tables
and region maps) with offsets, names and contents, so the documentation is regenerated
with the headers and can never drift from them.
"""

from __future__ import annotations

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit.abi_c import header_path
from ttlgen.emit.abi_cpp import layout_header_path
from ttlgen.model.layout import Layout, LayoutModel
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan


def emit_layout(layout: Layout, ctx: EmitContext) -> GeneratedFile:
    body = ctx.render(
        "docs/komorebi-abi.md.j2",
        layout=layout,
        c_header=header_path(layout),
        cpp_header=layout_header_path(layout),
    )
    return GeneratedFile(path=f"docs/{layout.name}-abi.md", body=body, sources=(layout.file,))


def emit_layouts(model: LayoutModel, ctx: EmitContext) -> list[GeneratedFile]:
    return [emit_layout(layout, ctx) for layout in model.layouts]


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    return emit_layouts(project.layouts, ctx)
