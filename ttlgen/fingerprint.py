"""Content hashes of what decides ttlgen's results besides its inputs: its own code and
the libraries that parse and render. Every cache keys its records by these."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
from pathlib import Path

# The libraries whose code shapes the output bytes (parsing and rendering). Their
# package __init__ files carry their versions; hashing those is far cheaper than
# importlib.metadata, which scans every installed distribution.
_RENDERING_LIBRARIES = ("jinja2", "yaml")


def hash_tree(digest: hashlib._Hash, root: Path, label: str) -> None:
    """Add every file under ``root`` (path and content; caches and hidden entries skipped)."""
    if not root.is_dir():
        digest.update(f"{label}:absent\n".encode())
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            digest.update(f"{label}:{rel}\n".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())


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
            digest.update(hashlib.sha256(origin.read_bytes()).digest())
    hash_tree(digest, Path(__file__).resolve().parent, "generator")
    return digest.digest()


def generator(templates_dir: Path) -> str:
    """Everything but the specs that decides the output: the code and the templates
    (hashed on every call: unlike the code, they may change under a running process)."""
    digest = hashlib.sha256(code())
    hash_tree(digest, templates_dir, "templates")
    return digest.hexdigest()
