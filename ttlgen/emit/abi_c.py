"""The plain C ABI header of each layout, and a C program that checks it at run time.

``include/<layout>/abi/<prefix>_abi.h`` holds every constant, enum value, bit-field
accessor, struct, table index and region offset of the layout as macros and static
inline functions, plus a static assert for every struct size, field offset, region
offset, size and alignment, and block size. ``tests/<prefix>_abi_offsets.c`` compares
each macro and ``offsetof`` with the value in the spec at run time and prints nothing
when all agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.model.layout import (
    BitField,
    Block,
    EnumRange,
    Layout,
    LayoutModel,
    Region,
    Struct,
    c_macro,
)
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan


def _x(value: int) -> str:
    return f"0x{value:X}u"


@dataclass(frozen=True)
class Define:
    """A named number of the layout, printed in hex when it is an address or a mask."""

    name: str  # the C macro
    value: int
    hex: bool = False

    @property
    def literal(self) -> str:
        """Without the C suffix: ``0x410`` or ``16``."""
        return f"0x{self.value:X}" if self.hex else str(self.value)

    def short(self, prefix: str) -> str:
        """The name without the layout's prefix (Python constants): ``CONTROL_RING``."""
        return self.name.removeprefix(prefix + "_")


def _d(name: str, value: int) -> Define:
    return Define(name, value)


def _h(name: str, value: int) -> Define:
    return Define(name, value, hex=True)


@dataclass(frozen=True)
class Macros:
    """The header's macros, grouped as the header prints them."""

    constants: list[Define]
    enums: dict[str, list[Define]]
    words: dict[str, list[Define]]
    structs: dict[str, list[Define]]
    tables: dict[str, list[Define]]
    regions: dict[str, list[Define]]
    blocks: dict[str, list[Define]]

    def all(self) -> list[Define]:
        out: list[Define] = list(self.constants)
        for group in (self.enums, self.words, self.structs, self.tables, self.regions, self.blocks):
            for defines in group.values():
                out.extend(defines)
        return out


def macros(layout: Layout) -> Macros:
    p = layout.c_prefix
    enums = {}
    for e in layout.enums:
        defines: list[Define] = []
        for item in e.entries:
            if isinstance(item, EnumRange):
                defines.append(_d(item.min_names.c, item.first))
                defines.append(_d(item.max_names.c, item.last))
            elif item.names is not None:
                defines.append(_d(item.names.c, item.value))
        enums[e.name] = defines
    words = {}
    for w in layout.words:
        defines = []
        for f in w.fields:
            if f.value is not None:
                defines.append(_h(c_macro(p, w.name, f.name), f.value))
            defines.append(_d(c_macro(p, w.name, f.name, "shift"), f.lsb))
            defines.append(_h(c_macro(p, w.name, f.name, "mask"), f.mask))
        words[w.name] = defines
    structs = {}
    for s in layout.structs:
        defines = [_d(s.size_name, s.size)]
        defines.extend(_d(f.offset_name, f.offset) for f in s.fields)
        defines.extend(_d(a.count_name, len(a.fields)) for a in s.arrays)
        structs[s.name] = defines
    tables = {}
    for t in layout.tables:
        defines = [_d(t.count_names.c, t.size)]
        defines.extend(_d(e.names.c, e.index) for e in t.named_entries)
        tables[t.name] = defines
    regions = {}
    blocks = {}
    for b in layout.blocks:
        for r in b.named_regions:
            assert r.offset_name is not None and r.size_name is not None
            defines = [_h(r.offset_name, r.offset), _h(r.size_name, r.size)]
            if r.slots_name is not None and r.slot_size_name is not None and r.slot_bytes is not None:
                assert r.slots is not None
                defines.append(_d(r.slots_name, r.slots))
                defines.append(_h(r.slot_size_name, r.slot_bytes))
            regions[r.offset_name] = defines
        blocks[b.name] = [_h(b.size_name, b.size)]
    constants = [_d(c.names.c, c.value) for c in layout.constants]
    return Macros(constants, enums, words, structs, tables, regions, blocks)


COLUMNS = 100  # the column limit of the repository's .clang-format
CONTINUATION = 4


def c_call(head: str, args: list[str], tail: str, indent: str = "") -> str:
    """``head`` + comma-separated ``args`` + ``tail``, wrapped the way clang-format wraps a
    call or a declaration: on one line if it fits, else packed at the open parenthesis;
    an argument too long for a line breaks after its last ``==`` that fits."""
    one = f"{indent}{head}{', '.join(args)}{tail}"
    if len(one) <= COLUMNS:
        return one
    column = len(indent) + len(head)
    lines: list[str] = []
    current = f"{indent}{head}"
    fresh = True
    for i, arg in enumerate(args):
        end = tail if i == len(args) - 1 else ","
        piece = arg + end
        candidate = current + ("" if fresh else " ") + piece
        if len(candidate) <= COLUMNS:
            current, fresh = candidate, False
            continue
        if not fresh:
            lines.append(current)
            current, fresh = " " * column, True
        if len(current + piece) <= COLUMNS:
            current, fresh = current + piece, False
            continue
        left, sep, right = arg.rpartition(" == ")
        if not sep:
            current, fresh = current + piece, False
            continue
        lines.append(current + left + " ==")
        current, fresh = " " * (column + CONTINUATION) + right + end, False
        if i < len(args) - 1:
            lines.append(current)
            current, fresh = " " * column, True
    lines.append(current)
    return "\n".join(lines)


