"""The adapter classifies an mlir::Type as TT-Lang's resolver does: "32-bit element" by the
type's bit count, so an integer type no element type declares (i32, ui8, ...) still gets
an answer, while the unpack-to-DST rule stays about f32 alone. The expected answers are
TT-Lang's generation-B facts for Blackhole (ttlang-cpp-target-interface.md): 16-bit DST iff
the element is not 32-bit; 32-bit iff it is, or the primitive is no broadcast; f32 through
DST (or by Copy) unpacks to DST in 32 bits, anything else is read with the default mode in
either width."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

ENV = "architecture:blackhole"
DEFAULT_EITHER_WIDTH = [[16, "default"], [32, "default"]]


@pytest.fixture(scope="module")
def answers(committed_adapter_answers: Callable[..., list[dict[str, Any]]]) -> list[dict[str, Any]]:
    # The driver in the default standard, one of those test_cpp_equality.py runs it in.
    return committed_adapter_answers()


def _widths(answers: list[dict[str, Any]], primitive: str, type_name: str) -> list[int]:
    return sorted(
        r["width"] for r in answers
        if (r["query"], r["env"], r.get("primitive"), r.get("type")) == ("supports", ENV, primitive, type_name) and r["supported"]
    )


def _configurations(answers: list[dict[str, Any]], primitive: str, type_name: str, route: str) -> list[list[Any]]:
    (found,) = (
        sorted(r["configurations"]) for r in answers
        if (r["query"], r["env"], r.get("primitive"), r.get("type"), r.get("route")) == ("configurations", ENV, primitive, type_name, route)
    )
    return found


@pytest.mark.parametrize("type_name", ["i32", "si32", "ui32"])
def test_a_32_bit_integer_needs_32_bit_dst_declared_or_not(answers: list[dict[str, Any]], type_name: str) -> None:
    assert _widths(answers, "ElementwiseUnary", type_name) == [32]
    assert _widths(answers, "BroadcastRow", type_name) == [32]


@pytest.mark.parametrize("type_name", ["ui8", "i1", "i16", "f64", "tf32"])
def test_an_undeclared_type_of_another_width_is_a_16_bit_element(answers: list[dict[str, Any]], type_name: str) -> None:
    assert _widths(answers, "ElementwiseUnary", type_name) == [16, 32]
    # The broadcast data mover restricts a non-32-bit element to 16-bit DST.
    assert _widths(answers, "BroadcastRow", type_name) == [16]


@pytest.mark.parametrize("type_name", ["i32", "si32", "ui8"])
def test_only_f32_unpacks_to_dst(answers: list[dict[str, Any]], type_name: str) -> None:
    assert _configurations(answers, "ElementwiseUnary", "f32", "dst") == [[32, "unpack_to_dest"]]
    assert _configurations(answers, "ElementwiseUnary", type_name, "dst") == DEFAULT_EITHER_WIDTH
    assert _configurations(answers, "Copy", type_name, "dfb") == DEFAULT_EITHER_WIDTH


def test_a_type_that_is_neither_integer_nor_float_is_allowed_nothing(answers: list[dict[str, Any]]) -> None:
    assert _widths(answers, "ElementwiseUnary", "index") == []
    assert _configurations(answers, "ElementwiseUnary", "index", "dfb") == []
