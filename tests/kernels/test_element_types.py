"""Every sub-expression of a kernel value has its own element type, and the plan follows it.

The rule is in ttlgen/plan/element_types.py: a buffer has its dtype, an op the type of its
widest data operand (the first one's among equals), a plain store is a copy of the source's
type, and a store's target widens nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from ttlgen import pipeline
from ttlgen.model.kernels import OpExpr, Store, walk_statements, walk_values
from ttlgen.pipeline import load_project
from ttlgen.plan import element_types

MIXED_KERNEL = """\
spec: ttlgen.kernel/v1
kernels:
  {name}:
    summary: Types of mixed-width operands.
    target: blackhole
    dfbs:
      x: {{index: 0, dtype: {x}, block: [1, 1], input: {{shape: [1, 1]}}}}
      y: {{index: 1, dtype: {y}, block: [1, 1], input: {{shape: [1, 1]}}}}
      out: {{index: 16, dtype: {out}, block: [1, 1], output: {{shape: [1, 1]}}}}
    body:
      - wait: [x, y]
      - reserve: out
      - store:
          to: out
          value: {value}
      - pop: [x, y]
      - push: out
    tolerance: {{pcc: 0.999, max_rel: 1.0e-2, derivation: "n/a"}}
"""
BCAST_ADD = "{op: tile_add, args: [{op: tile_bcast, attrs: {bcast: col}, args: [x]}, y]}"


def _write(specs: Path, name: str, value: str, x: str = "bf16", y: str = "f32", out: str = "f32") -> Path:
    path = specs / "kernels" / "mixed.yaml"
    path.write_text(MIXED_KERNEL.format(name=name, value=value, x=x, y=y, out=out))
    return path


def _types(specs: Path, name: str) -> dict[str, str | None]:
    """Op name -> inferred type, for the ops of the kernel's store."""
    project = load_project(specs)
    kernel = next(k for k in project.kernels.kernels if k.name == name)
    types = element_types.infer(kernel, project.ops)
    (store,) = [s for s in walk_statements(kernel.body) if isinstance(s, Store)]
    return {expr.op: types.of(expr) for expr in walk_values(store.value) if isinstance(expr, OpExpr)}


def test_broadcast_keeps_its_input_type_under_a_wider_store(spec_copy: Path) -> None:
    _write(spec_copy, "k", BCAST_ADD)
    assert _types(spec_copy, "k")["tile_bcast"] == "bf16"


def test_binary_op_of_16_and_32_bit_operands_is_32_bit(spec_copy: Path) -> None:
    _write(spec_copy, "k", BCAST_ADD, out="bf16")
    assert _types(spec_copy, "k")["tile_add"] == "f32"


def test_equally_wide_operands_give_the_first_operands_type(spec_copy: Path) -> None:
    _write(spec_copy, "k", "{op: tile_add, args: [x, y]}", x="f16", y="bf16", out="f32")
    assert _types(spec_copy, "k")["tile_add"] == "f16"


def test_plain_store_is_a_copy_of_the_source_type(spec_copy: Path) -> None:
    """A bf16 buffer copied to an f32 one needs no 32-bit DST (the packer widens it)."""
    path = spec_copy / "kernels" / "copy.yaml"
    path.write_text(
        MIXED_KERNEL.format(name="widening_copy", value="x", x="bf16", y="bf16", out="f32")
        .replace("wait: [x, y]", "wait: [x]")
        .replace("pop: [x, y]", "pop: [x]")
        .replace("      y: {index: 1, dtype: bf16, block: [1, 1], input: {shape: [1, 1]}}\n", "")
    )
    _, plan = pipeline.plan(spec_copy)
    (lowered,) = [k for k in plan.kernels if k.kernel.name == "widening_copy"]
    assert lowered.dest_width == 16


