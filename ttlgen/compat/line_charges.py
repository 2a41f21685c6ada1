"""Which generated lines each changed spec entry accounts for.

Both trees are emitted with provenance; the lines each file gained or lost are charged to
the changed entries their spec sources are in (each side's sources against that side's
entry paths, :mod:`ttlgen.compat.spec_entries`). A line without a spec node of its own
(template text such as a closing brace, or a line printed from a document's root) went
with the lines around it: it is charged like the nearest line of its hunk before it, else
after it. A line whose nodes are all in unchanged entries, or a lone line of template
text, is charged to no changed entry, which the review shows as such.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

from ttlgen.compat.spec_entries import EntryIndex, SpecEntry
from ttlgen.provenance.origins import FileProvenance, LineOrigin


@dataclass
class Counts:
    added: int = 0
    removed: int = 0

    def __str__(self) -> str:
        return f"+{self.added} -{self.removed}"


@dataclass
class Effect:
    """The generated lines one spec change (or nothing that changed) accounts for."""

    files: dict[str, Counts] = field(default_factory=dict)

    def count(self, path: str, added: bool) -> None:
        counts = self.files.setdefault(path, Counts())
        if added:
            counts.added += 1
        else:
            counts.removed += 1


Effects = dict[SpecEntry | None, Effect]


def _entries(origin: LineOrigin, index: EntryIndex) -> list[SpecEntry] | None:
    """The changed entries a line's sources are in; None when it has no node of its own."""
    nodes = [s.mark for s in origin.sources if s.mark.path]
    if not nodes:
        return None
    found: dict[SpecEntry, None] = {}
    for mark in nodes:
        found.update(dict.fromkeys(index.of(mark.file, mark.path)))
    return list(found)


def _charge_hunk(origins: Sequence[LineOrigin], path: str, added: bool, index: EntryIndex, effects: Effects) -> None:
    hits = [_entries(origin, index) for origin in origins]
    # The entries of the nearest line with a node of its own, after each line (found first)
    # and before it (followed as the lines are charged).
    after: list[list[SpecEntry] | None] = [None] * len(hits)
    last: list[SpecEntry] | None = None
    for i in range(len(hits) - 1, -1, -1):
        after[i] = last
        last = hits[i] if hits[i] is not None else last
    before: list[SpecEntry] | None = None
    for i, found in enumerate(hits):
        chosen = found if found is not None else before if before is not None else after[i]
        for entry in chosen or (None,):
            effects.setdefault(entry, Effect()).count(path, added)
        before = found if found is not None else before


def generated_effects(old: dict[str, FileProvenance], new: dict[str, FileProvenance], old_index: EntryIndex, new_index: EntryIndex) -> Effects:
    """Added and removed generated lines per changed spec entry (None: no changed entry)."""
    effects: Effects = {}
    for path in sorted(old.keys() | new.keys()):
        before, after = old.get(path), new.get(path)
        a_lines = before.lines if before else ()
        b_lines = after.lines if after else ()
        if a_lines == b_lines:
            continue
        matcher = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            if before is not None and i2 > i1:
                _charge_hunk(before.origins[i1:i2], path, False, old_index, effects)
            if after is not None and j2 > j1:
                _charge_hunk(after.origins[j1:j2], path, True, new_index, effects)
    return effects
