"""Compare two versions of a layout, thing by thing, and say who each change breaks.

Wire: a peer built from the other version reads different bytes: a size, offset, bit
position or width, alignment, enum or flag value, region, table index or constant changes,
or something is removed. Source: the bytes are the same but the generated names are not:
a rename (found by :mod:`ttlgen.compat.matching`), a new prefix, a printed name. Compatible:
an addition (a constant, an enum value, a field in reserved bits or bytes, a struct).
Documentation changes are not compared.
"""

from __future__ import annotations

from collections.abc import Sequence

from ttlgen.compat.changes import Area, Change, Impact, Location
from ttlgen.compat.matching import match
from ttlgen.compat.sides import Side
from ttlgen.errors import Mark
from ttlgen.model.layout import (
    BitField,
    Block,
    Constant,
    Enum,
    Layout,
    Region,
    Struct,
    StructArray,
    StructField,
    Table,
    TableEntry,
    Word,
)


def _bits(f: BitField) -> str:
    return f"bits {f.lsb}..{f.msb}" if f.bits > 1 else f"bit {f.lsb}"


def _bytes(offset: int, size: int) -> str:
    return f"bytes {offset}..{offset + size - 1}"


def _hex(value: int) -> str:
    return f"0x{value:X}"


def _entry_words(e: TableEntry) -> str:
    return f"word {e.index}" if e.count == 1 else f"words {e.index}..{e.last}"


