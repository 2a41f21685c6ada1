"""Where ttlgen keeps its caches, and whether caching is on.

Every cache (tree records, parsed spec documents, schema-validity records, compiled
templates, the emulator's builds) lives under one root so that TTLGEN_CACHE_DIR moves all of them and
TTLGEN_NO_CACHE=1 turns all of them off. A cache only ever costs or saves time: no
result may depend on it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def cache_root() -> Path:
    explicit = os.environ.get("TTLGEN_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ttlgen"


def enabled() -> bool:
    return os.environ.get("TTLGEN_NO_CACHE", "") in ("", "0")


def write_atomically(target: Path, data: bytes) -> None:
    """Write then rename, so a concurrent reader never sees half a file. Raises OSError;
    callers treat that as a cache that only costs speed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)  # a refused write (a full disk) leaves no half-written file
        raise
