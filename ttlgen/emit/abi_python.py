"""The host Python codec of each layout: a stdlib-only package.

``python/<package>/`` holds ``layout.py`` (every number of the layout, enums with the
names the runtime prints, bit-field descriptions), ``codec.py`` (a class per struct with
``pack``/``unpack``, a class per bit-field word, a decoder per index table, gave-up words,
limit units) and ``_words.py``, the packing helpers that are the same for every layout
(copied from ``templates/python/komorebi_abi/_words.py``).
"""

from __future__ import annotations

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit.abi_c import macros
from ttlgen.model.layout import Layout, LayoutModel
from ttlgen.model.project import Project
from ttlgen.naming import camel
from ttlgen.plan.project import ProjectPlan

TEMPLATES = "python/komorebi_abi"


def package_dir(layout: Layout) -> str:
    return f"python/{layout.python_package}"


def emit_layout(layout: Layout, ctx: EmitContext) -> list[GeneratedFile]:
    m = macros(layout)
    groups = [("constants", m.constants)]
    groups.extend((f"enum {name}", defines) for name, defines in m.enums.items())
    groups.extend((f"word {name}", defines) for name, defines in m.words.items())
    groups.extend((f"struct {name}", defines) for name, defines in m.structs.items())
    groups.extend((f"table {name}", defines) for name, defines in m.tables.items())
    for block in layout.blocks:
        groups.extend(
            (f"region {r.name}", m.regions[r.offset_name])
            for r in block.named_regions
            if r.offset_name is not None
        )
        groups.append((f"block {block.name}", m.blocks[block.name]))
    decoders = sorted([f"decode_{w.name}" for w in layout.words] + [f"decode_{t.name}" for t in layout.tables])
    classes = [w.type_name for w in layout.words]
    classes += [camel(s.name) for s in layout.structs] + [camel(t.name) for t in layout.tables]
    converters = [c.converter for c in layout.constants if c.converter is not None]
    # Sorted as ruff's isort sorts imported names: classes, then functions.
    codec_names = [*sorted([*classes, "NotLandedError"]), *sorted([*decoders, *converters])]
    exports = sorted(["AbiError", "layout", *codec_names])
    base = package_dir(layout)
    sources = (layout.file,)
    return [
        GeneratedFile(
            f"{base}/__init__.py",
            ctx.render(f"{TEMPLATES}/__init__.py.j2", layout=layout, codec_names=codec_names, exports=exports),
            sources,
        ),
        GeneratedFile(f"{base}/_words.py", ctx.copy(f"{TEMPLATES}/_words.py"), (f"templates/{TEMPLATES}/_words.py",)),
        GeneratedFile(f"{base}/layout.py", ctx.render(f"{TEMPLATES}/layout.py.j2", layout=layout, groups=groups), sources),
        GeneratedFile(f"{base}/codec.py", ctx.render(f"{TEMPLATES}/codec.py.j2", layout=layout), sources),
    ]


def emit_layouts(model: LayoutModel, ctx: EmitContext) -> list[GeneratedFile]:
    return [file for layout in model.layouts for file in emit_layout(layout, ctx)]


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    return emit_layouts(project.layouts, ctx)
