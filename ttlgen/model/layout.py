"""Binary layouts (``ttlgen.layout/v1``): words, enums, bit fields, structs, tables, regions.

A layout is the byte-level contract shared by C, C++ and Python. This module turns
schema-valid layout documents into frozen objects and checks what a schema cannot:
region offsets recomputed from the previous region (a disagreeing declared offset is a
gap or an overlap), alignment, struct field overlaps and gaps, bit fields overflowing
their word or overlapping each other, enum values outside their declared width, and
duplicate names.

Names: every named thing carries a record of the identifiers it gets in each language
(:mod:`ttlgen.model.names`), made here when the thing is built, so templates only print
them; :mod:`ttlgen.model.namespaces` then checks the whole layout and its programs for two
things sharing an identifier. ``name_mark`` is where a thing's name is written in the spec.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from ttlgen.errors import DiagnosticSink, KeyPath, Mark
from ttlgen.model.names import (
    BitFieldNames,
    BlockNames,
    ConstantNames,
    EnumNames,
    EnumRangeNames,
    EnumValueNames,
    LayoutNamer,
    LayoutNames,
    RegionNames,
    StructArrayNames,
    StructFieldNames,
    StructNames,
    TableEntryNames,
    TableNames,
    VersionNames,
    WordNames,
)
from ttlgen.spec.document import SpecDocument

KIND = "ttlgen.layout"
WORD_BYTES = 4


# What reserved bits and words hold, and so what a caller that does not know a field sends
# in it: the codecs write it in every bit no field covers.
RESERVED_VALUE = 0


@dataclass(frozen=True)
class AbiVersion:
    """The version of the interface generated from the layout (and the programs on it).

    A change that breaks the wire format or the source of callers bumps ``major``; an
    additive change bumps ``minor`` (``ttlgen compat`` checks both)."""

    major: int
    minor: int
    names: VersionNames
    mark: Mark

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


@dataclass(frozen=True)
class Constant:
    """A named integer of the layout, optionally converted from seconds to cycles."""

    name: str
    value: int
    doc: str
    names: ConstantNames
    converter: str | None  # seconds -> units of this many cycles
    mark: Mark


@dataclass(frozen=True)
class EnumValue:
    """One value of an enum: named, or a reserved value kept free."""

    name: str | None  # None for a reserved (free) value
    value: int
    display: str  # how the value is printed (the name unless the spec says otherwise)
    doc: str
    names: EnumValueNames | None
    mark: Mark
    name_mark: Mark

    @property
    def reserved(self) -> bool:
        return self.name is None


@dataclass(frozen=True)
class EnumRange:
    """A named range of values of an enum (e.g. handler numbers a user may take)."""

    name: str
    first: int
    last: int
    doc: str
    names: EnumRangeNames
    mark: Mark
    name_mark: Mark


@dataclass(frozen=True)
class Enum:
    """An enum or flag set of a fixed bit width, with its values and named ranges."""

    name: str
    prefix: str
    bits: int
    flags: bool
    doc: str
    values: tuple[EnumValue, ...]  # sorted by value
    ranges: tuple[EnumRange, ...]  # sorted by first
    names: EnumNames
    mark: Mark

    @property
    def named_values(self) -> tuple[EnumValue, ...]:
        return tuple(v for v in self.values if v.name is not None)

    @property
    def entries(self) -> tuple[EnumValue | EnumRange, ...]:
        """Values and ranges in value order (for tables)."""
        items: list[EnumValue | EnumRange] = [*self.values, *self.ranges]
        return tuple(sorted(items, key=lambda i: i.value if isinstance(i, EnumValue) else i.first))


@dataclass(frozen=True)
class BitField:
    """A field of a word: its bit position and width, and what its value means."""

    name: str
    lsb: int
    bits: int
    enum: str | None
    indexes: str | None  # region whose slots the field indexes
    limit: int  # exclusive upper bound of the field's value
    value: int | None  # fixed marker value
    doc: str
    names: BitFieldNames
    mark: Mark
    name_mark: Mark

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1

    @property
    def msb(self) -> int:
        return self.lsb + self.bits - 1


@dataclass(frozen=True)
class Word:
    """A 32-bit word made of bit fields."""

    name: str
    doc: str
    sequence_follows: bool
    fields: tuple[BitField, ...]  # sorted by lsb
    names: WordNames
    mark: Mark

    @property
    def free_fields(self) -> tuple[BitField, ...]:
        """Fields a caller sets (everything but fixed markers)."""
        return tuple(f for f in self.fields if f.value is None)

    @property
    def fixed_fields(self) -> tuple[BitField, ...]:
        return tuple(f for f in self.fields if f.value is not None)

    @property
    def fixed_bits(self) -> int:
        bits = 0
        for f in self.fixed_fields:
            assert f.value is not None
            bits |= f.value << f.lsb
        return bits

    def formula(self) -> str:
        """``handler | flags << 8 | slot << 16`` (as the reference writes it)."""
        parts = []
        for f in self.fields:
            term = f"0x{f.value << f.lsb:08X}" if f.value is not None else f.name
            parts.append(term if f.lsb == 0 or f.value is not None else f"{term} << {f.lsb}")
        return " | ".join(parts)


@dataclass(frozen=True)
class StructField:
    """A field of a struct at a byte offset: a word, a copy of another field, or reserved bytes."""

    name: str
    offset: int
    count: int
    word: str | None
    copy_of: str | None
    reserved: bool
    doc: str
    names: StructFieldNames
    mark: Mark
    name_mark: Mark

    @property
    def size(self) -> int:
        return self.count * WORD_BYTES

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class StructArray:
    """Named fields read as one array (e.g. the ten argument words)."""

    name: str
    fields: tuple[str, ...]
    doc: str
    names: StructArrayNames
    mark: Mark
    name_mark: Mark


@dataclass(frozen=True)
class Struct:
    """A fixed-size struct of the layout, its fields sorted by offset."""

    name: str
    size: int
    doc: str
    fields: tuple[StructField, ...]  # sorted by offset
    arrays: tuple[StructArray, ...]
    names: StructNames
    mark: Mark
    landed_mark: Mark | None  # where the landing check is named

    def field(self, name: str) -> StructField:
        return next(f for f in self.fields if f.name == name)

    @property
    def copies(self) -> tuple[StructField, ...]:
        return tuple(f for f in self.fields if f.copy_of is not None)

    @property
    def copied(self) -> tuple[StructField, ...]:
        """Fields that have copies (the sequence of a command), in offset order."""
        names = {f.copy_of for f in self.copies}
        return tuple(f for f in self.fields if f.name in names)

    def copies_of(self, name: str) -> tuple[StructField, ...]:
        return tuple(f for f in self.copies if f.copy_of == name)

    @property
    def word_fields(self) -> tuple[StructField, ...]:
        return tuple(f for f in self.fields if f.word is not None)

    @property
    def array_fields(self) -> frozenset[str]:
        return frozenset(n for a in self.arrays for n in a.fields)

    @property
    def plain_fields(self) -> tuple[StructField, ...]:
        """Fields that are neither copied, copies, words, array members nor reserved."""
        skip = self.array_fields | {f.copy_of for f in self.copies}
        return tuple(
            f
            for f in self.fields
            if f.copy_of is None and f.word is None and not f.reserved and f.name not in skip
        )


@dataclass(frozen=True)
class TableEntry:
    """One entry of an index table: a named slot range and what each slot holds."""

    name: str
    index: int
    count: int
    per: str | None
    word: str | None
    reserved: bool
    doc: str
    names: TableEntryNames
    mark: Mark
    name_mark: Mark

    @property
    def last(self) -> int:
        return self.index + self.count - 1


@dataclass(frozen=True)
class Table:
    """Named word indices (state words, start-up arguments, ...)."""

    name: str
    prefix: str
    size: int
    doc: str
    entries: tuple[TableEntry, ...]  # sorted by index
    names: TableNames
    mark: Mark
    count_mark: Mark  # where the name of the table's size is written

    @property
    def named_entries(self) -> tuple[TableEntry, ...]:
        return tuple(e for e in self.entries if not e.reserved)


@dataclass(frozen=True)
class Region:
    """A region of a block at a byte offset: slots of a struct, a table, a word or reserved space."""

    name: str | None  # None for an anonymous reserved gap
    offset: int
    size: int
    slots: int | None
    struct: str | None
    table: str | None
    word: str | None
    reserved: bool
    doc: str
    names: RegionNames | None  # None for an anonymous gap
    mark: Mark
    name_mark: Mark

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def slot_bytes(self) -> int | None:
        return None if self.slots is None else self.size // self.slots


@dataclass(frozen=True)
class Block:
    """An aligned memory block of the layout, made of regions in offset order."""

    name: str
    prefix: str
    align: int
    size: int
    doc: str
    regions: tuple[Region, ...]  # in offset order (declaration order, checked)
    names: BlockNames
    mark: Mark

    @property
    def named_regions(self) -> tuple[Region, ...]:
        return tuple(r for r in self.regions if r.name is not None)


@dataclass(frozen=True)
class Layout:
    """One runtime layout spec: its ABI version, words, enums, structs, tables and blocks."""

    name: str
    file: str  # the source name generated headers print (SpecDocument.source)
    doc: str
    c_prefix: str  # as the spec writes it; the identifiers made from it are in names
    version: AbiVersion
    word_bits: int
    constants: tuple[Constant, ...]
    enums: tuple[Enum, ...]
    words: tuple[Word, ...]
    structs: tuple[Struct, ...]
    tables: tuple[Table, ...]
    blocks: tuple[Block, ...]
    names: LayoutNames
    mark: Mark
    cpp_namespace_mark: Mark  # where the spec chooses the C++ namespace
    python_package_mark: Mark  # and the Python package

    @property
    def word_bytes(self) -> int:
        return self.word_bits // 8

    def enum(self, name: str) -> Enum:
        return next(e for e in self.enums if e.name == name)

    def word(self, name: str) -> Word:
        return next(w for w in self.words if w.name == name)

    def struct(self, name: str) -> Struct:
        return next(s for s in self.structs if s.name == name)

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)


@dataclass(frozen=True)
class LayoutModel:
    """Every layout of the spec tree."""

    layouts: tuple[Layout, ...]  # sorted by name

    def find(self, name: str) -> Layout | None:
        return next((layout for layout in self.layouts if layout.name == name), None)


# --------------------------------------------------------------------------------------
# Building


def _hex(value: int) -> str:
    return f"0x{value:X}"


class _Builder:
    def __init__(self, doc: SpecDocument, sink: DiagnosticSink) -> None:
        self.doc = doc
        self.sink = sink
        self.data: dict[str, Any] = doc.data
        naming = self.data["naming"]
        self.c_prefix: str = naming["c_prefix"]
        self.namer = LayoutNamer(self.data["layout"], self.c_prefix, naming["cpp_namespace"], naming["python_package"])
        self.word_bits: int = self.data["word"]["bits"]

    # -- helpers --------------------------------------------------------------------
    def mark(self, *path: str | int) -> Mark:
        return self.doc.mark(tuple(path))

    def key_mark(self, *path: str | int) -> Mark:
        return self.doc.key_mark(tuple(path))

    def error(self, mark: Mark, message: str) -> None:
        self.sink.error(mark, message)

    def in_word(self, value: int, *path: str | int) -> int:
        """``value``, an offset, size, count or index of the layout: the generated C and C++
        give each a word's unsigned type (a ``u`` literal, ``std::uint32_t``) and the Python
        codec a word, so one that needs more bits is a located error."""
        top = (1 << self.word_bits) - 1
        if value > top:
            self.error(
                self.mark(*path),
                f"{_hex(value)} does not fit in a {self.word_bits}-bit word (at most {_hex(top)}): the generated C, C++ "
                "and Python hold every offset, size, count and index of the layout in one",
            )
        return value

    def unique(self, items: Iterable[tuple[str, Mark]], what: str) -> None:
        seen: dict[str, Mark] = {}
        for name, mark in items:
            if name in seen:
                self.error(mark, f"duplicate {what} name {name!r} (first declared at {seen[name]})")
            else:
                seen[name] = mark

    # -- build ----------------------------------------------------------------------
    def build(self) -> Layout:
        d = self.data
        constants = self.constants()
        enums = self.enums()
        tables_raw = d.get("tables", {})
        blocks = self.blocks(d.get("blocks", {}))
        regions = {r.name: r for b in blocks for r in b.regions if r.name is not None}
        words = self.words(d.get("words", {}), {e.name: e for e in enums}, regions)
        structs = self.structs(d.get("structs", {}), {w.name for w in words})
        tables = self.tables(tables_raw, {w.name: w for w in words}, regions)
        self.check_region_contents(blocks, {s.name: s for s in structs}, {t.name: t for t in tables}, {w.name for w in words})
        return Layout(
            name=d["layout"],
            file=self.doc.source,
            doc=d.get("doc", ""),
            c_prefix=self.c_prefix,
            version=AbiVersion(
                d["abi_version"]["major"], d["abi_version"]["minor"], self.namer.version(), self.mark("abi_version")
            ),
            word_bits=d["word"]["bits"],
            constants=constants,
            enums=enums,
            words=words,
            structs=structs,
            tables=tables,
            blocks=blocks,
            names=self.namer.layout_names(),
            mark=self.mark(),
            cpp_namespace_mark=self.mark("naming", "cpp_namespace"),
            python_package_mark=self.mark("naming", "python_package"),
        )

    def constants(self) -> tuple[Constant, ...]:
        out = []
        for i, raw in enumerate(self.data.get("constants", [])):
            mark = self.mark("constants", i, "name")
            converter = raw.get("converter")
            if converter is not None and raw["value"] == 0:
                self.error(self.mark("constants", i, "value"), f"constant {raw['name']!r} is a unit of time and cannot be 0")
            out.append(Constant(raw["name"], raw["value"], raw.get("doc", ""), self.namer.constant(raw["name"], converter), converter, mark))
        self.unique(((c.name, c.mark) for c in out), "constant")
        return tuple(out)

    def enums(self) -> tuple[Enum, ...]:
        return tuple(self.enum(name, raw) for name, raw in sorted(self.data.get("enums", {}).items()))

    def enum(self, name: str, raw: dict[str, Any]) -> Enum:
        base = ("enums", name)
        prefix: str = raw["prefix"]
        bits: int = raw["bits"]
        flags: bool = raw.get("flags", False)
        top = (1 << bits) - 1
        values: list[EnumValue] = []
        for i, v in enumerate(raw["values"]):
            mark = self.mark(*base, "values", i, "value")
            vname = v.get("name")
            value = v["value"]
            if value > top:
                self.error(mark, f"value {value} of enum {name!r} is out of its range 0..{top} ({bits} bits)")
            if flags and vname is not None and (value == 0 or value & (value - 1)):
                self.error(mark, f"flag {vname!r} has value {value}, which is not a single bit")
            names = self.namer.enum_value(prefix, vname) if vname is not None else None
            name_mark = self.mark(*base, "values", i, "name") if vname is not None else mark
            values.append(
                EnumValue(vname, value, v.get("display", vname if vname is not None else "-"), v.get("doc", ""), names, mark, name_mark)
            )
        self.unique(((v.name, v.name_mark) for v in values if v.name is not None), f"enum {name!r} value")
        seen_values: dict[int, EnumValue] = {}
        for v in values:
            if v.value in seen_values:
                self.error(v.mark, f"value {v.value} of enum {name!r} is already taken by {seen_values[v.value].display!r}")
            else:
                seen_values[v.value] = v
        ranges: list[EnumRange] = []
        for i, r in enumerate(raw.get("ranges", [])):
            mark = self.mark(*base, "ranges", i)
            first, last = r["first"], r["last"]
            if first > last:
                self.error(self.mark(*base, "ranges", i, "last"), f"range {r['name']!r} ends at {last}, before its first value {first}")
            if last > top:
                self.error(self.mark(*base, "ranges", i, "last"), f"range {r['name']!r} ({first}..{last}) is out of the range 0..{top} of enum {name!r} ({bits} bits)")
            for v in values:
                if first <= v.value <= last:
                    self.error(mark, f"range {r['name']!r} ({first}..{last}) contains value {v.value} ({v.display!r})")
            range_names = self.namer.enum_range(prefix, r["name"])
            ranges.append(EnumRange(r["name"], first, last, r.get("doc", ""), range_names, mark, self.mark(*base, "ranges", i, "name")))
        self.unique(((r.name, r.mark) for r in ranges), f"enum {name!r} range")
        ordered = sorted(ranges, key=lambda r: r.first)
        for a, b in pairwise(ordered):
            if b.first <= a.last:
                self.error(b.mark, f"range {b.name!r} ({b.first}..{b.last}) overlaps range {a.name!r} ({a.first}..{a.last})")
        return Enum(
            name=name,
            prefix=prefix,
            bits=bits,
            flags=flags,
            doc=raw.get("doc", ""),
            values=tuple(sorted(values, key=lambda v: v.value)),
            ranges=tuple(ordered),
            names=self.namer.enum(name),
            mark=self.key_mark(*base),
        )

    def words(self, raw_words: dict[str, Any], enums: dict[str, Enum], regions: dict[str, Region]) -> tuple[Word, ...]:
        out = []
        for name, raw in sorted(raw_words.items()):
            base = ("words", name)
            fields: list[BitField] = []
            for i, f in enumerate(raw["fields"]):
                fmark = self.mark(*base, "fields", i)
                lsb, bits = f["lsb"], f["bits"]
                if lsb + bits > self.word_bits:
                    self.error(
                        self.mark(*base, "fields", i, "bits"),
                        f"bit field {f['name']!r} (bits {lsb}..{lsb + bits - 1}) overflows its {self.word_bits}-bit word",
                    )
                limit = 1 << bits
                enum_name = f.get("enum")
                if enum_name is not None:
                    enum = enums.get(enum_name)
                    if enum is None:
                        self.error(self.mark(*base, "fields", i, "enum"), f"unknown enum {enum_name!r}; known: {', '.join(sorted(enums)) or 'none'}")
                    elif enum.bits > bits:
                        self.error(
                            self.mark(*base, "fields", i, "enum"),
                            f"enum {enum_name!r} needs {enum.bits} bits but field {f['name']!r} has {bits}",
                        )
                indexes = f.get("indexes")
                if indexes is not None:
                    region = regions.get(indexes)
                    if region is None or region.slots is None:
                        self.error(self.mark(*base, "fields", i, "indexes"), f"{indexes!r} is not a region with slots")
                    elif region.slots > limit:
                        self.error(self.mark(*base, "fields", i, "indexes"), f"region {indexes!r} has {region.slots} slots, more than {bits} bits can index")
                    else:
                        limit = region.slots
                value = f.get("value")
                if value is not None and value >= (1 << bits):
                    self.error(self.mark(*base, "fields", i, "value"), f"value {_hex(value)} does not fit in the {bits} bits of field {f['name']!r}")
                names = self.namer.bit_field(name, f["name"], fixed=value is not None, enum=enum_name is not None)
                fields.append(
                    BitField(f["name"], lsb, bits, enum_name, indexes, limit, value, f.get("doc", ""), names, fmark, self.mark(*base, "fields", i, "name"))
                )
            self.unique(((f.name, f.mark) for f in fields), f"bit field of word {name!r}")
            ordered = sorted(fields, key=lambda f: f.lsb)
            for a, b in pairwise(ordered):
                if b.lsb <= a.msb:
                    self.error(b.mark, f"bit field {b.name!r} (bits {b.lsb}..{b.msb}) overlaps {a.name!r} (bits {a.lsb}..{a.msb})")
            out.append(Word(name, raw.get("doc", ""), raw.get("sequence_follows", False), tuple(ordered), self.namer.word(name), self.key_mark(*base)))
        return tuple(out)

    def structs(self, raw_structs: dict[str, Any], words: set[str]) -> tuple[Struct, ...]:
        out = []
        for name, raw in sorted(raw_structs.items()):
            base = ("structs", name)
            size = self.in_word(raw["size"], *base, "size")
            fields: list[StructField] = []
            for i, f in enumerate(raw["fields"]):
                offset = self.in_word(f["offset"], *base, "fields", i, "offset")
                omark = self.mark(*base, "fields", i, "offset")
                if offset % WORD_BYTES:
                    self.error(omark, f"field {f['name']!r} at byte {offset} is not on a {WORD_BYTES}-byte word boundary")
                word = f.get("word")
                if word is not None and word not in words:
                    self.error(self.mark(*base, "fields", i, "word"), f"unknown word {word!r}; known: {', '.join(sorted(words)) or 'none'}")
                fields.append(
                    StructField(
                        f["name"], offset, self.in_word(f.get("count", 1), *base, "fields", i, "count"), word, f.get("copy_of"), f.get("reserved", False), f.get("doc", ""),
                        self.namer.struct_field(name, f["name"]), omark, self.mark(*base, "fields", i, "name"),
                    )
                )
            self.unique(((f.name, f.name_mark) for f in fields), f"field of struct {name!r}")
            by_name = {f.name: f for f in fields}
            for i, f in enumerate(fields):
                if f.copy_of is not None:
                    target = by_name.get(f.copy_of)
                    if target is None or target.copy_of is not None:
                        self.error(self.mark(*base, "fields", i, "copy_of"), f"{f.copy_of!r} is not a field of struct {name!r} that can be copied")
                    elif target.count != f.count:
                        self.error(self.mark(*base, "fields", i, "copy_of"), f"copy {f.name!r} has {f.count} words but {f.copy_of!r} has {target.count}")
            ordered = sorted(fields, key=lambda f: f.offset)
            position = 0
            previous: StructField | None = None
            for f in ordered:
                if f.offset < position and previous is not None:
                    self.error(
                        f.mark,
                        f"field {f.name!r} (bytes {f.offset}..{f.end - 1}) overlaps {previous.name!r} (bytes {previous.offset}..{previous.end - 1})",
                    )
                elif f.offset > position:
                    self.error(f.mark, f"undeclared gap at bytes {position}..{f.offset - 1} before field {f.name!r}; declare a reserved field there")
                if f.end > position:
                    position, previous = f.end, f
            if position > size:
                self.error(self.mark(*base, "size"), f"struct {name!r} is declared {size} bytes but its fields end at byte {position}")
            elif position < size:
                self.error(self.mark(*base, "size"), f"undeclared gap at bytes {position}..{size - 1} at the end of struct {name!r}; declare a reserved field there")
            arrays: list[StructArray] = []
            for i, a in enumerate(raw.get("arrays", [])):
                amark = self.mark(*base, "arrays", i)
                for j, member in enumerate(a["fields"]):
                    if member not in by_name:
                        self.error(self.mark(*base, "arrays", i, "fields", j), f"{member!r} is not a field of struct {name!r}")
                if len(set(a["fields"])) != len(a["fields"]):
                    self.error(self.mark(*base, "arrays", i, "fields"), f"array {a['name']!r} names a field twice")
                names = self.namer.struct_array(name, a["name"])
                arrays.append(StructArray(a["name"], tuple(a["fields"]), a.get("doc", ""), names, amark, self.mark(*base, "arrays", i, "name")))
            self.unique(((a.name, a.mark) for a in arrays), f"array of struct {name!r}")
            landed: str | None = raw.get("landed")
            landed_mark = None
            if landed is not None:
                landed_mark = self.mark(*base, "landed")
                if not any(f.copy_of is not None for f in fields):
                    self.error(landed_mark, f"struct {name!r} names a landing check but has no copy_of fields")
            out.append(
                Struct(
                    name, size, raw.get("doc", ""), tuple(ordered), tuple(arrays), self.namer.struct(name, landed),
                    self.key_mark(*base), landed_mark,
                )
            )
        return tuple(out)

    def tables(self, raw_tables: dict[str, Any], words: dict[str, Word], regions: dict[str, Region]) -> tuple[Table, ...]:
        out = []
        for name, raw in sorted(raw_tables.items()):
            base = ("tables", name)
            prefix: str = raw["prefix"]
            size = self.in_word(raw["size"], *base, "size")
            entries: list[TableEntry] = []
            for i, e in enumerate(raw["entries"]):
                emark = self.mark(*base, "entries", i, "index")
                count = self.in_word(e.get("count", 1), *base, "entries", i, "count")
                index = self.in_word(e["index"], *base, "entries", i, "index")
                if index + count > size:
                    self.error(emark, f"entry {e['name']!r} (words {index}..{index + count - 1}) is out of table {name!r} of {size} words")
                per = e.get("per")
                if per is not None:
                    region = regions.get(per)
                    if region is None or region.slots is None:
                        self.error(self.mark(*base, "entries", i, "per"), f"{per!r} is not a region with slots")
                    elif region.slots != count:
                        self.error(self.mark(*base, "entries", i, "count"), f"entry {e['name']!r} has {count} words but region {per!r} has {region.slots} slots")
                word = e.get("word")
                if word is not None:
                    w = words.get(word)
                    if w is None:
                        self.error(self.mark(*base, "entries", i, "word"), f"unknown word {word!r}; known: {', '.join(sorted(words)) or 'none'}")
                    else:
                        wanted = 2 if w.sequence_follows else 1
                        if count != wanted:
                            self.error(emark, f"entry {e['name']!r} holds word {word!r}, which takes {wanted} word(s), but has {count}")
                entries.append(
                    TableEntry(
                        e["name"], index, count, per, word, e.get("reserved", False), e.get("doc", ""),
                        self.namer.table_entry(prefix, e["name"]), emark, self.mark(*base, "entries", i, "name"),
                    )
                )
            self.unique(((e.name, e.mark) for e in entries), f"entry of table {name!r}")
            ordered = sorted(entries, key=lambda e: e.index)
            for a, b in pairwise(ordered):
                if b.index <= a.last:
                    self.error(b.mark, f"entry {b.name!r} (words {b.index}..{b.last}) overlaps {a.name!r} (words {a.index}..{a.last})")
            names = self.namer.table(name, raw["count_name"])
            out.append(Table(name, prefix, size, raw.get("doc", ""), tuple(ordered), names, self.key_mark(*base), self.mark(*base, "count_name")))
        return tuple(out)

    def blocks(self, raw_blocks: dict[str, Any]) -> tuple[Block, ...]:
        out = []
        for name, raw in sorted(raw_blocks.items()):
            base = ("blocks", name)
            prefix: str = raw["prefix"]
            align = self.in_word(raw["align"], *base, "align")
            regions: list[Region] = []
            computed = 0
            previous: Region | None = None
            previous_label = ""
            for i, r in enumerate(raw["regions"]):
                rpath: KeyPath = (*base, "regions", i)
                rname = r.get("name")
                label = repr(rname) if rname is not None else f"[{i}] (reserved)"
                offset, size = self.in_word(r["offset"], *rpath, "offset"), self.in_word(r["size"], *rpath, "size")
                omark = self.mark(*rpath, "offset")
                if offset % align:
                    self.error(omark, f"region {label} at {_hex(offset)} is not {align}-byte aligned")
                if size % align:
                    self.error(self.mark(*rpath, "size"), f"size {_hex(size)} of region {label} is not a multiple of {align} bytes")
                if offset != computed:
                    after = f"the end of region {previous_label}" if previous is not None else "the start of the block"
                    if offset > computed:
                        what = f"an undeclared gap of {offset - computed} bytes at {_hex(computed)}..{_hex(offset - 1)}; declare a reserved region there"
                    else:
                        what = f"an overlap of {computed - offset} bytes with the region before it"
                    self.error(
                        omark,
                        f"declared offset {_hex(offset)} of region {label} disagrees with the computed offset {_hex(computed)} ({after}): {what}",
                    )
                slots = r.get("slots")
                if slots is not None:
                    self.in_word(slots, *rpath, "slots")
                    if size % slots:
                        self.error(self.mark(*rpath, "slots"), f"size {_hex(size)} of region {label} is not a whole number of {slots} slots")
                reserved = r.get("reserved", False)
                names = self.namer.region(prefix, rname, slotted=slots is not None) if rname is not None else None
                region = Region(
                    rname, offset, size, slots, r.get("struct"), r.get("table"), r.get("word"), reserved,
                    r.get("doc", ""), names, omark, self.mark(*rpath, "name") if rname is not None else omark,
                )
                regions.append(region)
                computed = offset + size
                previous, previous_label = region, label
            if self.in_word(raw["size"], *base, "size") != computed:
                self.error(
                    self.mark(*base, "size"),
                    f"declared size {_hex(raw['size'])} of block {name!r} disagrees with the end of its last region, {_hex(computed)}",
                )
            self.unique(((r.name, r.mark) for r in regions if r.name is not None), f"region of block {name!r}")
            out.append(Block(name, prefix, align, raw["size"], raw.get("doc", ""), tuple(regions), self.namer.block(prefix), self.key_mark(*base)))
        return tuple(out)

    def check_region_contents(
        self, blocks: Sequence[Block], structs: dict[str, Struct], tables: dict[str, Table], words: set[str]
    ) -> None:
        for block in blocks:
            for i, region in enumerate(block.regions):
                rpath: KeyPath = ("blocks", block.name, "regions", i)
                label = repr(region.name)
                slots = region.slots or 1
                slot_bytes = region.size // slots
                if region.struct is not None:
                    struct = structs.get(region.struct)
                    if struct is None:
                        self.error(self.mark(*rpath, "struct"), f"unknown struct {region.struct!r}; known: {', '.join(sorted(structs)) or 'none'}")
                    elif struct.size != slot_bytes:
                        self.error(self.mark(*rpath, "size"), f"region {label} holds {slots} x struct {region.struct!r} of {struct.size} bytes, but each slot has {slot_bytes} bytes")
                if region.table is not None:
                    table = tables.get(region.table)
                    if table is None:
                        self.error(self.mark(*rpath, "table"), f"unknown table {region.table!r}; known: {', '.join(sorted(tables)) or 'none'}")
                    elif table.size * WORD_BYTES != slot_bytes:
                        self.error(self.mark(*rpath, "size"), f"region {label} holds {slots} x table {region.table!r} of {table.size * WORD_BYTES} bytes, but each slot has {slot_bytes} bytes")
                if region.word is not None:
                    if region.word not in words:
                        self.error(self.mark(*rpath, "word"), f"unknown word {region.word!r}; known: {', '.join(sorted(words)) or 'none'}")
                    elif slot_bytes != WORD_BYTES:
                        self.error(self.mark(*rpath, "size"), f"region {label} holds one word per slot, but each slot has {slot_bytes} bytes")


def build(documents: Sequence[SpecDocument], sink: DiagnosticSink) -> LayoutModel:
    """Build every ``ttlgen.layout`` document; semantic errors go to ``sink``."""
    layouts: dict[str, Layout] = {}
    for doc in documents:
        if doc.kind != KIND:
            continue
        layout = _Builder(doc, sink).build()
        if layout.name in layouts:
            sink.error(doc.mark(("layout",)), f"duplicate layout name {layout.name!r} (also in {layouts[layout.name].mark.file})")
            continue
        layouts[layout.name] = layout
    return LayoutModel(tuple(layouts[n] for n in sorted(layouts)))
