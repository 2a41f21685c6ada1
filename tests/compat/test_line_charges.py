"""Charging changed generated lines to the spec entries they come from."""

from __future__ import annotations

from ttlgen.compat.line_charges import generated_effects
from ttlgen.compat.spec_entries import EntryIndex, SpecEntry
from ttlgen.errors import Mark
from ttlgen.provenance.origins import FileProvenance, LineOrigin, OriginKind, SpecSource

FILE = "specs/abi/komorebi.yaml"
TEMPLATE = LineOrigin(OriginKind.TEMPLATE)


def _spec(*path: str | int) -> LineOrigin:
    return LineOrigin(OriginKind.SPEC, (SpecSource(Mark(FILE, 1, 1, path), "a thing"),))


def _added(lines: list[tuple[str, LineOrigin]], entries: list[tuple[SpecEntry, tuple[str | int, ...]]]) -> dict[SpecEntry | None, int]:
    new = EntryIndex()
    for entry, path in entries:
        new.add(entry, path)
    after = FileProvenance("out.h", tuple(text for text, _ in lines), tuple(origin for _, origin in lines))
    effects = generated_effects({}, {"out.h": after}, EntryIndex(), new)
    return {entry: effect.files["out.h"].added for entry, effect in effects.items()}


def test_a_line_of_template_text_is_charged_once_with_the_line_before_it() -> None:
    first, second = SpecEntry(FILE, "constants", "a", named=True), SpecEntry(FILE, "constants", "b", named=True)
    lines = [("#define A 1", _spec("constants", 0)), ("", TEMPLATE), ("#define B 2", _spec("constants", 1)), ("", TEMPLATE)]
    assert _added(lines, [(first, ("constants", 0)), (second, ("constants", 1))]) == {first: 2, second: 2}


def test_a_line_printed_from_the_root_of_a_spec_is_charged_like_template_text() -> None:
    version = SpecEntry(FILE, "abi_version", "minor")
    lines = [("/* Version 1.1 */", _spec()), ("#define MINOR 1", _spec("abi_version"))]
    assert _added(lines, [(version, ("abi_version", "minor"))]) == {version: 2}


def test_a_line_whose_spec_entry_did_not_change_is_charged_to_no_entry() -> None:
    changed = SpecEntry(FILE, "constants", "a", named=True)
    lines = [("#define A 1", _spec("constants", 0)), ("#define B 2", _spec("constants", 1))]
    assert _added(lines, [(changed, ("constants", 0))]) == {changed: 1, None: 1}
