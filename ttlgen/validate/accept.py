"""A fast yes to "does this document satisfy its schema?", so a valid document never waits
for jsonschema.

jsonschema explains what is wrong (:mod:`ttlgen.validate.schema` turns its errors into
located messages), but importing it takes 40-60 ms and checking one kernel spec 15-30 ms.
jsonschema-rs, a compiled implementation of the same draft, answers in well under a
millisecond. It is trusted only with a yes, and only for a document on which its rules and
ttlgen's cannot differ; every no, and every document outside that set, goes to jsonschema,
whose verdict is the one that counts.

ttlgen's rules are standard Draft 2020-12 made stricter in places (schema.py), and the two
regular-expression engines read a few characters differently. A document is outside the
set when it holds:

- a float with an integral value (``32.0``): standard JSON Schema counts it as an integer
  and as equal to ``32``; ttlgen counts it as neither;
- a float that is not finite, or an integer beyond 64 bits: the Rust side has no such number;
- a key that is not a string;
- in any string or key, a control character other than tab and newline, a line or
  paragraph separator, or a byte-order mark: whether these are whitespace (``\\S``) or any
  character (``.``) differs between Python's ``re`` and the Rust engine.

``$`` needs no exclusion: both sides read it as ECMA-262 does, the end of the text.
tests/test_validate_accept.py runs both validators over mutated real specs and holds
the fast yes to jsonschema's.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

from ttlgen.spec.document import SpecDocument
from ttlgen.spec.kinds import SpecKind, find_kind

_INT64 = range(-(2**63), 2**63)
_UNSURE_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")


def plain(data: Any) -> bool:
    """Whether ``data`` is inside the set on which both validators agree (module docstring)."""
    # Strings and keys are searched once at the end, joined by a newline (a sure character):
    # one search per string was most of the walk's time.
    texts: list[str] = []
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            texts.extend(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int):
            if value not in _INT64:
                return False
        elif isinstance(value, float):
            if not math.isfinite(value) or value.is_integer():
                return False
        else:
            return False
    try:
        text = "\n".join(texts)
    except TypeError:  # a key that is not a string
        return False
    return _UNSURE_TEXT.search(text) is None


@functools.cache
def _validator(kind: SpecKind) -> Any:
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator(kind.schema())


def accepts(document: SpecDocument) -> bool:
    """True only when ``document`` is valid under ttlgen's rules; False means "ask jsonschema"."""
    kind = find_kind(document.kind, document.version)
    if kind is None or not plain(document.data):
        return False
    try:
        return bool(_validator(kind).is_valid(document.data))
    except ValueError:  # a value the Rust side cannot take: jsonschema decides
        return False
