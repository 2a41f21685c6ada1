"""The generated ABI code meets the repository's gates: Python passes ruff and mypy --strict
and imports with the standard library alone; C/C++ is clean under the pinned clang-format."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from abi_support import REPO


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip(f"{name} is not installed")
    return found


def test_python_codec_passes_ruff(abi_out: Path) -> None:
    run = subprocess.run(
        [_tool("ruff"), "check", "--no-cache", "--config", str(REPO / "pyproject.toml"), "komorebi_abi"],
        cwd=abi_out / "python", capture_output=True, text=True, check=False, timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_python_codec_passes_mypy_strict(abi_out: Path) -> None:
    run = subprocess.run(
        [_tool("mypy"), "--strict", "--no-incremental", "--cache-dir", os.devnull, "-p", "komorebi_abi"],
        cwd=abi_out / "python", capture_output=True, text=True, check=False, timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_python_codec_needs_only_the_standard_library(abi_out: Path) -> None:
    # -S -I: no site-packages, no user path; only the generated package is added.
    code = "import komorebi_abi, komorebi_abi.programs.mapcollect; print(komorebi_abi.layout.CONTROL_BYTES)"
    run = subprocess.run(
        [sys.executable, "-S", "-I", "-B", "-c", f"import sys; sys.path.insert(0, {str(abi_out / 'python')!r}); {code}"],
        capture_output=True, text=True, check=False, timeout=60,
    )
    assert (run.returncode, run.stdout) == (0, "5568\n"), run.stderr


def test_c_and_cpp_outputs_are_clang_format_clean(abi_out: Path) -> None:
    sources = sorted(str(p) for pattern in ("*.h", "*.hpp", "*.c") for p in abi_out.rglob(pattern))
    assert len(sources) >= 4  # km_abi.h, km_layout.hpp, the offsets program, a program header
    shutil.copy(REPO / ".clang-format", abi_out / ".clang-format")
    run = subprocess.run(
        [_tool("clang-format"), "--dry-run", "-Werror", *sources], capture_output=True, text=True, check=False, timeout=120
    )
    assert run.returncode == 0, run.stderr
