"""The runtime's vectorised numerics agree with their scalar references bit for bit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from device_helpers import FIXTURES

from ttlgen.device.build import CXX, CXXFLAGS, INCLUDE_DIR, RUNTIME_DIR


@pytest.mark.device
def test_vector_rounding_matches_scalar_rounding_bit_for_bit(tmp_path: Path) -> None:
    exe = tmp_path / "round_block_check"
    source = FIXTURES / "_cpp" / "round_block_check.cpp"
    subprocess.run(
        [CXX, *CXXFLAGS, f"-I{RUNTIME_DIR}", f"-I{INCLUDE_DIR}", str(source), "-o", str(exe)],
        check=True,
    )
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"


@pytest.mark.device
def test_vector_fpu_accumulation_matches_scalar_reference_bit_for_bit(tmp_path: Path) -> None:
    exe = tmp_path / "fpu_chain_check"
    source = FIXTURES / "_cpp" / "fpu_chain_check.cpp"
    subprocess.run(
        [CXX, *CXXFLAGS, f"-I{RUNTIME_DIR}", str(source), str(RUNTIME_DIR / "fpu_matmul.cpp"), "-o", str(exe)],
        check=True,
    )
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"


@pytest.mark.device
def test_vector_bf16_operand_unpack_matches_scalar_unpack_bit_for_bit(tmp_path: Path) -> None:
    exe = tmp_path / "bf16_unpack_check"
    source = FIXTURES / "_cpp" / "bf16_unpack_check.cpp"
    subprocess.run(
        [CXX, *CXXFLAGS, f"-I{RUNTIME_DIR}", str(source), str(RUNTIME_DIR / "fpu_matmul.cpp"), "-o", str(exe)],
        check=True,
    )
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"


@pytest.mark.device
def test_tiles_shared_with_the_helper_thread_match_tiles_computed_in_turn(tmp_path: Path) -> None:
    exe = tmp_path / "tile_pool_check"
    source = FIXTURES / "_cpp" / "tile_pool_check.cpp"
    sources = [str(RUNTIME_DIR / name) for name in ("fpu_matmul.cpp", "tile_pool.cpp")]
    subprocess.run([CXX, *CXXFLAGS, f"-I{RUNTIME_DIR}", str(source), *sources, "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=60).stdout
    mismatches, helper = out.split("\n")[:2]
    assert mismatches == "0"
    # The helper must have taken part, or the comparison proves nothing about sharing.
    assert helper in ("helper yes", "helper none")
