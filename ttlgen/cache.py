"""Where ttlgen keeps its caches, and whether caching is on.

Every cache (tree records, generation parts, models, parsed spec documents,
schema-validity records, file digests, compiled templates and dataclass methods, the
emulator's builds)
lives under one root so that TTLGEN_CACHE_DIR moves all of them and TTLGEN_NO_CACHE=1
turns all of them off; `trim` keeps the root under TTLGEN_CACHE_MAX_MB. A cache only ever
costs or saves time: no result may depend on it.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import tempfile
import time
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


def write_sealed(target: Path, payload: bytes) -> None:
    """Write ``payload`` atomically behind its sha256, for `read_sealed`. Raises OSError."""
    write_atomically(target, hashlib.sha256(payload).digest() + payload)


def read_sealed(target: Path) -> bytes | None:
    """The payload `write_sealed` wrote, or None when the file is absent, unreadable or
    damaged (its bytes no longer match the hash they carry): a record whose bytes run
    as code or go into the tree unread must be a miss then, never a result."""
    try:
        data = target.read_bytes()
    except OSError:
        return None
    digest, payload = data[:32], data[32:]
    return payload if hashlib.sha256(payload).digest() == digest else None


def read_marshalled(target: Path) -> object | None:
    """The value `write_sealed` stored as marshal at ``target``, or None when the record is
    absent, damaged or not marshal."""
    payload = read_sealed(target)
    if payload is None:
        return None
    try:
        value: object = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    return value


# The generator's records grow with every edit a build sees (each changed part's files,
# each new tree's blobs): bounded like ccache's, by size, oldest written first. The
# emulator's compiled kernels (device/) are left alone: a kernel run may be about to
# execute one. So are the spare trees of ttlgen.write (spares/): their files are the
# trees' own (hard links), and their number is bounded there. And so is upstream/
# (ttlgen.upstream): pinned wheels, their extracted headers and a ttnn environment, each
# whole or useless, a few hundred MB that a download and a pip install make again.
_DEFAULT_LIMIT_MB = 512
_TRIM_EVERY_S = 3600.0
_TRIMMED = ".trimmed"
_UNTRIMMED = frozenset({"device", "spares", "upstream", _TRIMMED})


def _limit_bytes() -> int:
    raw = os.environ.get("TTLGEN_CACHE_MAX_MB", "")
    try:
        megabytes = float(raw) if raw else _DEFAULT_LIMIT_MB
    except ValueError:
        megabytes = _DEFAULT_LIMIT_MB  # a mistyped limit must not turn trimming off or fail a build
    return int(max(megabytes, 0.0) * 1024 * 1024)


def trim(now: float | None = None) -> None:
    """Keep the cache root under TTLGEN_CACHE_MAX_MB (default 512): past the limit, delete
    the records written longest ago until it is three quarters full. Looks at most once an
    hour (one stat otherwise), so a build pays for the scan rarely. Every cache treats a
    deleted record as a miss, so this only ever costs time."""
    root = cache_root()
    marker = root / _TRIMMED
    now = time.time() if now is None else now
    try:
        if now - marker.stat().st_mtime < _TRIM_EVERY_S:
            return
    except OSError:
        pass  # never trimmed, or no cache yet
    with contextlib.suppress(OSError):
        root.mkdir(parents=True, exist_ok=True)
        marker.touch()
        os.utime(marker, (now, now))
    found = _records(root)
    total, limit = sum(size for _, size, _ in found), _limit_bytes()
    if total <= limit:
        return
    for _, size, path in sorted(found):
        with contextlib.suppress(OSError):
            os.unlink(path)
            total -= size
        if total <= limit * 3 // 4:
            break


def _records(root: Path) -> list[tuple[float, int, str]]:
    """(mtime, size, path) of every file under the root but the untrimmed ones."""
    found: list[tuple[float, int, str]] = []
    try:
        with os.scandir(root) as listing:
            tops = [entry.path for entry in listing if entry.name not in _UNTRIMMED]
    except OSError:
        return found
    paths: list[str] = []
    for top in tops:
        if os.path.isdir(top) and not os.path.islink(top):
            paths.extend(os.path.join(dirpath, name) for dirpath, _, names in os.walk(top) for name in names)
        else:
            paths.append(top)
    for path in paths:
        with contextlib.suppress(OSError):
            status = os.stat(path, follow_symlinks=False)
            found.append((status.st_mtime, status.st_size, path))
    return found
