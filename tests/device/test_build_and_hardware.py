"""Compile caching, and the hardware variant (skipped without ttnn and a device)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from device_helpers import FIXTURES, Runner

from ttlgen.device import (
    api_headers,
    build_executable,
    cache_dir,
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
def test_executable_is_cached_by_content() -> None:
    # In the run's compile cache (conftest.private_cache), which other device tests share: a
    # fresh directory would rebuild the emulator's runtime library for this test alone.
    first = build_executable(_kernels([2, 0]), api_headers("current"))
    mtime = first.stat().st_mtime_ns
    assert build_executable(_kernels([2, 0]), api_headers("current")) == first
    assert first.stat().st_mtime_ns == mtime
    assert build_executable(_kernels([2, 1]), api_headers("current")) != first


def test_the_compile_cache_lives_under_the_cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TTLGEN_DEVICE_CACHE", raising=False)
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "root"))
    assert cache_dir() == tmp_path / "root" / "device"


def test_ttlgen_device_cache_moves_the_compile_cache_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "root"))
    monkeypatch.setenv("TTLGEN_DEVICE_CACHE", str(tmp_path / "device"))
    assert cache_dir() == tmp_path / "device"


@pytest.mark.parametrize("explicit", [False, True], ids=["under-the-root", "TTLGEN_DEVICE_CACHE"])
def test_with_caching_off_the_compile_cache_is_a_directory_of_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explicit: bool
) -> None:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "root"))
    if explicit:
        monkeypatch.setenv("TTLGEN_DEVICE_CACHE", str(tmp_path / "device"))
    else:
        monkeypatch.delenv("TTLGEN_DEVICE_CACHE", raising=False)
    monkeypatch.setenv("TTLGEN_NO_CACHE", "1")
    directory = cache_dir()
    assert directory.parent == Path(tempfile.gettempdir()) and directory.is_dir()
    assert not (tmp_path / "root").exists() and not (tmp_path / "device").exists()


@pytest.mark.parametrize("explicit", [False, True], ids=["under-the-root", "TTLGEN_DEVICE_CACHE"])
def test_an_unwritable_compile_cache_builds_in_a_directory_of_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explicit: bool
) -> None:
    not_a_directory = tmp_path / "a-file"
    not_a_directory.write_text("x")
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(not_a_directory))
    if explicit:
        monkeypatch.setenv("TTLGEN_DEVICE_CACHE", str(not_a_directory / "device"))
    else:
        monkeypatch.delenv("TTLGEN_DEVICE_CACHE", raising=False)
    directory = cache_dir()
    assert directory.parent == Path(tempfile.gettempdir())
    tempfile.NamedTemporaryFile(dir=directory).close()  # writable


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
