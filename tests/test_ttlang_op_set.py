"""The vocabulary holds TT-Lang's whole tile-op set, as the reference records it.

``../shared/reference/upstream-artifacts.md`` §5 lists the 42 tile compute ops of TT-Lang
1.1.1's TTL dialect (read from its wheel's op bindings) and the two the main line adds;
``ttlang-resolver-main-line.md`` §2.5 states the main-line ops' execution semantics
(TTLOpsUtils.cpp). Each op must have semantics in the op specs and, at every API level, a
spelling or a stated absence; the main-line ops must have the semantics TT-Lang gives them.
Without ``shared/`` beside the repository these tests skip (README, "skipped").
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO
from ttlgen.model.ops import Route
from ttlgen.model.project import Project

REFERENCE = REPO.parent / "shared" / "reference" / "upstream-artifacts.md"
# Primitives the lowering expresses through kernel-level steps, never as an op call.
KERNEL_STEPS = frozenset(["Copy", "DstIndex", "Store", "Fill"])


def _reference() -> str:
    if not REFERENCE.is_file():
        pytest.skip(f"the upstream reference is not at {REFERENCE} (shared/ is not beside the repository)")
    return REFERENCE.read_text(encoding="utf-8")


def ttlang_ops() -> tuple[list[str], list[str]]:
    """(TT-Lang 1.1.1's tile compute ops, the ones its main line adds), as §5 lists them."""
    text = " ".join(_reference().split())
    found = re.search(r"(\d+) compute ops: `tile_([a-z0-9_ ]+)`", text)
    assert found is not None, "§5 no longer lists the compute ops as `tile_abs acos ...`"
    released = [f"tile_{name}" for name in found.group(2).split()]
    assert len(released) == int(found.group(1))
    added = re.search(r"main line later adds `(tile_\w+)` and `(tile_\w+)`", text)
    assert added is not None, "§5 no longer names the main line's additions"
    return released, list(added.groups())


def test_every_ttlang_tile_op_has_semantics_and_a_spelling_or_a_stated_absence_at_each_level(project: Project) -> None:
    released, added = ttlang_ops()
    declared = {op.name: op for op in project.ops.ops}
    missing = [name for name in (*released, *added) if name not in declared]
    assert not missing, f"TT-Lang ops without semantics in specs/ops/: {', '.join(missing)}"
    for name in (*released, *added):
        op = declared[name]
        if set(op.primitive.names) & KERNEL_STEPS:
            continue  # the lowering's own calls (pack, copy, fill), not an op spelling
        for level in project.spelling.levels:
            for key in op.spelling_keys:
                spelling = level.spelling(name, key)
                assert spelling is not None, f"{name}: no spelling under {key!r} at level {level.level!r}"
                assert spelling.absent or spelling.forms(), f"{name}: neither spelled nor absent at {level.level!r}"


def test_the_main_line_ops_have_ttlangs_execution_semantics(project: Project) -> None:
    _, added = ttlang_ops()
    declared = {op.name: op for op in project.ops.ops}
    # ttlang-resolver-main-line.md §2.5 (TTLOpsUtils.cpp): the row normalization is a Reduce
    # reading its input, and gamma only when it has one, from dataflow buffers and holding
    # num_tiles DST slots, bf16 only; tile_accumulate an ElementwiseBinary accumulating into
    # DST, its accumulator in DST and its contribution routed by its producer.
    norm = declared["tile_row_normalization_block"]
    assert norm.primitive.fixed == "Reduce" and norm.dst_slots_attribute == "num_tiles" and norm.elements == ("bf16",)
    routes = dict(zip((o.name for o in norm.operands), norm.strategies[0].routes, strict=True))
    assert routes["input"] is Route.DFB and routes["gamma"] is Route.DFB
    assert next(o for o in norm.operands if o.name == "gamma").optional
    accumulate = declared["tile_accumulate"]
    assert accumulate.primitive.fixed == "ElementwiseBinary" and accumulate.strategies[0].accumulates
    assert accumulate.strategies[0].routes[0] is Route.DST and accumulate.by_producer == 1
    assert set(added) == {"tile_row_normalization_block", "tile_accumulate"}
