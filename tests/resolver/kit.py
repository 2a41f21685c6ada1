"""Helpers for the resolver tests: the package generated from the current specs, and a
compact way to write kernels."""

from __future__ import annotations

import functools
import types
from collections.abc import Mapping, Sequence
from typing import Any

from tests.conftest import SPECS
from ttlgen.resolve import load_generated_package


@functools.cache
def generated() -> types.ModuleType:
    """The ttl_kernel_config package rendered from the repository's specs."""
    return load_generated_package(SPECS)


def dfb(index: int, tile: tuple[int, int] = (0, 0)) -> tuple[str, int, tuple[int, int]]:
    return ("dfb", index, tile)


def val(op_id: str) -> tuple[str, str]:
    return ("value", op_id)


def kernel(dfbs: Mapping[int, str], *ops: Sequence[Any]) -> Any:
    """``kernel({0: "f32"}, ("e", "tile_exp", [dfb(0)]), ("s", "tile_add", [dfb(0), dfb(1)],
    {"result": "bf16", "bcast": "col", "strategy": "fpu"}))``."""
    kc = generated()
    tile_ops = []
    for entry in ops:
        op_id, name, operands = entry[0], entry[1], entry[2]
        extra = dict(entry[3]) if len(entry) > 3 else {}
        result = extra.pop("result", None)
        strategy = extra.pop("strategy", None)
        built = [
            kc.DfbOperand(o[1], o[2]) if o[0] == "dfb" else kc.ValueOperand(o[1])
            for o in operands
        ]
        tile_ops.append(
            kc.TileOp(op_id, name, tuple(built), kc.ElementType(result) if result else None, extra, strategy)
        )
    return kc.KernelDescription({i: kc.ElementType(t) for i, t in dfbs.items()}, tuple(tile_ops))


def resolve(
    k: Any, target: str | None = None, device_arch: str | None = None,
    options: Mapping[str, object] | None = None, attributes: Mapping[str, object] | None = None,
) -> Any:
    return generated().resolve_kernel(
        k, target=target, device_arch=device_arch, options=options, attributes=attributes
    )


def plan_of(result: Any) -> Any:
    kc = generated()
    assert isinstance(result, kc.Plan), result.format() if isinstance(result, kc.ResolveFailure) else result
    return result


def failure_of(result: Any) -> Any:
    kc = generated()
    assert isinstance(result, kc.ResolveFailure), f"expected a failure, got {result}"
    return result


def strategies(plan: Any) -> dict[str, str]:
    return {op_id: s.value for op_id, s in plan.strategies}
