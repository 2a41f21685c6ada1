"""The C++ enums the generated header shares with TT-Lang have TT-Lang's enumerators in
TT-Lang's order. The order is written here from upstream
(include/ttlang/Dialect/TTL/IR/TileExecution.h@a25492d2,
include/ttlang/Dialect/TTL/Transforms/ComputeKernelConfigAnalysis.h@aa47bdec), not taken
from the vocabulary spec: this checks the spec against upstream."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import GENERATED
from tests.cpp_tables.support import STANDIN
from ttlgen.plan.kernel_target_cpp import HEADER

TT_LANG_ENUMS = {
    "TilePrimitive": [
        "Unknown", "Copy", "ElementwiseBinary", "ElementwiseUnary", "BroadcastColumn", "BroadcastRow",
        "BroadcastScalar", "Reduce", "Transpose", "Fill", "Matmul", "Store", "DstIndex",
    ],
    "TileOperandRoute": ["None", "DataflowBuffer", "Dst"],
    "FullFp32AccumulationKind": ["Matmul", "ReduceRow", "ReduceColumn", "ReduceScalar"],
    "DestinationElementWidth": ["Bits16", "Bits32"],
    "DFBUnpackMode": ["Default", "UnpackToDestination"],
}

_ENUM = re.compile(r"enum class (\w+)(?:\s*:\s*[\w:]+)?\s*\{([^}]*)\}", re.DOTALL)


def _enums(path: Path) -> dict[str, list[str]]:
    """Each ``enum class`` of a C++ file with its enumerators in order (comments and values dropped)."""
    text = re.sub(r"//[^\n]*", "", path.read_text(encoding="utf-8"))
    found = {}
    for name, body in _ENUM.findall(text):
        found[name] = [item.split("=")[0].strip() for item in body.split(",") if item.strip()]
    return found


@pytest.mark.parametrize("enum", sorted(TT_LANG_ENUMS))
def test_table_header_enum_has_tt_langs_enumerators_in_tt_langs_order(enum: str) -> None:
    assert _enums(GENERATED / "include" / HEADER).get(enum) == TT_LANG_ENUMS[enum]


@pytest.mark.parametrize("enum", sorted(TT_LANG_ENUMS))
def test_stand_in_declares_tt_langs_enum_as_upstream_does(enum: str) -> None:
    # The adapter is compiled against the stand-in: it must stand for upstream's header.
    assert _enums(STANDIN).get(enum) == TT_LANG_ENUMS[enum]
