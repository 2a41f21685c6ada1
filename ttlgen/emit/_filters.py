"""Jinja filters. Each one is a pure function of its input, so output is deterministic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ttlgen.emit import _text


def hexlit(value: int, width: int = 0) -> str:
    return f"0x{value:0{width}X}"


def pyrepr(value: Any) -> str:
    """A Python literal for a scalar (templates print containers element by element)."""
    if isinstance(value, bool) or value is None or isinstance(value, int | float | str):
        return repr(value)
    raise TypeError(f"no literal filter for {type(value).__name__}")


# No filter derives an identifier: templates print the names the model and plan derive
# (ttlgen/model/names.py, ttlgen/plan/tables.py), so each name has one derivation.
FILTERS: dict[str, Callable[..., Any]] = {
    "hexlit": hexlit,
    "pyrepr": pyrepr,
    # Spec text in each output's syntax (ttlgen/emit/_text.py): every free-text value a
    # template prints goes through the one for where it lands.
    "to_json": _text.json_text,
    "cstring": _text.c_string,
    "c_comment": _text.c_comment,
    "py_doc": _text.py_docstring,
    "md_cell": _text.md_cell,
    "md_text": _text.md_text,
    "md_code": _text.md_code,
}
