"""Pairing the things of two versions: by name, and a vanished name with a new one at the
same place as a rename.

"The same place" is what a peer sees on the wire: an enum value's number, a bit field's
position and width, a struct field's offset and size, a table entry's index, a region's
offset and size, a handler's id. When a thing disappears and exactly one new thing takes
its place, the bytes did not change, only the name: a rename (source-breaking), not a
removal (wire-breaking) plus an addition.

A place can hold a reference to another thing (a bit field's enum, a field's word): the
old side's reference is taken through the renames already found (``old_place``), so a
word whose enum was renamed is still at the same place.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class Matched(Generic[T]):
    common: list[tuple[T, T]] = field(default_factory=list)
    renamed: list[tuple[T, T]] = field(default_factory=list)
    removed: list[T] = field(default_factory=list)
    added: list[T] = field(default_factory=list)


def by_name(old: Iterable[T], new: Iterable[T], name: Callable[[T], str]) -> Iterator[tuple[str, T | None, T | None]]:
    """Every name either version has, sorted, with the thing of that name on each side
    (None: that side has none)."""
    old_by = {name(o): o for o in old}
    new_by = {name(n): n for n in new}
    for key in sorted(old_by.keys() | new_by.keys()):
        yield key, old_by.get(key), new_by.get(key)


def match(
    old: Iterable[T],
    new: Iterable[T],
    name: Callable[[T], str],
    place: Callable[[T], Hashable],
    old_place: Callable[[T], Hashable] | None = None,
) -> Matched[T]:
    """Pair ``old`` and ``new`` by ``name``; then pair each unmatched old thing with the one
    unmatched new thing at its ``place`` (an old thing's place is ``old_place``, when
    given), if exactly one is there."""
    old_by = {name(o): o for o in old}
    new_by = {name(n): n for n in new}
    found: Matched[T] = Matched()
    found.common = [(o, new_by[k]) for k, o in old_by.items() if k in new_by]
    found.removed = [o for k, o in old_by.items() if k not in new_by]
    found.added = [n for k, n in new_by.items() if k not in old_by]
    if not found.removed or not found.added:
        return found
    of_old = old_place or place
    # Grouped by place once: a long list of additions (a thousand new constants) costs
    # one pass, not one per removed thing.
    old_at: dict[Hashable, list[T]] = {}
    for o in found.removed:
        old_at.setdefault(of_old(o), []).append(o)
    new_at: dict[Hashable, list[T]] = {}
    for n in found.added:
        new_at.setdefault(place(n), []).append(n)
    paired = {id(x) for at, olds in old_at.items() if len(olds) == 1 and len(new_at.get(at, ())) == 1 for x in (olds[0], new_at[at][0])}
    for o in found.removed:
        if id(o) in paired:
            found.renamed.append((o, new_at[of_old(o)][0]))
    found.removed = [o for o in found.removed if id(o) not in paired]
    found.added = [n for n in found.added if id(n) not in paired]
    return found
