"""The data formats SrcA, SrcB and the packer hold, as the API spec says each call loads them.

The plan follows them through every compute program (ttlgen/plan/data_formats.py): a
reconfiguration is emitted only where its register holds another format, before the op's
init; an op, copy or pack whose registers hold the wrong format, and a start-up whose CBs
are not the first op's, are located build errors. Spell edits show each rule on the
shipped kernels and on a kernel that mixes formats; small programs pin the tracking.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kernel_helpers import all_kernels

from tests.conftest import GENERATED, SPECS, run_cli
from ttlgen.model.call_forms import ArgKind
from ttlgen.model.tt_metal_api import State
from ttlgen.plan import data_formats
from ttlgen.plan import kernel_ir as ir

SPELLING = Path("ops") / "tt_metal_spelling.yaml"

# A kernel whose two computations read CBs of different formats each iteration.
MIXED_KERNEL = """\
spec: ttlgen.kernel/v1
kernels:
  mixed_formats:
    summary: out = a + b in bf16, then wide = exp(x) in f32, per tile.
    target: blackhole
    dfbs:
      a: {index: 0, dtype: bf16, block: [1, 1], input: {shape: [1, 2]}}
      b: {index: 1, dtype: bf16, block: [1, 1], input: {shape: [1, 2]}}
      x: {index: 2, dtype: f32, block: [1, 1], input: {shape: [1, 2]}}
      out: {index: 16, dtype: bf16, block: [1, 1], output: {shape: [1, 2]}}
      wide: {index: 17, dtype: f32, block: [1, 1], output: {shape: [1, 2]}}
    body:
      - loop:
          var: i
          count: 2
          body:
            - wait: [a, b, x]
            - reserve: [out, wide]
            - store: {to: out, value: {op: tile_add, args: [a, b]}}
            - store: {to: wide, value: {op: tile_exp, args: [x]}}
            - pop: [a, b, x]
            - push: [out, wide]
    tolerance: {pcc: 0.999, max_rel: 2.0e-2, derivation: "bf16 FPU add (two bf16 roundings); f32 exp in fp32 DST"}
"""


def _edit(specs: Path, old: str, new: str) -> None:
    path = specs / SPELLING
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _validate_errors(specs: Path) -> list[str]:
    result = run_cli("validate", "--specs", specs)
    assert result.exit_code == 2, result.stdout
    return result.stderr.splitlines()[:-1]


def _mixed(specs: Path) -> Path:
    (specs / "kernels" / "mixed.yaml").write_text(MIXED_KERNEL, encoding="utf-8")
    return specs


# ------------------------------------------------------------------ errors at the spelling


def test_a_matmul_start_up_without_its_source_order_is_a_located_build_error(spec_copy: Path) -> None:
    _edit(spec_copy, "current: compute_kernel_hw_startup<SrcOrder::Reverse>({srcb}, {srca}, {pack})", "current: compute_kernel_hw_startup({srcb}, {srca}, {pack})")
    errors = _validate_errors(spec_copy)
    assert errors
    assert all(re.search(r"tt_metal_spelling\.yaml:\d+:\d+: kernel\.startup\.reverse\.current: compute_kernel_hw_startup in kernel ", e) for e in errors)
    assert any(
        "'matmul_subblocked' loads SrcA from cb_a, but the kernel's first op, matmul_block (" in e and "), reads cb_b through SrcA: " in e
        for e in errors
    )


def test_a_start_up_on_the_output_cb_is_a_located_build_error(spec_copy: Path) -> None:
    _edit(spec_copy, "current: compute_kernel_hw_startup({srca}, {srcb}, {pack})", "current: compute_kernel_hw_startup({pack}, {pack}, {pack})")
    errors = _validate_errors(spec_copy)
    assert any(
        "kernel.startup.regular.current: compute_kernel_hw_startup in kernel 'eltwise_add_bf16' loads SrcA from cb_out, "
        "but the kernel's first op, add_tiles (" in e
        for e in errors
    )


def test_an_op_reading_a_register_loaded_with_another_format_is_a_located_build_error(spec_copy: Path) -> None:
    _edit(_mixed(spec_copy), "reconfig_srca: reconfig_data_format_srca({cb})", "reconfig_srca: reconfig_data_format_srcb({cb})")
    # Every shipped kernel whose copies read CBs of two formats fails alike; this one is ours.
    (error,) = [e for e in _validate_errors(spec_copy) if "'mixed_formats'" in e]
    assert re.search(
        r"tt_metal_spelling\.yaml:\d+:\d+: kernel\.copy\.call: copy_tile in kernel 'mixed_formats' needs SrcA to hold the "
        r"format of cb_x \(Float32\), but SrcA holds that of cb_a \(Float16_b\), loaded by compute_kernel_hw_startup \(",
        error,
    ), error


def test_the_start_up_loads_each_register_with_the_cb_first_read_through_it() -> None:
    """A 16-bit broadcast is spelled to unpack through SrcB, so its CB goes to SrcB at start-up
    (in0, reversed), and the copy that follows reads SrcA's."""
    assert "      unpack: {srcb: input}\n" in (SPECS / "ops" / "tt_metal_spelling.yaml").read_text(encoding="utf-8")
    body = _body((GENERATED / "kernels" / "bcast_col_add_bf16" / "compute.cpp").read_text(encoding="utf-8"))
    # x is broadcast (through SrcB) first, then y copied (through SrcA).
    assert "compute_kernel_hw_startup<SrcOrder::Reverse>(cb_x, cb_y, cb_out);" in body
    assert not [line for line in body if "reconfig_data_format" in line]


