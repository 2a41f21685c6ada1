"""Pairing the things of two versions: by name, and a vanished name with a new one at the
same place as a rename.

"The same place" is what a peer sees on the wire: an enum value's number, a bit field's
position and width, a struct field's offset and size, a table entry's index, a region's
offset and size, a handler's id. When a thing disappears and exactly one new thing takes
its place, the bytes did not change, only the name: a rename (source-breaking), not a
removal (wire-breaking) plus an addition.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class Matched(Generic[T]):
    common: list[tuple[T, T]] = field(default_factory=list)
    renamed: list[tuple[T, T]] = field(default_factory=list)
    removed: list[T] = field(default_factory=list)
    added: list[T] = field(default_factory=list)


def match(
    old: Iterable[T],
    new: Iterable[T],
    name: Callable[[T], str],
    place: Callable[[T], Hashable] | None = None,
) -> Matched[T]:
    """Pair ``old`` and ``new`` by ``name``; then pair each unmatched old thing with the one
    unmatched new thing at its ``place``, if exactly one is there."""
    old_by = {name(o): o for o in old}
    new_by = {name(n): n for n in new}
    found: Matched[T] = Matched()
    found.common = [(o, new_by[k]) for k, o in old_by.items() if k in new_by]
    found.removed = [o for k, o in old_by.items() if k not in new_by]
    found.added = [n for k, n in new_by.items() if k not in old_by]
    if place is None:
        return found
    for o in list(found.removed):
        there = [n for n in found.added if place(n) == place(o)]
        if len(there) == 1 and sum(place(other) == place(o) for other in found.removed) == 1:
            found.renamed.append((o, there[0]))
            found.removed.remove(o)
            found.added.remove(there[0])
    return found
