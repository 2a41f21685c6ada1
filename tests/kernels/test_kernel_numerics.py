"""Generated kernels' numerics respond to the runtime configuration as hardware does.

The configuration reaches the emulator only through program.json (the runtime
translation of the plan), so editing the descriptor there changes the numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from kernel_helpers import kernel, run

from ttlgen.device import formats
from ttlgen.run import make_inputs, run_lowered

pytestmark = pytest.mark.device


def _config(**changes: Any) -> Any:
    def apply(program: dict[str, Any]) -> dict[str, Any]:
        program["compute_config"] = {**program["compute_config"], **changes}
        return program

    return apply


def test_fp32_dest_keeps_k_accumulation_more_accurate_than_16_bit_dest() -> None:
    lowered = kernel("matmul_fp32_dest", k_tiles=16, block=2)
    wide = run(lowered, seed=11)
    narrow = run(lowered, seed=11, program_overrides=_config(fp32_dest_acc_en=False))
    (w,), (n,) = wide.outputs.values(), narrow.outputs.values()
    assert wide.passed
    assert n.max_abs > 2 * w.max_abs and n.mean_abs > 2 * w.mean_abs


def test_unpack_to_dest_fp32_keeps_f32_inputs_exact_and_default_mode_truncates_to_tf32() -> None:
    lowered = kernel("eltwise_sub_f32_sfpu")
    exact = run(lowered, seed=5)
    truncated = run(lowered, seed=5, program_overrides=_config(unpack_to_dest_mode=[]))
    (e,), (t,) = exact.outputs.values(), truncated.outputs.values()
    assert e.max_rel < 1e-6
    assert 1e-4 < t.max_rel < 4e-3  # SrcA keeps 10 mantissa bits: relative 2^-10 per operand
    assert not truncated.passed


def test_fpu_read_of_an_unpack_to_dest_buffer_is_an_error() -> None:
    lowered = kernel("eltwise_add_f32")
    modes = ["UnpackToDestFp32"] + ["Default"] * 63
    report = run(lowered, seed=5, program_overrides=_config(unpack_to_dest_mode=modes))
    assert not report.passed and report.error is not None
    assert "UnpackToDestFp32" in report.error


def test_lofi_multiplies_fewer_mantissa_bits_than_hifi4() -> None:
    lowered = kernel("matmul_f32_out")
    hifi4 = run(lowered, seed=7)
    lofi = run(lowered, seed=7, program_overrides=_config(math_fidelity="LoFi"))
    hifi2 = run(lowered, seed=7, program_overrides=_config(math_fidelity="HiFi2"))
    (h,), (lo,), (h2,) = hifi4.outputs.values(), lofi.outputs.values(), hifi2.outputs.values()
    assert h.max_rel < 1e-5 < h2.max_rel < lo.max_rel
    assert lo.max_rel > 1e-3


def test_l1_accumulation_rounds_once_per_k_step_in_the_output_format() -> None:
    """out_k = bf16(out_{k-1} + x_k): the packer adds in L1 in the output's format, rounding
    each sum to nearest even (the calibrated packer, NUMERICS.md)."""
    lowered = kernel("l1_acc_sum_reduction")
    inputs = make_inputs(lowered.kernel, np.random.default_rng(3))
    report, outputs, exact = run_lowered(lowered, 3, inputs)
    assert report.passed
    x = formats.to_bf16(inputs["x"]).astype(np.float64)
    steps = [x[:, 64 * k : 64 * (k + 1)] for k in range(4)]
    stepwise = steps[0]
    for step in steps[1:]:
        stepwise = formats.to_bf16(stepwise + step, "nearest_even").astype(np.float64)
    once = formats.to_bf16(exact["out"], "nearest_even").astype(np.float64)
    out = outputs["out"].astype(np.float64)
    assert np.array_equal(out, stepwise)
    assert not np.array_equal(out, once)


def test_l1_accumulation_error_grows_with_k_in_16_bit_but_fp32_dest_stays_small() -> None:
    l1 = [next(iter(run(kernel("matmul_l1_acc", k_tiles=k, block=2), seed=2).outputs.values())).max_abs for k in (1, 16)]
    f32 = [next(iter(run(kernel("matmul_fp32_dest", k_tiles=k, block=2), seed=2).outputs.values())).max_abs for k in (1, 16)]
    assert l1[1] / l1[0] > f32[1] / f32[0]
    assert l1[1] > 2 * f32[1]


@pytest.mark.parametrize("block", [2, 4])
@pytest.mark.parametrize(("name", "method"), [("matmul_l1_acc", "l1_acc"), ("matmul_dst_roundtrip", "dst_roundtrip")])
def test_accumulation_kernels_follow_the_calibrated_mechanism_bit_for_bit(name: str, method: str, block: int) -> None:
    """The emulator runs the mechanism the calibration study chose (tests/device/numerics_study.py:
    a TF32 ties-away chain per product onto DST, one bf16 landing per K tile, an RNE packer),
    unsubblocked (block 2) and subblocked (block 4)."""
    from tests.device import numerics_study as study

    lowered = kernel(name, k_tiles=3, block=block)
    seed = 8
    report, outputs, _ = run_lowered(lowered, seed, make_inputs(lowered.kernel, np.random.default_rng(seed)))
    assert report.error is None
    chosen = next(m for m in study.CANDIDATES if m.name == study.CHOSEN)
    a, b = study.inputs(3, block, seed)
    model = study.simulate(chosen, method, a, b)
    np.testing.assert_array_equal(outputs["out"].astype(np.float64), model)
    # The rejected previous default (per-face landings, ties-away packer) differs.
    previous = next(m for m in study.CANDIDATES if m.name == "face16_fp32_l1away")
    assert not np.array_equal(study.simulate(previous, method, a, b), model)
