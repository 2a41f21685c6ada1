"""The host Python codec of each layout: a stdlib-only package.

``python/<package>/`` holds ``layout.py`` (every number of the layout, enums with the
names the runtime prints, bit-field descriptions), ``codec.py`` (a class per struct with
``pack``/``unpack``, a class per bit-field word, a decoder per index table, gave-up words,
limit units) and ``_words.py``, the packing helpers that are the same for every layout
(a verbatim copy of :mod:`ttlgen.abi_runtime.words`).
"""

from __future__ import annotations

from pathlib import Path

from ttlgen import abi_runtime
from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit.abi_c import macros
from ttlgen.model.layout import Layout, LayoutModel
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan

TEMPLATES = "python/komorebi_abi"
# Read, not imported: the emitter only copies it.
WORDS_SOURCE = Path(abi_runtime.__file__).with_name("words.py")
WORDS_SOURCE_NAME = "ttlgen/abi_runtime/words.py"  # how the copies name their source


def package_dir(layout: Layout) -> str:
    return f"python/{layout.names.py_package}"


def emit_layout(layout: Layout, ctx: EmitContext) -> list[GeneratedFile]:
    m = macros(layout)
    groups = [("ABI version", m.version), ("constants", m.constants)]
    for kind, defined in (("enum", m.enums), ("word", m.words), ("struct", m.structs), ("table", m.tables)):
        groups.extend((f"{kind} {name}", defines) for name, defines in defined.items())
    for block in layout.blocks:
        groups.extend((f"region {r.name}", m.regions[r.name]) for r in block.named_regions if r.name is not None)
        groups.append((f"block {block.name}", m.blocks[block.name]))
    decoders = sorted([w.names.py_decoder for w in layout.words] + [t.names.py_decoder for t in layout.tables])
    classes = [w.names.py_class for w in layout.words]
    classes += [s.names.py_class for s in layout.structs] + [t.names.py_class for t in layout.tables]
    converters = [c.names.py_converter for c in layout.constants if c.names.py_converter is not None]
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
        GeneratedFile(f"{base}/_words.py", WORDS_SOURCE.read_text(encoding="utf-8"), (WORDS_SOURCE_NAME,)),
        GeneratedFile(f"{base}/layout.py", ctx.render(f"{TEMPLATES}/layout.py.j2", layout=layout, groups=groups), sources),
        GeneratedFile(f"{base}/codec.py", ctx.render(f"{TEMPLATES}/codec.py.j2", layout=layout), sources),
    ]


def emit_layouts(model: LayoutModel, ctx: EmitContext) -> list[GeneratedFile]:
    return [file for layout in model.layouts for file in emit_layout(layout, ctx)]


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    return emit_layouts(project.layouts, ctx)
