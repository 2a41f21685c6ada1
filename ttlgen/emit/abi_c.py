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
    StructField,
)
from ttlgen.model.names import Names
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan


def _x(value: int) -> str:
    return f"0x{value:X}u"


@dataclass(frozen=True)
class Define:
    """A named number of the layout, printed in hex when it is an address or a mask.

    ``origin`` is the model object the number belongs to (``ttlgen explain`` follows it)."""

    names: Names
    value: int
    origin: object
    hex: bool = False

    @property
    def name(self) -> str:
        """The C macro."""
        return self.names.c

    @property
    def literal(self) -> str:
        """Without the C suffix: ``0x410`` or ``16``."""
        return f"0x{self.value:X}" if self.hex else str(self.value)


def _d(names: Names, value: int, origin: object) -> Define:
    return Define(names, value, origin)


def _h(names: Names, value: int, origin: object) -> Define:
    return Define(names, value, origin, hex=True)


@dataclass(frozen=True)
class Macros:
    """The header's macros, grouped as the header prints them."""

    version: list[Define]
    constants: list[Define]
    enums: dict[str, list[Define]]
    words: dict[str, list[Define]]
    structs: dict[str, list[Define]]
    tables: dict[str, list[Define]]
    regions: dict[str, list[Define]]
    blocks: dict[str, list[Define]]

    def all(self) -> list[Define]:
        out: list[Define] = [*self.version, *self.constants]
        for group in (self.enums, self.words, self.structs, self.tables, self.regions, self.blocks):
            for defines in group.values():
                out.extend(defines)
        return out


def macros(layout: Layout) -> Macros:
    enums = {}
    for e in layout.enums:
        defines: list[Define] = []
        for item in e.entries:
            if isinstance(item, EnumRange):
                defines.append(_d(item.names.min, item.first, item))
                defines.append(_d(item.names.max, item.last, item))
            elif item.names is not None:
                defines.append(_d(item.names.number, item.value, item))
        enums[e.name] = defines
    words = {}
    for w in layout.words:
        defines = []
        for f in w.fields:
            if f.value is not None:
                assert f.names.value is not None
                defines.append(_h(f.names.value, f.value, f))
            defines.append(_d(f.names.shift, f.lsb, f))
            defines.append(_h(f.names.mask, f.mask, f))
        words[w.name] = defines
    structs = {}
    for s in layout.structs:
        defines = [_d(s.names.size, s.size, s)]
        defines.extend(_d(f.names.offset, f.offset, f) for f in s.fields)
        defines.extend(_d(a.names.length, len(a.fields), a) for a in s.arrays)
        structs[s.name] = defines
    tables = {}
    for t in layout.tables:
        defines = [_d(t.names.size, t.size, t)]
        defines.extend(_d(e.names.number, e.index, e) for e in t.named_entries)
        tables[t.name] = defines
    regions = {}
    blocks = {}
    for b in layout.blocks:
        for r in b.named_regions:
            assert r.name is not None and r.names is not None
            defines = [_h(r.names.offset, r.offset, r), _h(r.names.size, r.size, r)]
            if r.names.slots is not None and r.names.slot_size is not None and r.slot_bytes is not None:
                assert r.slots is not None
                defines.append(_d(r.names.slots, r.slots, r))
                defines.append(_h(r.names.slot_size, r.slot_bytes, r))
            regions[r.name] = defines
        blocks[b.name] = [_h(b.names.size, b.size, b)]
    version = [_d(layout.version.names.major, layout.version.major, layout.version), _d(layout.version.names.minor, layout.version.minor, layout.version)]
    constants = [_d(c.names.number, c.value, c) for c in layout.constants]
    return Macros(version, constants, enums, words, structs, tables, regions, blocks)


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
    return [f"uint32_t {f.names.c_parameter}" for f in fields]


def _region_end(block: Block, index: int) -> str:
    """C expression for where region ``index`` of ``block`` must start."""
    if index == 0:
        return "0u"
    pad = 0
    for region in reversed(block.regions[:index]):
        if region.names is None:
            pad += region.size
            continue
        expr = f"{region.names.offset.c} + {region.names.size.c}"
        return f"{expr} + {_x(pad)}" if pad else expr
    return _x(pad)


def _contents_checks(layout: Layout, region: Region) -> list[str]:
    names = region.names
    assert names is not None
    slots = names.slots.c if names.slots is not None else None
    slot = names.slot_size.c if names.slot_size is not None else names.size.c
    checks = []
    if slots is not None:
        checks.append(f"{names.size.c} % {slots} == 0u")
        checks.append(f"{names.size.c} / {slots} == {slot}")
    if region.struct is not None:
        checks.append(f"sizeof({layout.struct(region.struct).names.c_type}) == {slot}")
    if region.table is not None:
        count = layout.table(region.table).names.size.c
        checks.append(f"{slot} / {layout.word_bytes}u == {count}")
    if region.word is not None:
        checks.append(f"sizeof(uint32_t) == {slot}")
    return checks


def _struct_checks(struct: Struct) -> list[tuple[str, Struct | StructField]]:
    c_type = struct.names.c_type
    checks: list[tuple[str, Struct | StructField]] = [(f"sizeof({c_type}) == {struct.names.size.c}", struct)]
    checks.extend((f"offsetof({c_type}, {f.names.c_member}) == {f.names.offset.c}", f) for f in struct.fields)
    return checks


@dataclass(frozen=True)
class StaticAssert:
    """One static assert of the header, and the model object it checks (for ``ttlgen explain``)."""

    condition: str
    message: str
    origin: object


def static_asserts(layout: Layout) -> list[StaticAssert]:
    """Every static assert of the header."""
    out: list[StaticAssert] = []
    for s in layout.structs:
        out.extend(StaticAssert(c, f"{s.names.c_type} layout", origin) for c, origin in _struct_checks(s))
    for b in layout.blocks:
        align = f"{b.align}u"
        size = b.names.size.c
        for i, r in enumerate(b.regions):
            if r.names is None:
                continue
            offset = r.names.offset.c
            out.append(StaticAssert(f"{offset} == {_region_end(b, i)}", offset, r))
            out.append(StaticAssert(f"{offset} % {align} == 0u", offset, r))
            out.append(StaticAssert(f"{r.names.size.c} % {align} == 0u", offset, r))
            out.extend(StaticAssert(c, offset, r) for c in _contents_checks(layout, r))
        end = _region_end(b, len(b.regions)) if b.named_regions else "0u"
        out.append(StaticAssert(f"{size} == {end}", size, b))
        out.append(StaticAssert(f"{size} % {align} == 0u", size, b))
    return out


def header_path(layout: Layout) -> str:
    return "include/" + layout.names.c_header


def emit_layout(layout: Layout, ctx: EmitContext) -> list[GeneratedFile]:
    m = macros(layout)
    path = header_path(layout)
    header = ctx.render(
        "c/km_abi.h.j2",
        layout=layout,
        names=layout.names,
        version_defines=m.version,
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
        include=layout.names.c_header,
        defines=m.all(),
        call=c_call,
    )
    sources = (layout.file,)
    return [
        GeneratedFile(path=path, body=header, sources=sources),
        GeneratedFile(path="tests/" + layout.names.c_check_program, body=checker, sources=sources),
    ]


def emit_layouts(model: LayoutModel, ctx: EmitContext) -> list[GeneratedFile]:
    return [file for layout in model.layouts for file in emit_layout(layout, ctx)]


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    return emit_layouts(project.layouts, ctx)
