"""The recorded outputs of generation parts (ttlgen/incremental.py), by key.

A record is what one part produced: either its files (path -> the bytes `build` writes)
or the note that the part reads every kernel (``reads``, a level), which sends the lookup
to the key over every spec. Records are marshal (they hold only strings, bytes and ints)
under the cache root, one file per key. A generation collects its new records and writes
them only once it has succeeded, so a build that fails records nothing. A record that is
missing, unreadable, not of that shape or not matching the hash it carries is a miss: the
part is generated again.
"""

from __future__ import annotations

import contextlib
import marshal
from dataclasses import dataclass, field
from pathlib import Path

from ttlgen import cache


@dataclass(frozen=True)
class Files:
    """A part's files: relative POSIX path -> bytes as written."""

    files: dict[str, bytes]


@dataclass(frozen=True)
class ReadsKernels:
    """The part reads kernels, at ``level`` (ttlgen.incremental.Reads): look it up by the key
    over every spec instead."""

    level: int


Record = Files | ReadsKernels


def _decode(data: object) -> Record | None:
    if isinstance(data, tuple) and len(data) == 2:
        tag, value = data
        if tag == "files" and isinstance(value, dict):
            if all(isinstance(k, str) and isinstance(v, bytes) for k, v in value.items()):
                return Files(value)
        elif tag == "reads" and isinstance(value, int):
            return ReadsKernels(value)
    return None


def _encode(record: Record) -> bytes:
    return marshal.dumps(("files", record.files) if isinstance(record, Files) else ("reads", record.level))


@dataclass
class PartRecords:
    """The records one generation reads and adds; ``root`` None: caching is off (every
    lookup misses and nothing is written)."""

    root: Path | None
    pending: dict[str, Record] = field(default_factory=dict)

    @classmethod
    def open(cls, enabled: bool) -> PartRecords:
        return cls(cache.cache_root() / "parts" if enabled and cache.enabled() else None)

    def _path(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / key

    def lookup(self, key: str) -> Record | None:
        if key in self.pending:
            return self.pending[key]
        if self.root is None:
            return None
        return _decode(cache.read_marshalled(self._path(key)))  # its bytes go into the tree unread

    def add(self, key: str, record: Record) -> None:
        if self.root is not None:
            self.pending[key] = record

    def commit(self) -> None:
        """Write the records added; called once the generation has succeeded."""
        if self.root is None:
            return
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            for key, record in sorted(self.pending.items()):
                cache.write_sealed(self._path(key), _encode(record))
        self.pending.clear()
