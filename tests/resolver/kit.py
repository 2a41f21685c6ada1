"""Helpers for the resolver tests: the resolver library over the tables built from the
repository's specs (exactly what `ttlgen build` resolves kernels with), and a compact
way to write kernels."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.conftest import SPECS, real_plan
from ttlgen import resolver as engine
from ttlgen.model import ops as ops_model
from ttlgen.model import targets as targets_model
from ttlgen.pipeline import validate_specs
from ttlgen.plan.tables import ResolverTables, build_tables


def tables_of(specs: Path) -> ResolverTables:
    """The resolver tables of a spec tree, as the plan stage builds them (the real specs'
    are planned once per test process)."""
    if specs == SPECS:
        return tables()
    documents = validate_specs(specs)
    sink = ops_model.DiagnosticSink()
    ops = ops_model.build(documents, sink)
    targets = targets_model.build(documents, sink, ops.vocabulary)
    sink.raise_if_any()
    return build_tables(ops, targets)


def tables() -> ResolverTables:
    """The tables of the repository's specs, with their enum classes (the plan's own)."""
    found = real_plan()[1].tables
    assert found is not None
    return found


@functools.cache
def catalog() -> engine.Catalog:
    return engine.Catalog(tables().tables)


def dfb(index: int, tile: tuple[int, int] = (0, 0)) -> tuple[str, int, tuple[int, int]]:
    return ("dfb", index, tile)


def val(op_id: str) -> tuple[str, str]:
    return ("value", op_id)


def kernel(dfbs: Mapping[int, str], *ops: Sequence[Any]) -> engine.KernelDescription:
    """``kernel({0: "f32"}, ("e", "tile_exp", [dfb(0)]), ("s", "tile_add", [dfb(0), dfb(1)],
    {"result": "bf16", "bcast": "col", "strategy": "fpu"}))``. Element types are plain
    strings, as a caller of the library may give them."""
    tile_ops = []
    for entry in ops:
        op_id, name, operands = entry[0], entry[1], entry[2]
        extra = dict(entry[3]) if len(entry) > 3 else {}
        result = extra.pop("result", None)
        strategy = extra.pop("strategy", None)
        built = [
            engine.DfbOperand(o[1], o[2]) if o[0] == "dfb" else engine.ValueOperand(o[1])
            for o in operands
        ]
        tile_ops.append(engine.TileOp(op_id, name, tuple(built), result, extra, strategy))
    return engine.KernelDescription(dict(dfbs), tuple(tile_ops))


def resolve(
    k: engine.KernelDescription, target: str | None = None, device_arch: str | None = None,
    options: Mapping[str, object] | None = None, attributes: Mapping[str, object] | None = None,
) -> engine.Plan | engine.ResolveFailure:
    return catalog().resolve_kernel(
        k, target=target, device_arch=device_arch, options=options, attributes=attributes
    )


def plan_of(result: object) -> engine.Plan:
    assert isinstance(result, engine.Plan), result.format() if isinstance(result, engine.ResolveFailure) else result
    return result


def failure_of(result: object) -> engine.ResolveFailure:
    assert isinstance(result, engine.ResolveFailure), f"expected a failure, got {result}"
    return result


def strategies(plan: engine.Plan) -> dict[str, str]:
    return {op_id: str(s) for op_id, s in plan.strategies}