def c_continued(head: str, body: str) -> str:
    """A macro definition, continued on a second line when it does not fit on one."""
    one = f"{head} {body}"
    if len(one) <= COLUMNS:
        return one
    return head.ljust(COLUMNS - 1) + "\\\n" + " " * CONTINUATION + body


def c_params(fields: Sequence[BitField]) -> list[str]:
    return [f"uint32_t {f.name}" for f in fields]


def _region_end(block: Block, index: int) -> str:
    """C expression for where region ``index`` of ``block`` must start."""
    if index == 0:
        return "0u"
    pad = 0
    for region in reversed(block.regions[:index]):
        if region.name is None:
            pad += region.size
            continue
        expr = f"{region.offset_name} + {region.size_name}"
        return f"{expr} + {_x(pad)}" if pad else expr
    return _x(pad)


def _contents_checks(layout: Layout, region: Region) -> list[str]:
    slot = region.slot_size_name if region.slots is not None else region.size_name
    checks = []
    if region.slots is not None:
        checks.append(f"{region.size_name} % {region.slots_name} == 0u")
        checks.append(f"{region.size_name} / {region.slots_name} == {region.slot_size_name}")
    if region.struct is not None:
        checks.append(f"sizeof({layout.struct(region.struct).c_type}) == {slot}")
    if region.table is not None:
        count = layout.table(region.table).count_names.c
        checks.append(f"{slot} / {layout.word_bytes}u == {count}")
    if region.word is not None:
        checks.append(f"sizeof(uint32_t) == {slot}")
    return checks


def _struct_checks(struct: Struct) -> list[str]:
    checks = [f"sizeof({struct.c_type}) == {struct.size_name}"]
    checks.extend(f"offsetof({struct.c_type}, {f.name}) == {f.offset_name}" for f in struct.fields)
    return checks


def static_asserts(layout: Layout) -> list[tuple[str, str]]:
    """(condition, message) for every static assert of the header."""
    out: list[tuple[str, str]] = []
    for s in layout.structs:
        out.extend((c, f"{s.c_type} layout") for c in _struct_checks(s))
    for b in layout.blocks:
        align = f"{b.align}u"
        last = None
        for i, r in enumerate(b.regions):
            if r.name is None:
                continue
            msg = f"{r.offset_name}"
            out.append((f"{r.offset_name} == {_region_end(b, i)}", msg))
            out.append((f"{r.offset_name} % {align} == 0u", msg))
            out.append((f"{r.size_name} % {align} == 0u", msg))
            out.extend((c, msg) for c in _contents_checks(layout, r))
            last = i
        end = _region_end(b, len(b.regions)) if last is not None else "0u"
        out.append((f"{b.size_name} == {end}", b.size_name))
        out.append((f"{b.size_name} % {align} == 0u", b.size_name))
    return out


def header_path(layout: Layout) -> str:
    return f"include/{layout.name}/abi/{layout.c_prefix.lower()}_abi.h"


def emit_layout(layout: Layout, ctx: EmitContext) -> list[GeneratedFile]:
    m = macros(layout)
    path = header_path(layout)
    header = ctx.render(
        "c/km_abi.h.j2",
        layout=layout,
        guard=path.upper().replace("/", "_").replace(".", "_").removeprefix("INCLUDE_"),
        lower=layout.c_prefix.lower(),
        enum_defines=m.enums,
        word_defines=m.words,
        struct_defines=m.structs,
        table_defines=m.tables,
        region_defines=m.regions,
        asserts=static_asserts(layout),
        call=c_call,
        continued=c_continued,
        params=c_params,
    )
    checker = ctx.render(
        "c/km_abi_offsets.c.j2",
        layout=layout,
        include=path.removeprefix("include/"),
        defines=m.all(),
        call=c_call,
    )
    sources = (layout.file,)
    return [
        GeneratedFile(path=path, body=header, sources=sources),
        GeneratedFile(path=f"tests/{layout.c_prefix.lower()}_abi_offsets.c", body=checker, sources=sources),
    ]


def emit_layouts(model: LayoutModel, ctx: EmitContext) -> list[GeneratedFile]:
    return [file for layout in model.layouts for file in emit_layout(layout, ctx)]


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    return emit_layouts(project.layouts, ctx)
