"""Compare two versions of a layout, thing by thing, and say who each change breaks.

Wire: a peer built from the other version reads different bytes: a size, offset, bit
position or width, alignment, enum or flag value, region, table index or constant changes,
or something is removed. Source: the bytes are the same but the generated names are not:
a rename (found by :mod:`ttlgen.compat.matching`), a new prefix, a printed name. Compatible:
an addition (a constant, an enum value, a field in reserved bits or bytes, a struct).
Documentation changes are not compared.

Things refer to each other by name (a bit field to its enum, a field to its word, a region
to its struct). Every rename is found first (:class:`Renames`), and an old reference is
compared through them: a field that holds a renamed word holds the same bytes, so only the
rename is reported. A reserved thing that has a name has generated names too (a reserved
region's offset macro, a reserved field's member): renaming or removing it breaks source
that uses them, while naming an anonymous reserved gap breaks nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ttlgen.compat.changes import Area, Change, Impact, Location
from ttlgen.compat.matching import Matched, by_name, match
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


def _span(r: Region) -> str:
    return f"{_hex(r.offset)}..{_hex(r.end - 1)}"


def _gone(names: Sequence[str]) -> str:
    return f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} gone"


def _region_names(r: Region) -> list[str]:
    return [r.names.offset.c, r.names.size.c] if r.names is not None else []


def _field_names(s: Struct, f: StructField) -> list[str]:
    return [f.names.offset.c, f"member {f.names.c_member} of {s.names.c_type}"]


class _Named(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def mark(self) -> Mark: ...


# A top-level thing of a layout: a constant, an enum, a word, a struct, a table, a block.
_Thing = TypeVar("_Thing", bound=_Named)


def _region_place(r: Region) -> object:
    return (r.offset, r.size)


@dataclass
class Renames:
    """Every thing of the old layout that has another name in the new one, by kind, and
    the pairings they were found in."""

    enums: dict[str, str] = field(default_factory=dict)
    words: dict[str, str] = field(default_factory=dict)
    structs: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)
    regions: dict[str, str] = field(default_factory=dict)  # region names are one namespace across blocks
    fields: dict[str, dict[str, str]] = field(default_factory=dict)  # per new struct

    def new(self, kind: dict[str, str], old_name: str | None) -> str | None:
        """What an old reference names in the new layout."""
        return kind.get(old_name, old_name) if old_name is not None else None


class LayoutDiff:
    """The changes from ``old`` to ``new`` (two versions of one layout)."""

    def __init__(self, old_side: Side, new_side: Side, old: Layout, new: Layout) -> None:
        self.old_side, self.new_side = old_side, new_side
        self.old, self.new = old, new
        self.changes: list[Change] = []
        self.renames = Renames()
        self._match_all()

    def _match_all(self) -> None:
        """Pair every thing of the two versions, references after what they refer to, so
        each place compares an old reference through the renames found before it."""
        old, new, r = self.old, self.new, self.renames

        def enum_place(e: Enum) -> object:
            return (e.bits, e.flags, tuple((v.name, v.value) for v in e.named_values), tuple((x.name, x.first, x.last) for x in e.ranges))

        self.enum_pairs = match(old.enums, new.enums, lambda e: e.name, enum_place)
        r.enums = {o.name: n.name for o, n in self.enum_pairs.renamed}

        def word_place(w: Word, renamed: dict[str, str]) -> object:
            return (w.sequence_follows, tuple((f.lsb, f.bits, renamed.get(f.enum or "", f.enum), f.value) for f in w.fields))

        self.word_pairs = match(old.words, new.words, lambda w: w.name, lambda w: word_place(w, {}), lambda w: word_place(w, r.enums))
        r.words = {o.name: n.name for o, n in self.word_pairs.renamed}

        def struct_place(s: Struct, renamed: dict[str, str]) -> object:
            return (s.size, tuple((f.offset, f.count, renamed.get(f.word or "", f.word), f.reserved) for f in s.fields))

        self.struct_pairs = match(
            old.structs, new.structs, lambda s: s.name, lambda s: struct_place(s, {}), lambda s: struct_place(s, r.words)
        )
        r.structs = {o.name: n.name for o, n in self.struct_pairs.renamed}

        def field_place(f: StructField, renamed: dict[str, str]) -> object:
            return (f.offset, f.count, renamed.get(f.word or "", f.word))

        self.field_pairs: dict[str, Matched[StructField]] = {}
        for os, ns in (*self.struct_pairs.common, *self.struct_pairs.renamed):
            fields = match(os.fields, ns.fields, lambda f: f.name, lambda f: field_place(f, {}), lambda f: field_place(f, r.words))
            self.field_pairs[ns.name] = fields
            r.fields[ns.name] = {of.name: nf.name for of, nf in fields.renamed}

        def table_place(t: Table) -> object:
            return (t.size, tuple((e.index, e.count, e.reserved) for e in t.entries))

        self.table_pairs = match(old.tables, new.tables, lambda t: t.name, table_place)
        r.tables = {o.name: n.name for o, n in self.table_pairs.renamed}

        def block_place(b: Block) -> object:
            return (b.align, b.size, tuple((x.offset, x.size) for x in b.named_regions))

        self.block_pairs = match(old.blocks, new.blocks, lambda b: b.name, block_place)
        self.region_pairs: dict[str, Matched[Region]] = {}
        for ob, nb in (*self.block_pairs.common, *self.block_pairs.renamed):
            regions = match(ob.named_regions, nb.named_regions, lambda x: x.name or "", _region_place)
            self.region_pairs[nb.name] = regions
            r.regions.update((orr.name or "", nr.name or "") for orr, nr in regions.renamed)

    # -- recording --------------------------------------------------------------------
    def _add(
        self, impact: Impact, kind: str, subject: str, message: str, before: Location | None, after: Location | None
    ) -> None:
        self.changes.append(Change(Area.LAYOUT, impact, kind, subject, message, before, after, layout=self.new.name))

    def changed(self, impact: Impact, kind: str, subject: str, message: str, old: Mark, new: Mark, key: str | None = None) -> None:
        self._add(impact, kind, subject, message, self.old_side.locate(old, key), self.new_side.locate(new, key))

    def of_node(self, impact: Impact, kind: str, subject: str, message: str, old: Mark, new: Mark) -> None:
        """A change of a thing as a whole (its name, whether it is reserved), at its node."""
        self._add(impact, kind, subject, message, self.old_side.node(old), self.new_side.node(new))

    def removed(self, kind: str, subject: str, old: Mark, message: str = "removed") -> None:
        self._add(Impact.WIRE, kind, subject, message, self.old_side.node(old), None)

    def added(self, kind: str, subject: str, new: Mark, message: str) -> None:
        self._add(Impact.COMPATIBLE, kind, subject, message, None, self.new_side.node(new))

    def renamed(self, kind: str, subject: str, old: Mark, new: Mark, new_name: str, place: str) -> None:
        self._add(
            Impact.SOURCE, kind, subject, f"renamed to {new_name!r} ({place} unchanged)", self.old_side.node(old), self.new_side.node(new)
        )

    def each(
        self, noun: str, pairs: Matched[_Thing], compare: Callable[[_Thing, _Thing], None],
        kept: Callable[[_Thing], str], described: Callable[[_Thing], str],
    ) -> None:
        """The changes of one kind of top-level thing: what each pair changed, then the
        renames (``kept``: what stayed), removals and additions (``described``)."""
        for o, n in (*pairs.common, *pairs.renamed):
            compare(o, n)
        for o, n in pairs.renamed:
            self.renamed(f"{noun}-renamed", f"{noun} {o.name!r}", o.mark, n.mark, n.name, kept(o))
        for o in pairs.removed:
            self.removed(f"{noun}-removed", f"{noun} {o.name!r}", o.mark)
        for n in pairs.added:
            self.added(f"{noun}-added", f"{noun} {n.name!r}", n.mark, described(n))

    def renamed_in_place(
        self, noun: str, subject: str, span: str, reserved: tuple[bool, bool], new_name: str,
        old_names: Sequence[str], old: Mark, new: Mark,
    ) -> None:
        """A field or region at the same bytes under another name. Reserving it removes it
        from the wire; renaming a reserved one only takes away its generated names."""
        was_reserved, now_reserved = reserved
        if not was_reserved and now_reserved:
            self.of_node(Impact.WIRE, f"{noun}-removed", subject, f"now reserved as {new_name!r} ({span})", old, new)
        elif was_reserved:
            use = " and put in use" if not now_reserved else ""
            self.of_node(
                Impact.SOURCE, f"{noun}-renamed", subject,
                f"reserved {noun} renamed to {new_name!r}{use} ({span} unchanged): {_gone(old_names)}", old, new,
            )
        else:
            self.renamed(f"{noun}-renamed", subject, old, new, new_name, span)

    def reserved_in_place(self, noun: str, subject: str, span: str, reserved: tuple[bool, bool], old: Mark, new: Mark) -> None:
        """A field or region kept under its name that was reserved or put in use."""
        was_reserved, now_reserved = reserved
        if not was_reserved and now_reserved:
            self.of_node(Impact.WIRE, f"{noun}-removed", subject, f"now reserved ({span})", old, new)
        elif was_reserved and not now_reserved:  # its names stay; what it holds is new
            self.of_node(Impact.COMPATIBLE, f"{noun}-added", subject, f"reserved {noun} put in use ({span})", old, new)

    def removed_in_place(self, noun: str, subject: str, span: str, reserved: bool, old_names: Sequence[str], old: Mark) -> None:
        """A field or region removed: from the wire, or when it was reserved only its names."""
        if reserved:  # no peer uses the bytes, but code may use the names
            self._add(Impact.SOURCE, f"{noun}-removed", subject, f"reserved {noun} removed ({span}): {_gone(old_names)}", self.old_side.node(old), None)
        else:
            self.removed(f"{noun}-removed", subject, old, f"removed ({span})")

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
        self.enums()
        self.words()
        self.structs()
        self.tables()
        self.blocks()
        return self.changes

    def constants(self, old: Sequence[Constant], new: Sequence[Constant]) -> None:
        # A renamed constant is paired by its value and converter, so only a kept name can
        # change either.
        pairs = match(old, new, lambda c: c.name, lambda c: (c.value, c.converter))
        self.each("constant", pairs, self.constant, lambda o: f"value {o.value}", lambda n: f"new constant, value {n.value}")

    def constant(self, o: Constant, n: Constant) -> None:
        subject = f"constant {n.name!r}"
        if o.value != n.value:
            self.changed(Impact.WIRE, "constant-value", subject, f"value {o.value} -> {n.value}", o.mark, n.mark, "value")
        if o.converter != n.converter:
            self.changed(
                Impact.SOURCE, "constant-converter", subject, f"converter {o.converter or 'none'} -> {n.converter or 'none'}",
                o.mark, n.mark, "converter",
            )

    # -- enumerations -----------------------------------------------------------------
    def enums(self) -> None:
        self.each("enum", self.enum_pairs, self.enum, lambda _: "values", lambda n: f"new enum of {len(n.named_values)} values")

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
    def words(self) -> None:
        self.each("word", self.word_pairs, self.word, lambda _: "bit fields", lambda n: f"new word of {len(n.fields)} bit fields")

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
            r = self.renames
            if r.new(r.enums, of.enum) != nf.enum:
                self.changed(Impact.WIRE, "bit-field-enum", subject, f"holds enum {of.enum or 'none'} -> {nf.enum or 'none'}", of.mark, nf.mark, "enum")
            if r.new(r.regions, of.indexes) != nf.indexes or (of.indexes is not None and of.limit != nf.limit):
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
    def structs(self) -> None:
        self.each("struct", self.struct_pairs, self.struct, lambda _: "fields", lambda n: f"new struct of {n.size} bytes")

    def struct(self, o: Struct, n: Struct) -> None:
        subject = f"struct {n.name!r}"
        if o.size != n.size:
            self.changed(Impact.WIRE, "struct-size", subject, f"size {o.size} -> {n.size} bytes", o.mark, n.mark, "size")
        reserved = {b for f in o.fields if f.reserved for b in range(f.offset, f.end)}
        fields = self.field_pairs[n.name]
        for of, nf in fields.common:
            self.struct_field(n, of, nf)
        for of, nf in fields.renamed:
            self.struct_field_renamed(o, n, of, nf)
        for of in fields.removed:
            self.removed_in_place(
                "field", f"field {of.name!r} of struct {n.name!r}", _bytes(of.offset, of.size), of.reserved, _field_names(o, of), of.mark
            )
        for nf in fields.added:
            span = set(range(nf.offset, nf.end))
            where = "reserved" if span <= reserved else "new" if nf.offset >= o.size else "reused"
            what = "new reserved field" if nf.reserved else "new field"
            self.added("field-added", f"field {nf.name!r} of struct {n.name!r}", nf.mark, f"{what} in {where} {_bytes(nf.offset, nf.size)}")
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
        self.reserved_in_place("field", subject, _bytes(nf.offset, nf.size), (of.reserved, nf.reserved), of.mark, nf.mark)
        self.field_contents(s, of, nf)

    def struct_field_renamed(self, os: Struct, s: Struct, of: StructField, nf: StructField) -> None:
        """A field at the same bytes under another name: its generated names are gone."""
        self.renamed_in_place(
            "field", f"field {of.name!r} of struct {s.name!r}", _bytes(of.offset, of.size),
            (of.reserved, nf.reserved), nf.name, _field_names(os, of), of.mark, nf.mark,
        )
        self.field_contents(s, of, nf)

    def field_contents(self, s: Struct, of: StructField, nf: StructField) -> None:
        subject = f"field {nf.name!r} of struct {s.name!r}"
        r = self.renames
        if of.offset != nf.offset:
            self.changed(Impact.WIRE, "field-offset", subject, f"offset {of.offset} -> {nf.offset}", of.mark, nf.mark)
        if of.count != nf.count:
            self.changed(Impact.WIRE, "field-size", subject, f"size {of.size} -> {nf.size} bytes", of.mark, nf.mark, "count")
        if r.new(r.words, of.word) != nf.word:
            self.changed(Impact.WIRE, "field-word", subject, f"holds word {of.word or 'none'} -> {nf.word or 'none'}", of.mark, nf.mark, "word")
        if r.new(r.fields.get(s.name, {}), of.copy_of) != nf.copy_of:
            self.changed(
                Impact.WIRE, "field-copy", subject, f"copy of {of.copy_of or 'nothing'} -> {nf.copy_of or 'nothing'}", of.mark, nf.mark, "copy_of"
            )

    # -- tables of word indices -------------------------------------------------------
    def tables(self) -> None:
        self.each("table", self.table_pairs, self.table, lambda _: "entries", lambda n: f"new table of {n.size} words")

    def table(self, o: Table, n: Table) -> None:
        subject = f"table {n.name!r}"
        r = self.renames
        if o.prefix != n.prefix:
            self.changed(Impact.SOURCE, "table-prefix", subject, f"prefix {o.prefix} -> {n.prefix}: its entries' names change", o.mark, n.mark, "prefix")
        if o.names.size != n.names.size:
            self.changed(Impact.SOURCE, "table-count-name", subject, f"size constant {o.names.size.c} -> {n.names.size.c}", o.count_mark, n.count_mark)
        if o.size != n.size:
            self.changed(Impact.WIRE, "table-size", subject, f"size {o.size} -> {n.size} words", o.mark, n.mark, "size")
        reserved = {i for e in o.entries if e.reserved for i in range(e.index, e.last + 1)}
        # A reserved entry has no generated name, so only named ones are compared.
        entries = match(o.named_entries, n.named_entries, lambda e: e.name, lambda e: (e.index, e.count))
        for oe, ne in entries.common:
            of = f"entry {ne.name!r} of table {n.name!r}"
            if (oe.index, oe.count) != (ne.index, ne.count):
                self.changed(Impact.WIRE, "table-index", of, f"{_entry_words(oe)} -> {_entry_words(ne)}", oe.mark, ne.mark)
            if r.new(r.regions, oe.per) != ne.per:
                self.changed(Impact.WIRE, "table-per", of, f"one word per slot of {oe.per or 'nothing'} -> {ne.per or 'nothing'}", oe.mark, ne.mark, "per")
            if r.new(r.words, oe.word) != ne.word:
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
    def blocks(self) -> None:
        self.each("block", self.block_pairs, self.block, lambda _: "regions", lambda n: f"new block of {_hex(n.size)} bytes")

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

        # Named regions, reserved ones too (they have generated names); an anonymous
        # reserved gap has none, so naming one is an addition.
        regions = self.region_pairs[n.name]
        for orr, nr in regions.common:
            self.region(n, orr, nr)
        for orr, nr in regions.renamed:
            self.region_renamed(n, orr, nr)
        for orr in regions.removed:
            self.removed_in_place("region", f"region {orr.name!r} of block {n.name!r}", _span(orr), orr.reserved, _region_names(orr), orr.mark)
        for nr in regions.added:
            where = "reserved space" if in_reserved(nr) else "new space" if nr.offset >= o.size else "space of another region"
            what = "new reserved region" if nr.reserved else "new region"
            self.added("region-added", f"region {nr.name!r} of block {n.name!r}", nr.mark, f"{what} in {where} {_span(nr)}")

    def region_renamed(self, b: Block, o: Region, n: Region) -> None:
        self.renamed_in_place(
            "region", f"region {o.name!r} of block {b.name!r}", _span(o),
            (o.reserved, n.reserved), n.name or "", _region_names(o), o.mark, n.mark,
        )
        self.region_contents(b, o, n)

    def region(self, b: Block, o: Region, n: Region) -> None:
        subject = f"region {n.name!r} of block {b.name!r}"
        self.reserved_in_place("region", subject, _span(n), (o.reserved, n.reserved), o.mark, n.mark)
        self.region_contents(b, o, n)

    def region_contents(self, b: Block, o: Region, n: Region) -> None:
        subject = f"region {n.name!r} of block {b.name!r}"
        r = self.renames
        if o.offset != n.offset:
            self.changed(Impact.WIRE, "region-offset", subject, f"offset {_hex(o.offset)} -> {_hex(n.offset)}", o.mark, n.mark)
        if o.size != n.size:
            self.changed(Impact.WIRE, "region-size", subject, f"size {_hex(o.size)} -> {_hex(n.size)} bytes", o.mark, n.mark, "size")
        if o.slots != n.slots:
            self.changed(Impact.WIRE, "region-slots", subject, f"slots {o.slots or 'none'} -> {n.slots or 'none'}", o.mark, n.mark, "slots")
        for key, renamed in (("struct", r.structs), ("table", r.tables), ("word", r.words)):
            before, after = getattr(o, key), getattr(n, key)
            if r.new(renamed, before) != after:
                self.changed(Impact.WIRE, "region-contents", subject, f"holds {key} {before or 'none'} -> {after or 'none'}", o.mark, n.mark, key)


def compare_layouts(old_side: Side, new_side: Side) -> list[Change]:
    """Every change of every layout; a layout only one side has is added or removed whole."""
    changes: list[Change] = []
    for name, old, new in by_name(old_side.project.layouts.layouts, new_side.project.layouts.layouts, lambda layout: layout.name):
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
