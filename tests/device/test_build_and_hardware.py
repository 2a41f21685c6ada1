"""Compile caching, and the hardware variant (skipped without ttnn and a device)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from device_helpers import FIXTURES, Runner

from ttlgen.device import (
    api_headers,
    build_executable,
    run_program_on_device,
    ttnn_device_available,
)
from ttlgen.device.formats import to_bf16


def _kernels(ct: list[int]) -> dict[str, tuple[Path, list[int]]]:
    d = FIXTURES / "copy"
    return {
        "reader": (d.parent / "_shared" / "reader_tiles.cpp", []),
        "compute": (d / "compute.cpp", ct),
        "writer": (d.parent / "_shared" / "writer_tiles.cpp", []),
    }


@pytest.mark.device
def test_executable_is_cached_by_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_DEVICE_CACHE", str(tmp_path))
    first = build_executable(_kernels([2, 0]), api_headers("current"))
    mtime = first.stat().st_mtime_ns
    assert build_executable(_kernels([2, 0]), api_headers("current")) == first
    assert first.stat().st_mtime_ns == mtime
    assert build_executable(_kernels([2, 1]), api_headers("current")) != first


@pytest.mark.device
def test_same_helper_name_in_reader_and_writer_links(run: Runner) -> None:
    x = to_bf16(np.random.default_rng(8).standard_normal((32, 64)))  # exact through SrcA
    out = run("same_helper_names", {"x": x}).outputs["out"]
    np.testing.assert_array_equal(out, x)


@pytest.mark.device
def test_hardware_run_matches_emulator(run: Runner) -> None:
    ok, reason = ttnn_device_available()
    if not ok:
        pytest.skip(reason)
    rng = np.random.default_rng(7)
    inputs = {"a": rng.standard_normal((64, 64)), "b": rng.standard_normal((64, 64))}
    hw = run_program_on_device(FIXTURES / "eltwise_add", inputs).outputs["out"]
    emu = run("eltwise_add", inputs).outputs["out"]
    np.testing.assert_allclose(hw, emu, rtol=2**-7)