class LayoutDiff:
    """The changes from ``old`` to ``new`` (two versions of one layout)."""

    def __init__(self, old_side: Side, new_side: Side, old: Layout, new: Layout) -> None:
        self.old_side, self.new_side = old_side, new_side
        self.old, self.new = old, new
        self.changes: list[Change] = []

    # -- recording --------------------------------------------------------------------
    def _add(
        self, impact: Impact, kind: str, subject: str, message: str, before: Location | None, after: Location | None
    ) -> None:
        self.changes.append(Change(Area.LAYOUT, impact, kind, subject, message, before, after, layout=self.new.name))

    def changed(self, impact: Impact, kind: str, subject: str, message: str, old: Mark, new: Mark, key: str | None = None) -> None:
        self._add(impact, kind, subject, message, self.old_side.locate(old, key), self.new_side.locate(new, key))

    def removed(self, kind: str, subject: str, old: Mark, message: str = "removed") -> None:
        self._add(Impact.WIRE, kind, subject, message, self.old_side.node(old), None)

    def added(self, kind: str, subject: str, new: Mark, message: str) -> None:
        self._add(Impact.COMPATIBLE, kind, subject, message, None, self.new_side.node(new))

    def renamed(self, kind: str, subject: str, old: Mark, new: Mark, new_name: str, place: str) -> None:
        self._add(
            Impact.SOURCE, kind, subject, f"renamed to {new_name!r} ({place} unchanged)", self.old_side.node(old), self.new_side.node(new)
        )

    # -- the layout -------------------------------------------------------------------
    def run(self) -> list[Change]:
        old, new = self.old, self.new
        naming = (
            ("c_prefix", "C prefix", old.c_prefix, new.c_prefix),
            ("cpp_namespace", "C++ namespace", old.names.cpp_namespace, new.names.cpp_namespace),
            ("python_package", "Python package", old.names.py_package, new.names.py_package),
        )
        for key, what, before, after in naming:
            if before != after:
                self._add(
                    Impact.SOURCE, "naming", f"the {what} of layout {new.name!r}", f"{before} -> {after}: every generated name changes",
                    self.old_side.at(old.file, ("naming", key)), self.new_side.at(new.file, ("naming", key)),
                )
        self.constants(old.constants, new.constants)
        self.enums(old.enums, new.enums)
        self.words(old.words, new.words)
        self.structs(old.structs, new.structs)
        self.tables(old.tables, new.tables)
        self.blocks(old.blocks, new.blocks)
        return self.changes

    def constants(self, old: Sequence[Constant], new: Sequence[Constant]) -> None:
        pairs = match(old, new, lambda c: c.name, lambda c: (c.value, c.converter))
        for o, n in pairs.common:
            subject = f"constant {n.name!r}"
            if o.value != n.value:
                self.changed(Impact.WIRE, "constant-value", subject, f"value {o.value} -> {n.value}", o.mark, n.mark, "value")
            if o.converter != n.converter:
                self.changed(
                    Impact.SOURCE, "constant-converter", subject, f"converter {o.converter or 'none'} -> {n.converter or 'none'}",
                    o.mark, n.mark, "converter",
                )
        for o, n in pairs.renamed:
            self.renamed("constant-renamed", f"constant {o.name!r}", o.mark, n.mark, n.name, f"value {o.value}")
        for o in pairs.removed:
            self.removed("constant-removed", f"constant {o.name!r}", o.mark)
        for n in pairs.added:
            self.added("constant-added", f"constant {n.name!r}", n.mark, f"new constant, value {n.value}")

    # -- enumerations -----------------------------------------------------------------
    def enums(self, old: Sequence[Enum], new: Sequence[Enum]) -> None:
        def place(e: Enum) -> object:
            return (e.bits, e.flags, tuple((v.name, v.value) for v in e.named_values), tuple((r.name, r.first, r.last) for r in e.ranges))

        pairs = match(old, new, lambda e: e.name, place)
        for o, n in pairs.common:
            self.enum(o, n)
        for o, n in pairs.renamed:
            self.renamed("enum-renamed", f"enum {o.name!r}", o.mark, n.mark, n.name, "values")
        for o in pairs.removed:
            self.removed("enum-removed", f"enum {o.name!r}", o.mark)
        for n in pairs.added:
            self.added("enum-added", f"enum {n.name!r}", n.mark, f"new enum of {len(n.named_values)} values")

    def enum(self, o: Enum, n: Enum) -> None:
        subject = f"enum {n.name!r}"
        if o.prefix != n.prefix:
            self.changed(Impact.SOURCE, "enum-prefix", subject, f"prefix {o.prefix} -> {n.prefix}: its values' names change", o.mark, n.mark, "prefix")
        if o.bits != n.bits:
            self.changed(Impact.WIRE, "enum-width", subject, f"width {o.bits} -> {n.bits} bits", o.mark, n.mark, "bits")
        if o.flags != n.flags:
            what = "flags (values combine)" if n.flags else "plain values (no longer flags)"
            self.changed(Impact.WIRE, "enum-flags", subject, f"now {what}", o.mark, n.mark, "flags")
        values = match(o.named_values, n.named_values, lambda v: v.name or "", lambda v: v.value)
        word = "flag" if n.flags else "value"
        for ov, nv in values.common:
            of = f"{word} {nv.name!r} of enum {n.name!r}"
            if ov.value != nv.value:
                self.changed(Impact.WIRE, "enum-value", of, f"value {ov.value} -> {nv.value}", ov.mark, nv.mark)
            if ov.display != nv.display:
                self.changed(Impact.SOURCE, "enum-display", of, f"printed {ov.display!r} -> {nv.display!r}", ov.mark, nv.mark, "display")
        for ov, nv in values.renamed:
            self.renamed("enum-value-renamed", f"{word} {ov.name!r} of enum {n.name!r}", ov.mark, nv.mark, nv.name or "", f"value {ov.value}")
        for ov in values.removed:
            self.removed("enum-value-removed", f"{word} {ov.name!r} of enum {n.name!r}", ov.mark, f"removed (value {ov.value})")
        for nv in values.added:
            free = "a reserved value" if any(r.value == nv.value for r in o.values if r.reserved) else "a free value"
            self.added("enum-value-added", f"{word} {nv.name!r} of enum {n.name!r}", nv.mark, f"new {word} {nv.value} ({free})")
        ranges = match(o.ranges, n.ranges, lambda r: r.name, lambda r: (r.first, r.last))
        for orng, nrng in ranges.common:
            if (orng.first, orng.last) != (nrng.first, nrng.last):
                self.changed(
                    Impact.WIRE, "enum-range", f"range {nrng.name!r} of enum {n.name!r}",
                    f"{orng.first}..{orng.last} -> {nrng.first}..{nrng.last}", orng.mark, nrng.mark,
                )
        for orng, nrng in ranges.renamed:
            self.renamed("enum-range-renamed", f"range {orng.name!r} of enum {n.name!r}", orng.mark, nrng.mark, nrng.name, f"{orng.first}..{orng.last}")
        for orng in ranges.removed:
            self.removed("enum-range-removed", f"range {orng.name!r} of enum {n.name!r}", orng.mark)
        for nrng in ranges.added:
            self.added("enum-range-added", f"range {nrng.name!r} of enum {n.name!r}", nrng.mark, f"new range {nrng.first}..{nrng.last}")

    # -- words of bit fields ----------------------------------------------------------
    def words(self, old: Sequence[Word], new: Sequence[Word]) -> None:
        def place(w: Word) -> object:
            return (w.sequence_follows, tuple((f.lsb, f.bits, f.enum, f.value) for f in w.fields))

        pairs = match(old, new, lambda w: w.name, place)
        for o, n in pairs.common:
            self.word(o, n)
        for o, n in pairs.renamed:
            self.renamed("word-renamed", f"word {o.name!r}", o.mark, n.mark, n.name, "bit fields")
        for o in pairs.removed:
            self.removed("word-removed", f"word {o.name!r}", o.mark)
        for n in pairs.added:
            self.added("word-added", f"word {n.name!r}", n.mark, f"new word of {len(n.fields)} bit fields")

    def word(self, o: Word, n: Word) -> None:
        if o.sequence_follows != n.sequence_follows:
            what = "now followed by a sequence word" if n.sequence_follows else "no longer followed by a sequence word"
            self.changed(Impact.WIRE, "word-sequence", f"word {n.name!r}", what, o.mark, n.mark, "sequence_follows")
        fields = match(o.fields, n.fields, lambda f: f.name, lambda f: (f.lsb, f.bits, f.value is None))
        for of, nf in fields.common:
            subject = f"bit field {nf.name!r} of word {n.name!r}"
            if of.lsb != nf.lsb:
                self.changed(Impact.WIRE, "bit-position", subject, f"{_bits(of)} -> {_bits(nf)}", of.mark, nf.mark, "lsb")
            if of.bits != nf.bits:
                self.changed(Impact.WIRE, "bit-width", subject, f"width {of.bits} -> {nf.bits} bits ({_bits(of)} -> {_bits(nf)})", of.mark, nf.mark, "bits")
            if of.enum != nf.enum:
                self.changed(Impact.WIRE, "bit-field-enum", subject, f"holds enum {of.enum or 'none'} -> {nf.enum or 'none'}", of.mark, nf.mark, "enum")
            if of.indexes != nf.indexes or (of.indexes is not None and of.limit != nf.limit):
                self.changed(
                    Impact.WIRE, "bit-field-indexes", subject,
                    f"indexes {of.indexes or 'nothing'} (below {of.limit}) -> {nf.indexes or 'nothing'} (below {nf.limit})",
                    of.mark, nf.mark, "indexes",
                )
            if of.value != nf.value:
                before = "free" if of.value is None else _hex(of.value)
                after = "free" if nf.value is None else _hex(nf.value)
                self.changed(Impact.WIRE, "bit-field-marker", subject, f"fixed value {before} -> {after}", of.mark, nf.mark, "value")
        for of, nf in fields.renamed:
            self.renamed("bit-field-renamed", f"bit field {of.name!r} of word {n.name!r}", of.mark, nf.mark, nf.name, _bits(of))
        for of in fields.removed:
            self.removed("bit-field-removed", f"bit field {of.name!r} of word {n.name!r}", of.mark, f"removed ({_bits(of)})")
        for nf in fields.added:
            self.added("bit-field-added", f"bit field {nf.name!r} of word {n.name!r}", nf.mark, f"new field in reserved {_bits(nf)}")

    # -- structs ----------------------------------------------------------------------
    def structs(self, old: Sequence[Struct], new: Sequence[Struct]) -> None:
        def place(s: Struct) -> object:
            return (s.size, tuple((f.offset, f.count, f.word, f.reserved) for f in s.fields))

        pairs = match(old, new, lambda s: s.name, place)
        for o, n in pairs.common:
            self.struct(o, n)
        for o, n in pairs.renamed:
            self.renamed("struct-renamed", f"struct {o.name!r}", o.mark, n.mark, n.name, "fields")
        for o in pairs.removed:
            self.removed("struct-removed", f"struct {o.name!r}", o.mark)
        for n in pairs.added:
            self.added("struct-added", f"struct {n.name!r}", n.mark, f"new struct of {n.size} bytes")

    def struct(self, o: Struct, n: Struct) -> None:
        subject = f"struct {n.name!r}"
        if o.size != n.size:
            self.changed(Impact.WIRE, "struct-size", subject, f"size {o.size} -> {n.size} bytes", o.mark, n.mark, "size")
        reserved = {b for f in o.fields if f.reserved for b in range(f.offset, f.end)}
        old_named = [f for f in o.fields if not f.reserved]
        new_named = [f for f in n.fields if not f.reserved]
        fields = match(old_named, new_named, lambda f: f.name, lambda f: (f.offset, f.count, f.word))
        for of, nf in fields.common:
            self.struct_field(n, of, nf)
        for of, nf in fields.renamed:
            self.renamed("field-renamed", f"field {of.name!r} of struct {n.name!r}", of.mark, nf.mark, nf.name, _bytes(of.offset, of.size))
        for of in fields.removed:
            kept = next((f for f in n.fields if f.name == of.name), None)
            what = "now reserved" if kept is not None and kept.reserved else "removed"
            self.removed("field-removed", f"field {of.name!r} of struct {n.name!r}", of.mark, f"{what} ({_bytes(of.offset, of.size)})")
        for nf in fields.added:
            span = set(range(nf.offset, nf.end))
            where = "reserved" if span <= reserved else "new" if nf.offset >= o.size else "reused"
            self.added("field-added", f"field {nf.name!r} of struct {n.name!r}", nf.mark, f"new field in {where} {_bytes(nf.offset, nf.size)}")
        # An array names fields; a field's own move or rename is reported with the field, so
        # the array changed only if it names other fields (a renamed one counts as the same).
        old_name = {nf.name: of.name for of, nf in fields.renamed}

        def members(a: StructArray, side: Struct) -> tuple[str, ...]:
            return a.fields if side is o else tuple(old_name.get(m, m) for m in a.fields)

        named = {id(a): members(a, o) for a in o.arrays} | {id(a): members(a, n) for a in n.arrays}
        arrays = match(o.arrays, n.arrays, lambda a: a.name, lambda a: named[id(a)])
        for oa, na in arrays.common:
            old_members, new_members = members(oa, o), members(na, n)
            if old_members == new_members:
                continue
            shown = f"[{', '.join(oa.fields)}] -> [{', '.join(na.fields)}]"
            if new_members[: len(old_members)] == old_members:  # new elements after the old ones: old indices keep their words
                self.changed(Impact.COMPATIBLE, "array-grown", f"array {na.name!r} of struct {n.name!r}", shown, oa.mark, na.mark, "fields")
            else:
                self.changed(Impact.WIRE, "array-members", f"array {na.name!r} of struct {n.name!r}", shown, oa.mark, na.mark, "fields")
        for oa, na in arrays.renamed:
            self.renamed("array-renamed", f"array {oa.name!r} of struct {n.name!r}", oa.mark, na.mark, na.name, "members")
        for oa in arrays.removed:
            self._add(
                Impact.SOURCE, "array-removed", f"array {oa.name!r} of struct {n.name!r}",
                f"removed: its C accessors {oa.names.c_get} and {oa.names.c_set} are gone", self.old_side.node(oa.mark), None,
            )
        for na in arrays.added:
            self.added("array-added", f"array {na.name!r} of struct {n.name!r}", na.mark, f"new array of {len(na.fields)} fields")
        if o.names.c_landed != n.names.c_landed:
            before, after = o.landed_mark or o.mark, n.landed_mark or n.mark
            self.changed(
                Impact.SOURCE, "landed-check", subject, f"landing check {o.names.c_landed or 'none'} -> {n.names.c_landed or 'none'}",
                before, after,
            )

    def struct_field(self, s: Struct, of: StructField, nf: StructField) -> None:
        subject = f"field {nf.name!r} of struct {s.name!r}"
        if of.offset != nf.offset:
            self.changed(Impact.WIRE, "field-offset", subject, f"offset {of.offset} -> {nf.offset}", of.mark, nf.mark)
        if of.count != nf.count:
            self.changed(Impact.WIRE, "field-size", subject, f"size {of.size} -> {nf.size} bytes", of.mark, nf.mark, "count")
        if of.word != nf.word:
            self.changed(Impact.WIRE, "field-word", subject, f"holds word {of.word or 'none'} -> {nf.word or 'none'}", of.mark, nf.mark, "word")
        if of.copy_of != nf.copy_of:
            self.changed(
                Impact.WIRE, "field-copy", subject, f"copy of {of.copy_of or 'nothing'} -> {nf.copy_of or 'nothing'}", of.mark, nf.mark, "copy_of"
            )

    # -- tables of word indices -------------------------------------------------------
    def tables(self, old: Sequence[Table], new: Sequence[Table]) -> None:
        def place(t: Table) -> object:
            return (t.size, tuple((e.index, e.count, e.reserved) for e in t.entries))

        pairs = match(old, new, lambda t: t.name, place)
        for o, n in pairs.common:
            self.table(o, n)
        for o, n in pairs.renamed:
            self.renamed("table-renamed", f"table {o.name!r}", o.mark, n.mark, n.name, "entries")
        for o in pairs.removed:
            self.removed("table-removed", f"table {o.name!r}", o.mark)
        for n in pairs.added:
            self.added("table-added", f"table {n.name!r}", n.mark, f"new table of {n.size} words")

    def table(self, o: Table, n: Table) -> None:
        subject = f"table {n.name!r}"
        if o.prefix != n.prefix:
            self.changed(Impact.SOURCE, "table-prefix", subject, f"prefix {o.prefix} -> {n.prefix}: its entries' names change", o.mark, n.mark, "prefix")
        if o.names.size != n.names.size:
            self.changed(Impact.SOURCE, "table-count-name", subject, f"size constant {o.names.size.c} -> {n.names.size.c}", o.count_mark, n.count_mark)
        if o.size != n.size:
            self.changed(Impact.WIRE, "table-size", subject, f"size {o.size} -> {n.size} words", o.mark, n.mark, "size")
        reserved = {i for e in o.entries if e.reserved for i in range(e.index, e.last + 1)}
        entries = match(o.named_entries, n.named_entries, lambda e: e.name, lambda e: (e.index, e.count))
        for oe, ne in entries.common:
            of = f"entry {ne.name!r} of table {n.name!r}"
            if (oe.index, oe.count) != (ne.index, ne.count):
                self.changed(Impact.WIRE, "table-index", of, f"{_entry_words(oe)} -> {_entry_words(ne)}", oe.mark, ne.mark)
            if oe.per != ne.per:
                self.changed(Impact.WIRE, "table-per", of, f"one word per slot of {oe.per or 'nothing'} -> {ne.per or 'nothing'}", oe.mark, ne.mark, "per")
            if oe.word != ne.word:
                self.changed(Impact.WIRE, "table-word", of, f"holds word {oe.word or 'none'} -> {ne.word or 'none'}", oe.mark, ne.mark, "word")
        for oe, ne in entries.renamed:
            self.renamed("table-entry-renamed", f"entry {oe.name!r} of table {n.name!r}", oe.mark, ne.mark, ne.name, _entry_words(oe))
        for oe in entries.removed:
            self.removed("table-entry-removed", f"entry {oe.name!r} of table {n.name!r}", oe.mark, f"removed ({_entry_words(oe)})")
        for ne in entries.added:
            span = set(range(ne.index, ne.last + 1))
            where = "reserved" if span <= reserved else "new" if ne.index >= o.size else "unused"
            self.added("table-entry-added", f"entry {ne.name!r} of table {n.name!r}", ne.mark, f"new entry in {where} {_entry_words(ne)}")

    # -- blocks of regions ------------------------------------------------------------
    def blocks(self, old: Sequence[Block], new: Sequence[Block]) -> None:
        def place(b: Block) -> object:
            return (b.align, b.size, tuple((r.offset, r.size) for r in b.named_regions))

        pairs = match(old, new, lambda b: b.name, place)
        for o, n in pairs.common:
            self.block(o, n)
        for o, n in pairs.renamed:
            self.renamed("block-renamed", f"block {o.name!r}", o.mark, n.mark, n.name, "regions")
        for o in pairs.removed:
            self.removed("block-removed", f"block {o.name!r}", o.mark)
        for n in pairs.added:
            self.added("block-added", f"block {n.name!r}", n.mark, f"new block of {_hex(n.size)} bytes")

    def block(self, o: Block, n: Block) -> None:
        subject = f"block {n.name!r}"
        if o.prefix != n.prefix:
            self.changed(Impact.SOURCE, "block-prefix", subject, f"prefix {o.prefix} -> {n.prefix}: its regions' names change", o.mark, n.mark, "prefix")
        if o.align != n.align:
            self.changed(Impact.WIRE, "block-alignment", subject, f"alignment {o.align} -> {n.align} bytes", o.mark, n.mark, "align")
        if o.size != n.size:
            self.changed(Impact.WIRE, "block-size", subject, f"size {_hex(o.size)} -> {_hex(n.size)} bytes", o.mark, n.mark, "size")
        reserved = [r for r in o.regions if r.reserved]

        def in_reserved(r: Region) -> bool:
            return any(x.offset <= r.offset and r.end <= x.end for x in reserved)

        old_named = [r for r in o.named_regions if not r.reserved]
        new_named = [r for r in n.named_regions if not r.reserved]
        regions = match(old_named, new_named, lambda r: r.name or "", lambda r: (r.offset, r.size))
        for orr, nr in regions.common:
            self.region(n, orr, nr)
        for orr, nr in regions.renamed:
            self.renamed("region-renamed", f"region {orr.name!r} of block {n.name!r}", orr.mark, nr.mark, nr.name or "", f"{_hex(orr.offset)}..{_hex(orr.end - 1)}")
        for orr in regions.removed:
            self.removed("region-removed", f"region {orr.name!r} of block {n.name!r}", orr.mark, f"removed ({_hex(orr.offset)}..{_hex(orr.end - 1)})")
        for nr in regions.added:
            where = "reserved space" if in_reserved(nr) else "new space" if nr.offset >= o.size else "space of another region"
            self.added(
                "region-added", f"region {nr.name!r} of block {n.name!r}", nr.mark,
                f"new region in {where} {_hex(nr.offset)}..{_hex(nr.end - 1)}",
            )

    def region(self, b: Block, o: Region, n: Region) -> None:
        subject = f"region {n.name!r} of block {b.name!r}"
        if o.offset != n.offset:
            self.changed(Impact.WIRE, "region-offset", subject, f"offset {_hex(o.offset)} -> {_hex(n.offset)}", o.mark, n.mark)
        if o.size != n.size:
            self.changed(Impact.WIRE, "region-size", subject, f"size {_hex(o.size)} -> {_hex(n.size)} bytes", o.mark, n.mark, "size")
        if o.slots != n.slots:
            self.changed(Impact.WIRE, "region-slots", subject, f"slots {o.slots or 'none'} -> {n.slots or 'none'}", o.mark, n.mark, "slots")
        for key in ("struct", "table", "word"):
            before, after = getattr(o, key), getattr(n, key)
            if before != after:
                self.changed(Impact.WIRE, "region-contents", subject, f"holds {key} {before or 'none'} -> {after or 'none'}", o.mark, n.mark, key)


def compare_layouts(old_side: Side, new_side: Side) -> list[Change]:
    """Every change of every layout; a layout only one side has is added or removed whole."""
    changes: list[Change] = []
    old_layouts = {layout.name: layout for layout in old_side.project.layouts.layouts}
    new_layouts = {layout.name: layout for layout in new_side.project.layouts.layouts}
    for name in sorted(old_layouts.keys() | new_layouts.keys()):
        old, new = old_layouts.get(name), new_layouts.get(name)
        if old is not None and new is not None:
            changes += LayoutDiff(old_side, new_side, old, new).run()
        elif old is not None:
            changes.append(
                Change(Area.LAYOUT, Impact.WIRE, "layout-removed", f"layout {name!r}", "removed", old_side.node(old.mark), None, layout=name)
            )
        elif new is not None:
            changes.append(
                Change(
                    Area.LAYOUT, Impact.COMPATIBLE, "layout-added", f"layout {name!r}", f"new layout, ABI version {new.version}",
                    None, new_side.node(new.mark), layout=name,
                )
            )
    return changes
