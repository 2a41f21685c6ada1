"""A loaded spec file: plain data plus the source position of every node."""

from __future__ import annotations

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


@dataclass(frozen=True)
class SpecDocument:
    """One spec file after loading. ``data`` holds only dict/list/str/int/float/bool/None.

    A file has two names: ``display``, the path messages print (relative to the current
    directory, so it names the file wherever ttlgen runs), and ``source``, the name
    generated headers print (``<spec dir name>/<path in it>``, the same whatever the
    current directory, so the generated tree stays deterministic). ``sha256`` hashes the
    bytes the document was parsed from (MANIFEST records it: the bytes hashed are the
    bytes used, even when the file changes while ttlgen runs).
    """

    display: str
    source: str
    kind: str
    version: str
    data: Any
    positions: Positions
    sha256: str

    @property
    def kind_id(self) -> str:
        return f"{self.kind}/{self.version}"

    def mark(self, path: KeyPath = ()) -> Mark:
        line, column = self.positions.value(path)
        return Mark(self.display, line, column, path)

    def key_mark(self, path: KeyPath) -> Mark:
        line, column = self.positions.key(path)
        return Mark(self.display, line, column, path)
