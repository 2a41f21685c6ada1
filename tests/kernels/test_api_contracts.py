"""Contracts tt-metal states that no compile can check, held by the API spec and the lowering.

ttnn 0.81.1's reduce.h: "REDUCE_ROW SUM/AVG uses MVMUL with swapped operands (scaler→SrcA,
data→SrcB). Caller must call reconfig_data_format(icb_scaler, icb) before reduce_init for
this path." The level's spec states it (reduce_init's ``expects`` and
``expects_swapped_when``); the lowering loads SrcA with the scaler's format and SrcB with
the data's before such an init, and the data's and the scaler's before any other reduce; the
emulator reads the operands through those registers, so a kernel that breaks the contract
fails there when the formats differ.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SPECS, real_project, run_cli
from ttlgen.model.tt_metal_api import KernelKind, State

# Column sums, then row sums, of an f32 tile weighted by a bf16 scaler: the two reduces ask
# for SrcA and SrcB the other way round, and the formats differ.
CONTRACT_KERNEL = """\
spec: ttlgen.kernel/v1
kernels:
  reduce_mixed_formats:
    summary: Column sums, then row sums, of each f32 tile, weighted by a bf16 SUM scaler.
    target: blackhole
    dfbs:
      x: {index: 0, dtype: f32, block: [1, 1], input: {shape: [1, 2]}}
      scaler: {index: 2, dtype: bf16, block: [1, 1], fill: scaler}
      cols: {index: 16, dtype: f32, block: [1, 1], output: {shape: [1, 2]}}
      rows: {index: 17, dtype: f32, block: [1, 1], output: {shape: [1, 2]}}
    body:
      - wait: scaler
      - loop:
          var: i
          count: 2
          body:
            - wait: x
            - reserve: [cols, rows]
            - store: {to: cols, value: {op: tile_reduce, attrs: {reduce_dim: col, pool: sum}, args: [x, scaler]}}
            - store: {to: rows, value: {op: tile_reduce, attrs: {reduce_dim: row, pool: sum}, args: [x, scaler]}}
            - pop: x
            - push: [cols, rows]
      - pop: scaler
    tolerance: {pcc: 0.999, max_rel: 1.0e-2, derivation: "f32 reduce through 19-bit sources into an fp32 DST"}
  row_sum_first:
    summary: Row sums of each f32 tile, weighted by a bf16 SUM scaler.
    target: blackhole
    dfbs:
      x: {index: 0, dtype: f32, block: [1, 1], input: {shape: [1, 2]}}
      scaler: {index: 2, dtype: bf16, block: [1, 1], fill: scaler}
      out: {index: 16, dtype: f32, block: [1, 1], output: {shape: [1, 2]}}
    body:
      - wait: scaler
      - loop:
          var: i
          count: 2
          body:
            - wait: x
            - reserve: out
            - store: {to: out, value: {op: tile_reduce, attrs: {reduce_dim: row, pool: sum}, args: [x, scaler]}}
            - pop: x
            - push: out
      - pop: scaler
    tolerance: {pcc: 0.999, max_rel: 1.0e-2, derivation: "f32 reduce through 19-bit sources into an fp32 DST"}
"""
KERNEL = "reduce_mixed_formats"


@pytest.fixture(scope="module")
def contract_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The shipped specs plus the contract kernel, built: (specs, generated tree)."""
    root = tmp_path_factory.mktemp("contract")
    specs = root / "specs"
    shutil.copytree(SPECS, specs)
    (specs / "kernels" / "contract.yaml").write_text(CONTRACT_KERNEL, encoding="utf-8")
    result = run_cli("build", "--specs", specs, "--out", root / "out")
    assert result.exit_code == 0, result.stderr
    return specs, root / "out"


def _reduce_init(level_name: str) -> object:
    level = real_project().api.level(level_name)
    assert level is not None
    (form,) = level.forms("reduce_init", KernelKind.COMPUTE)
    return form


def test_the_current_level_states_reduce_hs_contract() -> None:
    form = _reduce_init("current")
    expected = form.expected  # type: ignore[attr-defined]
    params = [p.name for p in form.signature.params]  # type: ignore[attr-defined]

    def reads(pool: str, dim: str) -> dict[State, str | None]:
        return {state: params[index] for state, index in expected([pool, dim])}

    swapped = {State.SRCA_FORMAT: "icb_scaler", State.SRCB_FORMAT: "icb"}
    in_order = {State.SRCA_FORMAT: "icb", State.SRCB_FORMAT: "icb_scaler"}
    assert reads("PoolType::SUM", "ReduceDim::REDUCE_ROW") == swapped
    assert reads("PoolType::AVG", "ReduceDim::REDUCE_ROW") == swapped
    assert reads("PoolType::MAX", "ReduceDim::REDUCE_ROW") == in_order
    assert reads("PoolType::SUM", "ReduceDim::REDUCE_COL") == in_order
    assert reads("PoolType::SUM", "ReduceDim::REDUCE_SCALAR") == in_order
    # A computed template argument leaves the registers unknown.
    assert expected([None, "ReduceDim::REDUCE_ROW"]) is None


