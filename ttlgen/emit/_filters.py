"""Jinja filters. Each one is a pure function of its input, so output is deterministic."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ttlgen.emit import _text


def hexlit(value: int, width: int = 0) -> str:
    return f"0x{value:0{width}X}"


def pyrepr(value: Any) -> str:
    """A Python literal for plain data, with sets and dict keys in sorted order."""
    if isinstance(value, bool) or value is None or isinstance(value, int | float | str):
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(pyrepr(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(pyrepr(v) for v in value) + "]"
    if isinstance(value, frozenset | set):
        if not value:
            return "frozenset()"
        return "frozenset({" + ", ".join(pyrepr(v) for v in sorted(value)) + "})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{pyrepr(k)}: {pyrepr(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no deterministic literal for {type(value).__name__}")


def sort_by(items: Iterable[Any], attribute: str) -> list[Any]:
    return sorted(items, key=lambda item: getattr(item, attribute))


# No filter derives an identifier: templates print the names the model and plan derive
# (ttlgen/model/names.py, ttlgen/plan/tables.py), so each name has one derivation.
FILTERS: dict[str, Callable[..., Any]] = {
    "hexlit": hexlit,
    "pyrepr": pyrepr,
    "sort_by": sort_by,
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
