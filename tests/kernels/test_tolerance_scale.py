"""What a tolerance's ``max_rel`` is relative to.

By default the largest error is divided by max|ref|. A sum can cancel: its result may be
near zero while each rounding on the way was the size of its terms. With ``relative_to:
terms`` the error is divided by the reference computed on the inputs' magnitudes (for a
sum, the sum of its terms' magnitudes), so a correct kernel passes on every draw, however
its sums cancel.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from kernel_helpers import reduce_kernel_spec

from tests.conftest import real_plan
from ttlgen import pipeline
from ttlgen.model.kernels import RelativeTo
from ttlgen.plan.kernels import LoweredKernel
from ttlgen.run import compare, run_lowered


def _sum_kernel(specs: Path, relative_to: str | None) -> LoweredKernel:
    target = min(t.name for t in real_plan()[0].targets.targets if t.kernel_api is not None)
    field = "" if relative_to is None else f"relative_to: {relative_to}, "
    tolerance = f'{{pcc: 0.9, max_rel: 4.0e-3, {field}derivation: "two bf16 roundings of sums, 2^-8 of the terms each"}}'
    # Each sum lands in a 16-bit DST, so its rounding is the size of its terms.
    spec = reduce_kernel_spec("sum_that_cancels", target, dim="scalar", tolerance=tolerance, options="{fp32-dest-acc-en: disabled}")
    (specs / "kernels" / "cancels.yaml").write_text(spec, encoding="utf-8")
    _, planned = pipeline.plan(specs)
    (lowered,) = [k for k in planned.kernels if k.kernel.name == "sum_that_cancels"]
    return lowered


def _cancelling_input() -> dict[str, np.ndarray]:
    """Two 32x32 tiles: the right half of each tile is the left half negated, plus 1/1024
    per element, so every column sum is the size of its terms (about 5.7) and rounds in
    bf16, while each tile sums to about 1 (less where bf16 rounds the offset away)."""
    rng = np.random.default_rng(7)
    left = rng.standard_normal((32, 16)).astype(np.float32)
    # bf16 values, which their negations cancel exactly as the device stores them.
    left = (left.view(np.uint32) & 0xFFFF0000).view(np.float32)
    tile = np.concatenate([left, -left], axis=1) + np.float32(1 / 1024)
    return {"x": np.concatenate([tile, tile], axis=1)}


def _terms() -> float:
    """The sum of one tile's |x| (the offset as stored differs in the fourth digit at most)."""
    return 1024 * float(np.mean(np.abs(_cancelling_input()["x"])))


def test_max_rel_divides_the_largest_error_by_the_largest_reference_value() -> None:
    metrics = compare(np.array([1.0, 10.5]), np.array([1.0, 10.0]))
    assert metrics.max_rel == 0.05


def test_max_rel_divides_the_largest_error_by_the_scale_given() -> None:
    metrics = compare(np.array([1.0, 10.5]), np.array([1.0, 10.0]), np.array([-100.0, 50.0]))
    assert metrics.max_rel == 0.005


def test_relative_to_is_the_result_unless_the_spec_says_terms(spec_copy: Path) -> None:
    assert _sum_kernel(spec_copy, None).kernel.tolerance.relative_to is RelativeTo.RESULT


def test_a_sum_that_cancels_passes_against_the_size_of_its_terms(spec_copy: Path) -> None:
    lowered = _sum_kernel(spec_copy, "terms")
    report, _, _ = run_lowered(lowered, 0, inputs=_cancelling_input())
    (metrics,) = report.outputs.values()
    assert report.passed, report
    assert np.isclose(metrics.max_rel, metrics.max_abs / _terms(), rtol=1e-3)
    assert report.to_json()["tolerance"]["relative_to"] == "terms"


def test_the_same_run_misses_a_tolerance_relative_to_its_cancelled_result(spec_copy: Path) -> None:
    lowered = _sum_kernel(spec_copy, "result")
    report, _, expected = run_lowered(lowered, 0, inputs=_cancelling_input())
    (metrics,) = report.outputs.values()
    assert np.max(np.abs(expected["out"])) < _terms() / 100  # the sums cancelled
    assert not report.passed
    assert metrics.max_rel > lowered.kernel.tolerance.max_rel
