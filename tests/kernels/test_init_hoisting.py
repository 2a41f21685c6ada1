"""Inits and data-format reconfigurations leave the loops that do not change their state.

The pass works on the kernel IR by step and by what the API spec says each call
configures; the shipped kernels are compared with the same lowering without it (the per-tile
counts bench/kernel_inits.py prints), and small programs pin each rule.
"""

from __future__ import annotations

import functools

from kernel_helpers import all_kernels

from tests.conftest import real_project
from ttlgen.model.call_forms import ArgKind
from ttlgen.model.tt_metal_api import State
from ttlgen.plan import kernel_ir as ir
from ttlgen.plan.hoist import hoist
from ttlgen.plan.init_counts import InitCounts, count
from ttlgen.plan.kernels import LoweredKernel, plan_kernels


@functools.cache
def unhoisted() -> dict[str, LoweredKernel]:
    project = real_project()
    lowered = plan_kernels(project.kernels.kernels, project.ops, project.targets, project.spelling, project.api, hoist_inits=False)
    return {k.kernel.name: k for k in lowered}


def _steps(program: ir.Program) -> list[ir.Step]:
    return [c.step for c in program.calls()]


def test_hoisting_never_adds_init_or_reconfig_calls_and_keeps_every_other_call() -> None:
    for name, after in all_kernels().items():
        before = unhoisted()[name]
        b, a = count(before.compute), count(after.compute)
        assert a.tiles == b.tiles, name
        assert a.inits <= b.inits and a.reconfigs <= b.reconfigs, name
        others = [s for s in _steps(before.compute) if s.value not in ("op_init", "init_copy", "op_uninit") and not s.value.startswith("reconfig")]
        assert [s for s in _steps(after.compute) if s in others] == others, name


def test_kernels_with_tile_loops_lose_their_per_tile_inits_and_reconfigurations() -> None:
    saved = {name: (count(unhoisted()[name].compute), count(k.compute)) for name, k in all_kernels().items()}
    improved = {name for name, (b, a) in saved.items() if a.inits + a.reconfigs < b.inits + b.reconfigs}
    assert {"matmul_subblocked", "eltwise_sub_bf16", "reduce_scalar_bf16", "l1_acc_large_block", "unary_chain_bf16"} <= improved
    # The start-up and one matmul init; the start-up loads every format the kernel reads.
    assert saved["matmul_subblocked"][1] == InitCounts(inits=2, reconfigs=0, tiles=48)


def test_a_reduce_init_and_its_uninit_leave_the_loop_together() -> None:
    body = all_kernels()["reduce_row_bf16"].compute.body
    loop = next(i for i, s in enumerate(body) if isinstance(s, ir.For))
    inside = ir.calls(body[loop].body)
    assert not [c for c in inside if c.step in (ir.Step.OP_INIT, ir.Step.OP_UNINIT)]
    before = [c.step for c in body[:loop] if isinstance(c, ir.Call)]
    after = [c.step for c in body[loop + 1 :] if isinstance(c, ir.Call)]
    assert ir.Step.OP_INIT in before and after[0] is ir.Step.OP_UNINIT


def test_the_uninit_follows_the_pack_of_its_result() -> None:
    steps = _steps(unhoisted()["reduce_row_bf16"].compute)
    assert steps.index(ir.Step.OP_UNINIT) > steps.index(ir.Step.PACK)
    assert steps.index(ir.Step.OP_UNINIT) > steps.index(ir.Step.DST_RELEASE)


def test_sfpu_inits_that_replace_each_other_stay_in_the_loop() -> None:
    """unary_chain: four SFPU inits alternate per tile; only the copy init and SrcA leave."""
    body = all_kernels()["unary_chain_bf16"].compute.body
    tile_loop = next(s for s in ir.walk(body) if isinstance(s, ir.For) and s.var == "t_")
    inits = [c.step for c in ir.calls(tile_loop.body) if c.step in (ir.Step.OP_INIT, ir.Step.COPY_INIT)]
    assert inits == [ir.Step.OP_INIT] * 4


# ----------------------------------------------------------------- the rules on small programs

FPU = frozenset([State.FPU])
SRCA = frozenset([State.SRCA_FORMAT])


def _call(step: ir.Step, name: str, *args: ir.Expr) -> ir.Call:
    return ir.Call(step, name, (), tuple(ir.Arg(ArgKind.CB, a) for a in args))


def _effects(call: ir.Call) -> frozenset[State]:
    return {"init_a": FPU, "init_b": FPU, "uninit": FPU, "srca": SRCA}.get(call.function, frozenset())


OP = _call(ir.Step.OP, "op")
INIT_A = _call(ir.Step.OP_INIT, "init_a", ir.Var("cb_x"))


def _loop(*body: ir.Stmt) -> ir.For:
    return ir.For("i", ir.Const(4), tuple(body), generated=False)


def test_an_init_alone_in_its_state_leaves_the_loop() -> None:
    assert hoist((_loop(INIT_A, OP),), _effects) == (INIT_A, _loop(OP))


def test_an_init_stays_when_another_call_sets_the_same_state() -> None:
    init_b = _call(ir.Step.OP_INIT, "init_b", ir.Var("cb_x"))
    program = (_loop(INIT_A, OP, init_b, OP),)
    assert hoist(program, _effects) == program


def test_an_init_whose_argument_changes_per_iteration_stays() -> None:
    program = (_loop(_call(ir.Step.OP_INIT, "init_a", ir.Var("i")), OP),)
    assert hoist(program, _effects) == program


def test_an_init_under_a_condition_stays() -> None:
    program = (_loop(ir.If(ir.Compare(ir.Comparison.EQ, ir.Var("i"), ir.Const(0)), (INIT_A,)), OP),)
    assert hoist(program, _effects) == program


def test_a_call_repeating_the_state_it_sets_is_dropped() -> None:
    srca = _call(ir.Step.RECONFIG_SRCA, "srca", ir.Var("cb_x"))
    assert hoist((srca, OP, srca, OP), _effects) == (srca, OP, OP)
