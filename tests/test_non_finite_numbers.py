"""NaN and the infinities are refused in every spec, at the number's own position."""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import Any

import pytest

from tests.conftest import real_documents
from ttlgen.errors import KeyPath
from ttlgen.spec.document import SpecDocument
from ttlgen.validate.documents import validate_documents


def _first_leaf(data: Any, path: KeyPath = ()) -> KeyPath | None:
    """The path of the first scalar after the ``spec`` header, in document order."""
    if isinstance(data, dict):
        children = [(key, value) for key, value in data.items() if path or key != "spec"]
    elif isinstance(data, list):
        children = list(enumerate(data))
    else:
        return path
    for key, value in children:
        found = _first_leaf(value, (*path, key))
        if found is not None:
            return found
    return None


def _with(document: SpecDocument, path: KeyPath, value: object) -> SpecDocument:
    data = copy.deepcopy(document.data)
    holder = data
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = value
    return dataclasses.replace(document, data=data)


def _one_per_kind() -> list[SpecDocument]:
    return list({d.kind_id: d for d in real_documents()}.values())


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("document", _one_per_kind(), ids=lambda d: d.kind_id)
def test_a_non_finite_number_is_refused_at_its_position_in_every_kind(document: SpecDocument, value: float) -> None:
    path = _first_leaf(document.data)
    assert path is not None
    errors = validate_documents([_with(document, path, value)])
    # One message: the schema's where it refuses the value (of a wrong type, only that
    # type error), else the non-finite check's.
    assert [e.mark for e in errors] == [document.mark(path)], [e.format() for e in errors]


def _tolerance_path() -> tuple[SpecDocument, KeyPath]:
    document = next(d for d in real_documents() if d.kind == "ttlgen.kernel" and d.data.get("kernels"))
    return document, ("kernels", next(iter(document.data["kernels"])), "tolerance")


def test_a_nan_where_the_schema_takes_any_number_is_refused_as_not_finite() -> None:
    document, tolerance = _tolerance_path()
    (error,) = validate_documents([_with(document, (*tolerance, "pcc"), math.nan)])
    assert error.message == "NaN (not a number) is not allowed; every number in a spec must be finite"


def test_an_infinity_the_schema_refuses_gets_only_the_schemas_message() -> None:
    # pcc lies in [0, 1]: "greater than the maximum 1" says what would be valid.
    document, tolerance = _tolerance_path()
    (error,) = validate_documents([_with(document, (*tolerance, "pcc"), math.inf)])
    assert error.message == "inf is greater than the maximum 1"
