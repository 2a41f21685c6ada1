"""Parsed spec documents by content, so a build re-parses only the files that changed.

Parsing is a pure function of a file's text, its suffix and the loader's code, so the
plain data and positions of a file that parsed once are recorded (marshal: the data holds
only dicts, lists, strings, numbers, booleans and None, and the positions tuples of
them) under a key hashing exactly those. Only successful parses are recorded; a file with
an error is parsed again and reports it. The file's name is not part of the record: the
loader attaches it to every mark after a hit, as after a parse.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import sys
from pathlib import Path
from typing import Any

import yaml

from ttlgen import cache
from ttlgen.spec.document import Positions


@functools.cache
def _loader_fingerprint() -> bytes:
    """The code whose output a record holds: this package's sources, PyYAML's version and
    the interpreter (marshal's format is the interpreter's)."""
    digest = hashlib.sha256(f"python {sys.version} pyyaml {yaml.__version__}\n".encode())
    for source in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.digest()


def _record(text: str, suffix: str) -> Path | None:
    if not cache.enabled():
        return None
    digest = hashlib.sha256(_loader_fingerprint())
    digest.update(suffix.encode() + b"\0" + text.encode("utf-8"))
    return cache.cache_root() / "parsed" / digest.hexdigest()


def lookup(text: str, suffix: str) -> tuple[Any, Positions] | None:
    record = _record(text, suffix)
    if record is None:
        return None
    try:
        data, values, keys = marshal.loads(record.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None  # absent, unreadable or damaged: parse instead
    return data, Positions(values=values, keys=keys)


def store(text: str, suffix: str, data: Any, positions: Positions) -> None:
    record = _record(text, suffix)
    if record is None:
        return
    # An unwritable cache only costs speed; ValueError: data marshal cannot hold.
    with contextlib.suppress(OSError, ValueError):
        cache.write_atomically(record, marshal.dumps((data, positions.values, positions.keys)))
