"""Which header of a pinned release declares a function, when that release is at hand.

`ttlgen upstream fetch` extracts each pinned release's headers into the upstream cache
(``<upstream>/headers/<wheel sha256>/ttnn/tt_metal/``, its ``MANIFEST.json`` written last).
When a spec names a function its API level does not declare, the message can then say
whether the release has one of that name, and in which header: the fix is to declare it
(``ttlgen upstream import --add``), not to pick another name. This reads the extraction
only when it is complete, never fetches, and finds declarations by their text (a function
name followed by its parameter list at the start of a declaration), which is enough for a
hint; ``ttlgen upstream check`` parses the headers properly.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path

from ttlgen import cache

# The layout of an extraction in the upstream cache, which `ttlgen upstream fetch`
# (ttlgen/upstream/fetch.py) writes and this module reads: the tree of one release under
# headers/<its wheel's sha256>/, its MANIFEST written last (present: the tree is complete).
MANIFEST = "MANIFEST.json"
# The tree tt-metal's kernel API headers sit under, in the wheel and so in the cache.
_API = Path("ttnn", "tt_metal", "hw", "inc")


def extraction_dir(upstream: Path, sha256: str) -> Path:
    """Where the headers of the release whose wheel has ``sha256`` are extracted."""
    return upstream / "headers" / sha256


_HEADER_SUFFIXES = (".h", ".hpp")


class NotFetched:
    """The release's headers are not in the cache (``ttlgen upstream fetch`` puts them there)."""


NOT_FETCHED = NotFetched()


def declaring_header(sha256: str, roots: Sequence[str], name: str) -> str | NotFetched | None:
    """The header (relative to tt_metal/hw/inc/, under one of ``roots``) of the release whose
    wheel has ``sha256`` that declares function ``name``; None when no header there does;
    NOT_FETCHED when the release's headers are not at hand."""
    if not cache.enabled():
        return NOT_FETCHED
    tree = extraction_dir(cache.upstream_dir(), sha256)
    if not (tree / MANIFEST).is_file():
        return NOT_FETCHED
    return _index(str(tree / _API), tuple(roots)).get(name)


# A return type (or ALWI, inline, ...) then the name and its parameter list, at the start of
# a line; a statement that calls a function (`return f(`, `else g(`) is no declaration.
_DECLARED = re.compile(
    r"^[ \t]*(?!(?:return|else|case|throw|delete|new|goto)\b)(?:template\s*<[^;{}]*>\s*)?"
    r"(?:[A-Za-z_][\w:<>,*& ]*[\s*&])([A-Za-z_]\w*)\s*\(",
    re.MULTILINE,
)
_NOT_NAMES = frozenset({"if", "for", "while", "switch", "return", "sizeof", "static_assert", "defined"})


@functools.cache
def _index(api: str, roots: tuple[str, ...]) -> dict[str, str]:
    """Every function name declared at the start of a line of the headers under ``roots``,
    with the first header that declares it (the least nested first, then in path order: the
    API's own header before an experimental variant's)."""
    found: dict[str, str] = {}
    base = Path(api)
    for root in roots:
        where = base / root
        files = sorted((p for p in where.rglob("*") if p.suffix in _HEADER_SUFFIXES), key=lambda p: (len(p.parts), p)) if where.is_dir() else [where]
        for path in files:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            header = path.relative_to(base).as_posix()
            for match in _DECLARED.finditer(text):
                if match.group(1) not in _NOT_NAMES:
                    found.setdefault(match.group(1), header)
    return found
