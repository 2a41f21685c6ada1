"""Jinja filters. Each one is a pure function of its input, so output is deterministic."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from ttlgen.naming import camel, upper_snake


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


def to_json(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False)


def cstring(value: str) -> str:
    return json.dumps(value, ensure_ascii=True)


def sort_by(items: Iterable[Any], attribute: str) -> list[Any]:
    return sorted(items, key=lambda item: getattr(item, attribute))


# upper_snake and camel serve the kernel-configuration templates; the ABI and program
# templates print the names the model derives (ttlgen/model/names.py) and use neither.
FILTERS: dict[str, Callable[..., Any]] = {
    "upper_snake": upper_snake,
    "camel": camel,
    "hexlit": hexlit,
    "pyrepr": pyrepr,
    "to_json": to_json,
    "cstring": cstring,
    "sort_by": sort_by,
}