# ------------------------------------------------------------------ where reconfigurations go


def _body(text: str) -> list[str]:
    return [line.strip() for line in text.split("kernel_main() {", 1)[1].splitlines()]


def test_no_shipped_kernel_of_one_format_reconfigures_a_register() -> None:
    """A kernel whose buffers all have one element type reads one format per register,
    which the start-up loads: it reconfigures nothing (a kernel mixing formats reconfigures
    where they change, below)."""
    checked = 0
    for name, lowered in all_kernels().items():
        if len({d.dtype for d in lowered.kernel.dfbs}) != 1:
            continue
        checked += 1
        text = (GENERATED / "kernels" / name / "compute.cpp").read_text(encoding="utf-8")
        assert "reconfig_data_format" not in text, name
    assert checked


def test_a_kernel_mixing_formats_reconfigures_where_the_format_changes_before_the_init(spec_copy: Path, tmp_path: Path) -> None:
    result = run_cli("build", "--specs", _mixed(spec_copy), "--out", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    body = _body((tmp_path / "out" / "kernels" / "mixed_formats" / "compute.cpp").read_text(encoding="utf-8"))
    reconfigs = [line for line in body if "reconfig_data_format" in line]
    # SrcA alternates between a (bf16) and x (f32), the packer between out and wide; SrcB
    # keeps b's format from the start-up.
    assert reconfigs == [
        "reconfig_data_format_srca(cb_a);",
        "pack_reconfig_data_format(cb_out);",
        "reconfig_data_format_srca(cb_x);",
        "pack_reconfig_data_format(cb_wide);",
    ]
    assert body[body.index("reconfig_data_format_srca(cb_a);") + 1] == "add_init(cb_a, cb_b);"
    assert body[body.index("reconfig_data_format_srca(cb_x);") + 1] == "copy_init(cb_x, 0, 0);"


@pytest.mark.device
def test_a_kernel_mixing_formats_passes_on_the_emulator(spec_copy: Path) -> None:
    """The emulator checks each unpack and pack against the format its register holds."""
    result = run_cli("run", "mixed_formats", "--specs", _mixed(spec_copy), "--seed", "3")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.startswith("mixed_formats (seed 3): PASS")


# ------------------------------------------------------------------ the tracking on small programs

SRCA = State.SRCA_FORMAT
FORMATS = {"cb_a": "Float16_b", "cb_b": "Float16_b", "cb_x": "Float32"}


def _format_of(cb: ir.Expr) -> str | None:
    return FORMATS.get(cb.name) if isinstance(cb, ir.Var) else None


def _loads(call: ir.Call) -> dict[State, ir.Expr | None]:
    return {SRCA: call.args[0].value} if call.function in ("startup", "srca") else {}


def _call(step: ir.Step, name: str, cb: str) -> ir.Call:
    return ir.Call(step, name, (), (ir.Arg(ArgKind.CB, ir.Var(cb)),))


def _reads(cb: str) -> ir.Call:
    return ir.Call(ir.Step.OP, "op", (), (), format_needs=((SRCA, ir.Var(cb)),))


STARTUP_A = _call(ir.Step.HW_INIT, "startup", "cb_a")


def _loop(*body: ir.Stmt) -> ir.For:
    return ir.For("i", ir.Const(2), tuple(body), generated=False)


def test_a_reconfiguration_to_a_cb_of_the_held_format_is_dropped() -> None:
    body = (STARTUP_A, _call(ir.Step.RECONFIG_SRCA, "srca", "cb_b"), _reads("cb_b"))
    assert data_formats.drop_redundant(body, _loads, _format_of) == (STARTUP_A, _reads("cb_b"))


def test_a_reconfiguration_that_another_in_the_loop_undoes_stays_in_the_loop() -> None:
    to_x, to_a = _call(ir.Step.RECONFIG_SRCA, "srca", "cb_x"), _call(ir.Step.RECONFIG_SRCA, "srca", "cb_a")
    body = (STARTUP_A, _loop(to_a, _reads("cb_a"), to_x, _reads("cb_x")))
    assert data_formats.drop_redundant(body, _loads, _format_of) == body


def test_a_reconfiguration_the_loop_never_undoes_is_dropped_inside_it() -> None:
    to_a = _call(ir.Step.RECONFIG_SRCA, "srca", "cb_a")
    body = (STARTUP_A, _loop(to_a, _reads("cb_a")))
    assert data_formats.drop_redundant(body, _loads, _format_of) == (STARTUP_A, _loop(_reads("cb_a")))


def test_a_read_after_branches_that_disagree_is_an_error() -> None:
    branch = ir.If(ir.Compare(ir.Comparison.EQ, ir.Var("i"), ir.Const(0)), (_call(ir.Step.RECONFIG_SRCA, "srca", "cb_x"),))
    (problem,) = data_formats.check((STARTUP_A, _loop(branch, _reads("cb_a"))), _loads, _format_of, "k")
    assert problem.message == "op in kernel 'k' needs SrcA to hold the format of cb_a (Float16_b), but no call before it loads SrcA on every path"