def test_the_legacy_level_reads_the_data_through_srca_always() -> None:
    form = _reduce_init("legacy")
    params = [p.name for p in form.signature.params]  # type: ignore[attr-defined]
    reads = {state: params[index] for state, index in form.expected(["SUM", "ReduceDim::REDUCE_ROW"])}  # type: ignore[attr-defined]
    assert reads == {State.SRCA_FORMAT: "icb", State.SRCB_FORMAT: "icb_scaler"}


def _before(lines: list[str], pattern: str) -> list[str]:
    """The statements between the previous `tile_regs_acquire();` and the line matching
    ``pattern``."""
    index = next(i for i, line in enumerate(lines) if re.search(pattern, line))
    start = max(i for i in range(index) if lines[i].strip() == "tile_regs_acquire();")
    return [line.strip() for line in lines[start + 1 : index]]


def test_a_row_sum_loads_the_scalers_format_into_srca_before_its_init(contract_tree: tuple[Path, Path]) -> None:
    _, out = contract_tree
    lines = (out / "kernels" / KERNEL / "compute.cpp").read_text(encoding="utf-8").splitlines()
    # reduce.h's reconfig_data_format(icb_scaler, icb): SrcA from the scaler, SrcB from the data.
    assert sorted(_before(lines, r"reduce_init<PoolType::SUM, ReduceDim::REDUCE_ROW>")) == [
        "reconfig_data_format_srca(cb_scaler);",
        "reconfig_data_format_srcb(cb_x);",
    ]
    # The column sum before it (and after it, each iteration) loads them the other way round.
    assert sorted(_before(lines, r"reduce_init<PoolType::SUM, ReduceDim::REDUCE_COL>")) == [
        "reconfig_data_format_srca(cb_x);",
        "reconfig_data_format_srcb(cb_scaler);",
    ]


def test_a_kernel_whose_first_op_is_a_row_sum_starts_the_hardware_with_the_scaler_in_srca(contract_tree: tuple[Path, Path]) -> None:
    # The start-up loads what the first op reads: the scaler into SrcA (the source order
    # that swaps the first operand into SrcB), so the row sum needs no reconfiguration.
    _, out = contract_tree
    text = (out / "kernels" / "row_sum_first" / "compute.cpp").read_text(encoding="utf-8")
    assert "compute_kernel_hw_startup<SrcOrder::Reverse>(cb_x, cb_scaler, cb_out);" in text
    assert "reconfig_data_format_src" not in text


@pytest.mark.device
def test_the_emulator_runs_the_kernel_that_keeps_the_contract(contract_tree: tuple[Path, Path]) -> None:
    specs, _ = contract_tree
    result = run_cli("run", KERNEL, "--specs", specs, "--seed", "7")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "PASS" in result.stdout


@pytest.mark.device
def test_the_emulator_rejects_a_row_sum_without_the_contracts_reconfiguration(contract_tree: tuple[Path, Path], tmp_path: Path) -> None:
    from ttlgen.device import run_program
    from ttlgen.device.harness import ProtocolError

    _, out = contract_tree
    kernel = tmp_path / KERNEL
    shutil.copytree(out / "kernels" / KERNEL, kernel)
    compute = kernel / "compute.cpp"
    lines = compute.read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if "reduce_init<PoolType::SUM, ReduceDim::REDUCE_ROW>" in line)
    # Drop the row sum's reconfigurations: SrcA keeps the data's (f32) format, SrcB the
    # scaler's (bf16), the column sum's way round.
    kept = [line for i, line in enumerate(lines) if not (index - 3 < i < index and "reconfig_data_format" in line)]
    assert len(kept) == len(lines) - 2
    compute.write_text("\n".join(kept) + "\n", encoding="utf-8")
    x = np.random.default_rng(3).standard_normal((32, 64)).astype(np.float32)
    # The row sum reads the data through SrcB, which holds the scaler's format.
    with pytest.raises(ProtocolError, match=r"reduce_tile\(cb=0, Float32\): SrcB is configured for Float16_b \(CB 2\)"):
        run_program(kernel, {"x": x}, api_dir=out / "emulator" / "current")
