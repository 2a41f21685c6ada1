"""The kernel IR: binding spelled calls, IR analysis and simplification, and printing.

Assertions about lowering decisions read the IR of the spec'd kernels, not their text.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kernel_helpers import all_kernels

from ttlgen.emit._kernel_printer import expression, function
from ttlgen.errors import Mark
from ttlgen.model import kernel_names
from ttlgen.model.spelling import ArgKind, CallForm, parse_call
from ttlgen.plan import kernel_ir as ir
from ttlgen.plan.kernel_ir import Binary, BinaryOp, Const, Step, Var, add, div, mod, mul

HERE = Mark("spelling.yaml", 3, 7)


def _form(text: str) -> CallForm:
    return parse_call(text, HERE, None)


def test_bind_gives_each_argument_its_placeholder_kind() -> None:
    call = ir.bind(Step.PACK, _form("pack_tile<true>({dst}, {cb}, {tile})"), {"dst": Var("t_"), "cb": Var("cb_out"), "tile": Const(2)})
    assert call.function == "pack_tile" and call.origin == HERE
    assert call.template_args == (ir.Arg(ArgKind.LITERAL, ir.Symbol("true")),)
    assert [a.kind for a in call.args] == [ArgKind.DST, ArgKind.CB, ArgKind.TILE]
    assert call.arg(ArgKind.CB) == Var("cb_out")


def test_bind_keeps_integer_literals_as_constants() -> None:
    call = ir.bind(Step.OP_INIT, _form("mm_init({lhs.cb}, 0)"), {"lhs.cb": Var("cb_a")})
    assert call.args[1] == ir.Arg(ArgKind.LITERAL, Const(0))


def test_bind_names_a_placeholder_without_a_value() -> None:
    with pytest.raises(ir.UnboundPlaceholder) as info:
        ir.bind(Step.OP, _form("exp_tile({dst})"), {"pack": Var("cb_out")})
    assert info.value.key == "dst" and info.value.given == ("pack",)


def test_add_and_mul_fold_zero_and_one() -> None:
    t = Var("t_")
    assert add(Const(0), t) == t and add(t, Const(0)) == t
    assert mul(t, 1) == t and mul(t, 0) == Const(0) and mul(Const(0), 4) == Const(0)
    assert add(t, Const(1)) == Binary(BinaryOp.ADD, t, Const(1))


def test_printer_parenthesises_by_precedence_only() -> None:
    t, r0, c0 = Var("t_"), Var("r0_"), Var("c0_")
    assert expression(add(add(mul(add(r0, div(t, 2)), 4), c0), mod(t, 2))) == "(r0_ + t_ / 2) * 4 + c0_ + t_ % 2"
    assert expression(mul(div(Var("sb_"), 2), 2)) == "sb_ / 2 * 2"
    nested = Binary(BinaryOp.MOD, Var("block"), Binary(BinaryOp.MUL, Binary(BinaryOp.DIV, Var("rows"), Var("br")), Var("grid")))
    assert expression(nested) == "block % (rows / br * grid)"


def test_printer_wraps_parameters_after_the_open_parenthesis_at_100_columns() -> None:
    u32 = ir.Scalar.U32
    params = tuple(ir.Param(f"parameter_number_{i}", u32) for i in range(5))
    text = function(ir.Function("f", params, ()))
    first, second, close = text.splitlines()
    assert first == "void f(uint32_t parameter_number_0, uint32_t parameter_number_1, uint32_t parameter_number_2,"
    assert second == "       uint32_t parameter_number_3, uint32_t parameter_number_4) {"
    assert close == "}" and len(first) <= 100


def test_simplify_drops_a_generated_single_trip_loop_whose_variable_is_unused() -> None:
    body = ir.Call(Step.DST_ACQUIRE, "acquire", (), ())
    loop = ir.For("t_", Const(1), (body,), generated=True)
    assert ir.simplify((loop,)) == (body,)


def test_simplify_keeps_a_single_trip_loop_whose_variable_is_used() -> None:
    use = ir.Declare("r0_", ir.Scalar.U32, Var("sb_"), ir.Storage.CONST)
    loop = ir.For("sb_", Const(1), (use,), generated=True)
    assert ir.simplify((loop,)) == (loop,)


def test_simplify_keeps_a_single_trip_loop_of_the_kernel_spec() -> None:
    loop = ir.For("k", Const(1), (ir.Call(Step.L1_ACC, "acc", (), ()),), generated=False)
    assert ir.simplify((loop,)) == (loop,)


def _dst_steps(body: tuple[ir.Stmt, ...]) -> list[Step]:
    return [s.step for s in ir.walk(body) if isinstance(s, ir.Call) and s.step in ir.DST_STEPS]


@pytest.mark.parametrize("name", sorted(all_kernels()))
def test_compute_program_hands_dst_over_in_protocol_order(name: str) -> None:
    steps = _dst_steps(all_kernels()[name].compute.body)
    assert steps and steps == list(ir.DST_STEPS) * (len(steps) // 4)


@pytest.mark.parametrize("name", sorted(all_kernels()))
def test_compute_program_declares_exactly_the_cbs_it_uses(name: str) -> None:
    compute = all_kernels()[name].compute
    declared = {s.name for s in compute.body if isinstance(s, ir.Declare) and s.storage is ir.Storage.CONSTEXPR}
    used = {
        a.value.name
        for c in ir.calls(compute.body)
        for a in (*c.template_args, *c.args)
        if a.kind is ArgKind.CB and isinstance(a.value, Var)
    }
    assert declared == used


@pytest.mark.parametrize("name", sorted(all_kernels()))
def test_reader_moves_one_block_per_input_wait(name: str) -> None:
    """The reader's block reads mirror the compute kernel's waits of input buffers, per CB."""
    k = all_kernels()[name]
    inputs = {kernel_names.cb(t.name) for t in k.inputs}

    def per_cb(body: tuple[ir.Stmt, ...], wanted: Callable[[ir.Call], bool]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for call in ir.calls(body):
            cb = call.arg(ArgKind.CB)
            if wanted(call) and isinstance(cb, Var) and cb.name in inputs:
                counts[cb.name] = counts.get(cb.name, 0) + 1
        return counts

    reads = per_cb(k.reader.body, lambda c: c.function == kernel_names.READ_BLOCK)
    assert reads and reads == per_cb(k.compute.body, lambda c: c.step is Step.CB_WAIT_FRONT)


@pytest.mark.parametrize("name", sorted(all_kernels()))
def test_every_call_is_spelled_by_the_spec_or_defined_by_its_program(name: str) -> None:
    """What an API check needs: each API call points at its spelling, each helper exists."""
    k = all_kernels()[name]
    for program in (k.compute, k.reader, k.writer):
        defined = {f.name for f in program.functions}
        for call in program.calls():
            if call.step is Step.HELPER:
                assert call.function in defined, (program.kind, call.function)
            else:
                assert call.origin is not None and call.origin.file == "specs/ops/tt_metal_spelling.yaml", call
