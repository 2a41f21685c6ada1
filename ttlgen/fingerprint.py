"""Content hashes of what decides ttlgen's results besides its inputs: its own code and
the libraries that parse and render. Every cache keys its records by these."""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import importlib.util
import marshal
import os
import sys
import time
from pathlib import Path

from ttlgen import cache

# The libraries whose code shapes the output bytes (parsing and rendering). Their
# package __init__ files carry their versions; hashing those is far cheaper than
# importlib.metadata, which scans every installed distribution.
_RENDERING_LIBRARIES = ("jinja2", "yaml")


# ----------------------------------------------------------------- file digests

# A file's digest is kept with what stat said of it when it was read (device, inode,
# size, mtime, ctime), as git's index does, and read again only when any of these differ.
# Timestamps have a granularity (a kernel tick, or two seconds on FAT), so a file changed
# twice within one tick can keep the stat it had: a file that changed this recently
# before it was hashed is not kept, and is read again next time.
_RECENT_NS = 2_000_000_000
_DIGESTS_VERSION = 1
# Past this many files (spec trees come and go: copies, branches, test directories), a
# process writes back only the files it hashed itself.
_DIGESTS_LIMIT = 4096
_digests: dict[str, tuple[int, int, int, int, int, bytes]] | None = None
_digests_used: set[str] = set()
_digests_changed = False


def _digests_path() -> Path:
    return cache.cache_root() / "file-digests" / f"v{_DIGESTS_VERSION}.marshal"


def _known_digests() -> dict[str, tuple[int, int, int, int, int, bytes]]:
    global _digests
    if _digests is None:
        _digests = {}
        loaded = cache.read_marshalled(_digests_path()) if cache.enabled() else None
        if isinstance(loaded, dict):
            _digests.update(
                (path, entry) for path, entry in loaded.items()
                if isinstance(path, str) and isinstance(entry, tuple) and len(entry) == 6
            )
    return _digests


def _save_digests() -> None:
    if not _digests_changed or _digests is None:
        return
    kept = _digests if len(_digests) <= _DIGESTS_LIMIT else {p: e for p, e in _digests.items() if p in _digests_used}
    with contextlib.suppress(OSError, ValueError):  # an unwritable cache only costs time
        cache.write_sealed(_digests_path(), marshal.dumps(dict(sorted(kept.items()))))


def file_digest(path: str) -> bytes:
    """The sha256 of the file's content (links followed): from the record when its stat is
    as recorded, else read (and recorded, unless it changed in the last two seconds)."""
    global _digests_changed
    status = os.stat(path)
    stamp = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    known = _known_digests()
    _digests_used.add(path)
    entry = known.get(path)
    if entry is not None and entry[:5] == stamp:
        return entry[5]
    now = time.time_ns()
    with open(path, "rb") as handle:
        digest = hashlib.sha256(handle.read()).digest()
    if cache.enabled() and max(status.st_mtime_ns, status.st_ctime_ns) < now - _RECENT_NS:
        if not _digests_changed:
            atexit.register(_save_digests)
        known[path] = (*stamp, digest)
        _digests_changed = True
    return digest


def hash_tree(digest: hashlib._Hash, root: Path, label: str) -> None:
    """Add every file under ``root`` (path and content; caches and hidden entries skipped)."""
    if not root.is_dir():
        digest.update(f"{label}:absent\n".encode())
        return

    def walk(directory: str, prefix: str) -> None:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
        for entry in entries:
            if entry.is_dir():
                # As the spec loader, never into a linked directory (nor a cache or hidden one).
                if entry.name != "__pycache__" and not entry.name.startswith(".") and not entry.is_symlink():
                    walk(entry.path, f"{prefix}{entry.name}/")
            elif not entry.name.endswith((".pyc", ".pyo")):
                digest.update(f"{label}:{prefix}{entry.name}\n".encode())
                digest.update(file_digest(entry.path))

    walk(os.path.abspath(root), "")


@functools.cache
def code() -> bytes:
    """ttlgen's version and source and the rendering libraries. Memoised: the code of a
    running ttlgen does not change under it."""
    from ttlgen import __version__

    digest = hashlib.sha256()
    digest.update(f"ttlgen {__version__} python {sys.version_info[:2]}\n".encode())
    for library in _RENDERING_LIBRARIES:
        spec = importlib.util.find_spec(library)
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        digest.update(f"{library}\n".encode())
        if origin is not None and origin.is_file():
            digest.update(file_digest(str(origin)))
    hash_tree(digest, Path(__file__).resolve().parent, "generator")
    return digest.digest()


def generator(templates_dir: Path) -> str:
    """Everything but the specs that decides the output: the code and the templates
    (hashed on every call: unlike the code, they may change under a running process)."""
    digest = hashlib.sha256(code())
    hash_tree(digest, templates_dir, "templates")
    return digest.hexdigest()