def test_bf16_broadcast_feeding_an_f32_add_is_a_located_build_error(spec_copy: Path, tmp_path: Path) -> None:
    """Regression: build accepted this with fp32_dest_acc_en and the kernel failed on the emulator."""
    _write(spec_copy, "bcast_bf16_into_f32_add", BCAST_ADD)
    result = run_cli("build", "--specs", spec_copy, "--out", tmp_path / "out")
    assert result.exit_code == 2
    error, note = result.stderr.splitlines()[:2]
    assert error.startswith("specs/kernels/mixed.yaml:15:23: kernels.bcast_bf16_into_f32_add.body[2].store.value.op: ")
    assert "the configuration resolver rejects kernel 'bcast_bf16_into_f32_add'" in error
    assert note.startswith("  note: specs/kernels/mixed.yaml:15:45: kernels.bcast_bf16_into_f32_add.body[2].store.value.args[0].op: ")
    assert "tile_bcast with 'bf16' elements" in note
    assert not (tmp_path / "out").exists()


def test_resolve_rejects_the_same_kernel_as_build(tmp_path: Path) -> None:
    """`ttlgen resolve` of the same ops (its default result type is the first operand's)."""
    description = tmp_path / "kernel.yaml"
    description.write_text(
        "target: blackhole\n"
        "dfbs: {0: bf16, 1: f32, 16: f32}\n"
        "ops:\n"
        "  - {id: b, op: tile_bcast, operands: [{dfb: 0}], attrs: {bcast: col}}\n"
        "  - {id: s, op: tile_add, operands: [{value: b}, {dfb: 1}]}\n"
    )
    result = run_cli("resolve", description, "--specs", Path(__file__).resolve().parents[2] / "specs")
    assert result.exit_code == 1
    assert "tile_bcast with 'bf16' elements" in result.stderr


def _compute_text(lowered: object) -> str:
    from ttlgen.emit._base import EmitContext, Templates
    from ttlgen.emit._header import finalize
    from ttlgen.emit._templates import default_templates_dir
    from ttlgen.emit.kernels import emit_kernel

    (compute,) = [f for f in emit_kernel(lowered, EmitContext(Templates(default_templates_dir()))) if f.path.endswith("compute.cpp")]  # type: ignore[arg-type]
    return finalize(compute).decode("utf-8")


def test_a_16_bit_broadcast_is_unpacked_through_srcb(spec_copy: Path) -> None:
    """bcast.h@00b0fa3f: B2D for non-32-bit formats; the hardware start-up gives x to SrcB."""
    _write(spec_copy, "bcast_bf16", BCAST_ADD, x="bf16", y="bf16", out="bf16")
    _, plan = pipeline.plan(spec_copy)
    (lowered,) = [k for k in plan.kernels if k.kernel.name == "bcast_bf16"]
    source = _compute_text(lowered)
    assert "compute_kernel_hw_startup<SrcOrder::Reverse>(cb_x, cb_y, cb_out);" in source
    # The start-up loaded SrcB with x's format, so the broadcast needs no reconfiguration.
    assert "reconfig_data_format" not in source


@pytest.mark.device
def test_a_32_bit_broadcast_is_unpacked_through_srca_and_runs(spec_copy: Path) -> None:
    """bcast.h@00b0fa3f: a 32-bit input unpacks straight to DST (A2D) through SrcA's unpacker."""
    from ttlgen.run import run_lowered

    _write(spec_copy, "bcast_f32", BCAST_ADD, x="f32", y="f32", out="f32")
    project, plan = pipeline.plan(spec_copy)
    (lowered,) = [k for k in plan.kernels if k.kernel.name == "bcast_f32"]
    source = _compute_text(lowered)
    # x is read through SrcA first (then y's copy, also through SrcA): no SrcB read, no swap.
    assert "compute_kernel_hw_startup(cb_x, cb_x, cb_out);" in source
    assert "reconfig_data_format" not in source
    report, _, _ = run_lowered(lowered, seed=3, api=project.api)
    assert report.passed, report.error or report.outputs
