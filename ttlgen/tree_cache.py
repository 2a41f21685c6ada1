"""A content-addressed record of what a generation produced, so a no-op `check` is cheap.

The key hashes everything that decides the output: the generator's own source and
schemas, the versions of the libraries that render it, the spec files and the
templates. The value is the hash of every output file. When the key is known, `check`
compares hashes of the files on disk with the record instead of regenerating, like
make or ninja skip work whose inputs did not change. Any change to any input gives a
new key and so a full generation. Set TTLGEN_NO_CACHE=1 (or pass --no-cache) to bypass.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ttlgen.cache import cache_root, write_atomically
from ttlgen.fingerprint import generator as generator_fingerprint
from ttlgen.fingerprint import hash_tree
from ttlgen.write import existing_entries, read_regular


def fingerprint(specs_dir: Path, templates_dir: Path) -> str:
    digest = hashlib.sha256(generator_fingerprint(templates_dir).encode())
    # Generated headers name their sources by the spec directory's name.
    digest.update(f"specs-name:{specs_dir.resolve().name}\n".encode())
    hash_tree(digest, specs_dir, "specs")
    return digest.hexdigest()


def _record_path(key: str) -> Path:
    return cache_root() / "trees" / f"{key}.json"


def lookup(key: str) -> dict[str, str] | None:
    """Output path -> sha256 recorded for this key, or None."""
    try:
        data = json.loads(_record_path(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        return None
    return {str(k): v for k, v in data.items()}


def _blob_path(digest: str) -> Path:
    return cache_root() / "blobs" / digest[:2] / digest


def store(key: str, files: dict[str, bytes]) -> None:
    """Record the tree for this key: its hashes, and each file's content by its hash (so a
    later build of the same inputs into an empty or other tree needs no generation)."""
    record = {path: hashlib.sha256(content).hexdigest() for path, content in sorted(files.items())}
    try:
        for path, digest in record.items():
            blob = _blob_path(digest)
            if not blob.exists():
                write_atomically(blob, files[path])
        write_atomically(_record_path(key), json.dumps(record).encode("utf-8"))
    except OSError:
        pass  # a cache that cannot be written only costs speed


def contents(record: dict[str, str]) -> dict[str, bytes] | None:
    """The files of a recorded tree from the blob store, or None when any blob is missing
    or does not hash to its name (then the tree is generated instead)."""
    files: dict[str, bytes] = {}
    for path, digest in record.items():
        try:
            data = _blob_path(digest).read_bytes()
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != digest:
            return None
        files[path] = data
    return files


def disk_hashes(out_dir: Path) -> dict[str, str | None]:
    """The sha256 of every file of the tree; None for an entry that is not a regular file
    (never opened, and never equal to a recorded hash)."""
    hashes: dict[str, str | None] = {}
    for path, regular in existing_entries(out_dir).items():
        content = read_regular(out_dir / path) if regular else None
        hashes[path] = hashlib.sha256(content).hexdigest() if content is not None else None
    return hashes
