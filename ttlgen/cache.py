"""Where ttlgen keeps its caches, whether caching is on, and the one record format they share.

Three caches earn their place (each measured; README "Caching"): Jinja's compiled
templates, the emulator's compiled kernels and runtime, and the extracted upstream
headers. Each record is keyed by a hash of the exact bytes it was made from and carries
a seal (the sha256 of its payload), so a record that is damaged, truncated, written by
other code or unreadable is a miss, never output. `TTLGEN_NO_CACHE=1` (or `--no-cache`)
turns every cache off; `TTLGEN_CACHE_DIR` moves them all.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

_SEAL = 32  # bytes of the sha256 in front of a sealed payload


def cache_root() -> Path:
    explicit = os.environ.get("TTLGEN_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ttlgen"


def enabled() -> bool:
    return os.environ.get("TTLGEN_NO_CACHE", "") in ("", "0")


# Moves the cache of the pinned releases' wheels and headers alone (ttlgen.upstream.fetch).
UPSTREAM_ENV = "TTLGEN_UPSTREAM_CACHE"


def upstream_dir() -> Path:
    """Where the pinned releases' wheels and extracted headers are kept."""
    explicit = os.environ.get(UPSTREAM_ENV)
    return Path(explicit) if explicit else cache_root() / "upstream"


def usable_dir(path: Path, scratch_prefix: str) -> Path:
    """``path`` when caching is on and it can be written; otherwise a temporary directory of
    this process (named ``scratch_prefix``...), deleted when it ends: a cache only ever
    costs or saves time."""
    return path if enabled() and _writable(path) else _scratch_dir(scratch_prefix)


@functools.cache
def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        descriptor, probe = tempfile.mkstemp(dir=path)
        os.close(descriptor)
        os.unlink(probe)
    except OSError:
        return False
    return True


@functools.cache
def _scratch_dir(prefix: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def write_atomically(target: Path, data: bytes) -> None:
    """Write then rename, so a concurrent reader never sees half a file. Raises OSError."""
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)  # a refused write (a full disk) leaves no half-written file
        raise


def seal(payload: bytes) -> bytes:
    return hashlib.sha256(payload).digest() + payload


def unseal(data: bytes) -> bytes | None:
    """The payload of sealed ``data``, or None when its bytes no longer match their hash."""
    digest, payload = data[:_SEAL], data[_SEAL:]
    return payload if len(data) >= _SEAL and hashlib.sha256(payload).digest() == digest else None


def store(target: Path, payload: bytes) -> None:
    """Record ``payload`` at ``target``, sealed; a cache that cannot be written only costs time."""
    with contextlib.suppress(OSError):
        write_atomically(target, seal(payload))


def load(target: Path) -> bytes | None:
    """The payload `store` recorded at ``target``, or None: absent, unreadable or damaged."""
    try:
        data = target.read_bytes()
    except OSError:
        return None
    return unseal(data)
