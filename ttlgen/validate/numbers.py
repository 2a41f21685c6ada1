"""Numbers no spec field can mean: NaN and the infinities.

YAML (``.nan``, ``.inf``) and TOML (``nan``, ``inf``) both write them, and JSON Schema
cannot refuse them: ``minimum`` and ``maximum`` compare NaN as in range, and ``"type":
"number"`` takes both. No field of any spec kind gives them a meaning (a tolerance, a
distribution bound and an op attribute are all finite quantities, and no field reads
infinity as "no limit"), and what consumes them would print ``NaN`` into JSON or pass
infinity to a random number generator. So every document is held to it whatever its
kind, at the number's own position.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from ttlgen.errors import Diagnostic, KeyPath
from ttlgen.spec.document import SpecDocument


def _non_finite(data: Any) -> Iterator[tuple[KeyPath, float]]:
    """(path, value) of every float in ``data`` that is NaN or infinite, in document order."""
    stack: list[tuple[Any, KeyPath]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            yield path, value
        elif isinstance(value, dict):
            stack.extend((child, (*path, key)) for key, child in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((child, (*path, index)) for index, child in reversed(list(enumerate(value))))


def _message(value: float) -> str:
    what = "NaN (not a number)" if math.isnan(value) else "-infinity" if value < 0 else "infinity"
    return f"{what} is not allowed; every number in a spec must be finite"


def non_finite_numbers(document: SpecDocument, schema_errors: Sequence[Diagnostic] = ()) -> list[Diagnostic]:
    """``schema_errors`` and an error at every NaN or infinity of ``document`` the schema
    did not already reject (its message, "expected a string" or "greater than the maximum
    1", says what would be valid there)."""
    flagged = {error.mark.path for error in schema_errors}
    found = [Diagnostic(document.mark(path), _message(value)) for path, value in _non_finite(document.data) if path not in flagged]
    return [*schema_errors, *found]
