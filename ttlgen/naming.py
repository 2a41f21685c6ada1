"""How a spec name becomes an identifier in each generated language, in one place.

Words are the alphanumeric runs of a name, so ``tile_add``, ``tile-add`` and ``TileAdd``
split alike; the model uses these to detect names that would collide, and the
templates use the same functions as filters.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9]+")


def words(*parts: str) -> list[str]:
    return [w for part in parts for w in _WORD.findall(part)]


def upper_snake(*parts: str) -> str:
    """``gave`` + ``limit`` -> ``GAVE_LIMIT``."""
    return "_".join(w.upper() for w in words(*parts))


def snake(*parts: str) -> str:
    return "_".join(w.lower() for w in words(*parts))


def camel(*parts: str) -> str:
    """``tile_add`` -> ``TileAdd``."""
    return "".join(w[:1].upper() + w[1:] for w in words(*parts))
