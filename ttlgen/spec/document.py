"""A loaded spec file: plain data plus the source position of every node."""

from __future__ import annotations

import functools
import hashlib
import marshal
from dataclasses import dataclass, field
from typing import Any

from ttlgen.errors import KeyPath, Mark

Position = tuple[int, int]


@dataclass(frozen=True)
class Positions:
    """Line/column (1-based) of each node's value and of each mapping entry's key."""

    values: dict[KeyPath, Position] = field(default_factory=dict)
    keys: dict[KeyPath, Position] = field(default_factory=dict)

    def value(self, path: KeyPath) -> Position:
        # Fall back to the nearest located ancestor: a path can name a value that does
        # not exist (a missing required key), and the error belongs to its parent.
        while path not in self.values and path:
            path = path[:-1]
        return self.values.get(path, (1, 1))

    def key(self, path: KeyPath) -> Position:
        if path in self.keys:
            return self.keys[path]
        return self.value(path)


def _content_digest(data: Any, values: dict[KeyPath, Position], keys: dict[KeyPath, Position]) -> str:
    # marshal holds exactly the plain data and the position tuples. Format 2: later ones
    # mark objects referenced twice, so equal data parsed afresh and read back from the
    # parse cache would give different bytes.
    return hashlib.sha256(marshal.dumps((data, values, keys), 2)).hexdigest()


@dataclass(frozen=True)
class SpecDocument:
    """One spec file after loading. ``data`` holds only dict/list/str/int/float/bool/None.

    A file has two names: ``display``, the path messages print (relative to the current
    directory, so it names the file wherever ttlgen runs), and ``source``, the name
    generated headers print (``<spec dir name>/<path in it>``, the same whatever the
    current directory, so the generated tree stays deterministic).
    """

    display: str
    source: str
    kind: str
    version: str
    data: Any
    positions: Positions

    @property
    def kind_id(self) -> str:
        return f"{self.kind}/{self.version}"

    @functools.cached_property
    def digest(self) -> str:
        """A hash of everything a later stage reads of the document: its data and positions
        (its names and kind are compared apart). Two documents with one digest give the
        same model, so the caches that reuse a model or an output key by it."""
        return _content_digest(self.data, self.positions.values, self.positions.keys)

    def entry_digests(self, key: str) -> dict[str, str]:
        """`digest` of each entry of the mapping ``data[key]``, alone: its data and the
        positions of its nodes. An edit inside one entry, or one that moves no line of
        another, leaves the others' digests as they were."""
        values: dict[str, dict[KeyPath, Position]] = {}
        keys: dict[str, dict[KeyPath, Position]] = {}
        for found, positions in ((values, self.positions.values), (keys, self.positions.keys)):
            for path, position in positions.items():
                if len(path) >= 2 and path[0] == key and isinstance(path[1], str):
                    found.setdefault(path[1], {})[path] = position
        return {
            name: _content_digest(entry, values.get(name, {}), keys.get(name, {}))
            for name, entry in self.data[key].items()
        }

    def mark(self, path: KeyPath = ()) -> Mark:
        line, column = self.positions.value(path)
        return Mark(self.display, line, column, path)

    def key_mark(self, path: KeyPath) -> Mark:
        line, column = self.positions.key(path)
        return Mark(self.display, line, column, path)
