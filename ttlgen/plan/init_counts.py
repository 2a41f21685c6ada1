"""How many init and reconfiguration calls a compute program executes per packed tile.

The program is walked as it runs: every loop for its count, every condition on the loop
variables it tests. Inits are the start-up, op, copy and uninit calls; reconfigurations
the unpacker and packer data-format calls. Dividing by the tiles packed gives the per-tile
overhead the hoisting pass (:mod:`ttlgen.plan.hoist`) removes (bench/kernel_inits.py
prints it for every kernel, before and after).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ttlgen.plan import kernel_ir as ir

INITS = frozenset([ir.Step.HW_INIT, ir.Step.OP_INIT, ir.Step.COPY_INIT, ir.Step.OP_UNINIT])


@dataclass(frozen=True)
class InitCounts:
    """Init and reconfiguration calls a kernel executes, against the tiles it packs."""

    inits: int
    reconfigs: int
    tiles: int  # tiles packed
    looped: int = 0  # the inits and reconfigurations executed inside a loop (they grow with the tiles)

    @property
    def inits_per_tile(self) -> float:
        return self.inits / max(self.tiles, 1)

    @property
    def reconfigs_per_tile(self) -> float:
        return self.reconfigs / max(self.tiles, 1)

    @property
    def looped_per_tile(self) -> float:
        return self.looped / max(self.tiles, 1)


def _value(expr: ir.Expr, env: Mapping[str, int]) -> int:
    if isinstance(expr, ir.Const):
        return expr.value
    if isinstance(expr, ir.Var):
        return env[expr.name]
    if isinstance(expr, ir.Compare):
        lhs, rhs = _value(expr.lhs, env), _value(expr.rhs, env)
        return int({ir.Comparison.EQ: lhs == rhs, ir.Comparison.NE: lhs != rhs, ir.Comparison.LT: lhs < rhs}[expr.op])
    if isinstance(expr, ir.Binary):
        lhs, rhs = _value(expr.lhs, env), _value(expr.rhs, env)
        return {ir.BinaryOp.ADD: lhs + rhs, ir.BinaryOp.MUL: lhs * rhs, ir.BinaryOp.DIV: lhs // rhs, ir.BinaryOp.MOD: lhs % rhs}[expr.op]
    raise ValueError(f"a loop count or condition the counter cannot evaluate: {expr}")


def _run(body: Sequence[ir.Stmt], env: dict[str, int], counts: dict[str, int], depth: int = 0) -> None:
    for stmt in body:
        if isinstance(stmt, ir.Call):
            key = "inits" if stmt.step in INITS else "reconfigs" if stmt.step in ir.RECONFIGS else "tiles" if stmt.step is ir.Step.PACK else None
            if key is not None:
                counts[key] += 1
                if depth and key != "tiles":
                    counts["looped"] += 1
        elif isinstance(stmt, ir.For):
            for i in range(_value(stmt.count, env)):
                _run(stmt.body, {**env, stmt.var: i}, counts, depth + 1)
        elif isinstance(stmt, ir.If):
            _run(stmt.then if _value(stmt.condition, env) else stmt.orelse, env, counts, depth)


def count(program: ir.Program) -> InitCounts:
    """The init, reconfiguration and pack calls ``program`` executes."""
    counts = {"inits": 0, "reconfigs": 0, "tiles": 0, "looped": 0}
    _run(program.body, {}, counts)
    return InitCounts(counts["inits"], counts["reconfigs"], counts["tiles"], counts["looped"])
