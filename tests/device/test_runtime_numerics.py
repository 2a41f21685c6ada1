"""The runtime's vectorised numerics agree with their scalar references bit for bit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from device_helpers import FIXTURES

from tests.conftest import LONG_TESTS
from ttlgen.device.build import CXX, CXXFLAGS, INCLUDE_DIR, RUNTIME_DIR, build_runtime


def check_program(tmp_path: Path, name: str, *runtime: str, args: tuple[str, ...] = ()) -> str:
    """Build the check program fixtures/_cpp/<name>.cpp, linked with the runtime sources it
    tests, run it, and return what it prints.

    The runtime sources come from the emulator's runtime library, which every emulator run
    links: built once per content with the same flags (build_runtime), it is not compiled
    again for each check."""
    assert all((RUNTIME_DIR / source).is_file() for source in runtime), runtime
    exe = tmp_path / name
    command = [CXX, *CXXFLAGS, f"-I{RUNTIME_DIR}", f"-I{INCLUDE_DIR}", str(FIXTURES / "_cpp" / f"{name}.cpp"), str(build_runtime())]
    subprocess.run([*command, "-o", str(exe)], check=True)
    return subprocess.run([str(exe), *args], capture_output=True, text=True, check=True, timeout=60).stdout


@pytest.mark.device
def test_vector_rounding_matches_scalar_rounding_bit_for_bit(tmp_path: Path) -> None:
    assert check_program(tmp_path, "round_block_check").strip() == "0"


@pytest.mark.device
def test_vector_fpu_accumulation_matches_scalar_reference_bit_for_bit(tmp_path: Path) -> None:
    assert check_program(tmp_path, "fpu_chain_check", "fpu_matmul.cpp").strip() == "0"


@pytest.mark.device
def test_chained_calls_kept_in_registers_match_the_calls_landed_one_by_one(tmp_path: Path) -> None:
    mismatches, overflowed = check_program(tmp_path, "fpu_chain_calls_check", "fpu_matmul.cpp").split()
    assert mismatches == "0"
    # Sums must reach Inf in the middle of some chains, or the case is not exercised.
    assert int(overflowed) > 0


@pytest.mark.device
def test_vector_bf16_operand_unpack_matches_scalar_unpack_bit_for_bit(tmp_path: Path) -> None:
    assert check_program(tmp_path, "bf16_unpack_check", "fpu_matmul.cpp").strip() == "0"


@pytest.mark.device
def test_tiles_shared_with_the_helper_thread_match_tiles_computed_in_turn(tmp_path: Path) -> None:
    # The helper takes part in this many calls; on a busy machine the caller waits for a
    # helper the system has not scheduled, so the suite asks for few (TTLGEN_LONG_TESTS=1: 200).
    shared = "200" if LONG_TESTS else "20"
    out = check_program(tmp_path, "tile_pool_check", "fpu_matmul.cpp", "tile_pool.cpp", args=(shared,))
    mismatches, helper = out.split("\n")[:2]
    assert mismatches == "0"
    # The helper must have taken part, or the comparison proves nothing about sharing.
    assert helper in ("helper yes", "helper none")
