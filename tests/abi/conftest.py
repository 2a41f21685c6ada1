"""Session fixtures of the ABI tests: the generated ABI tree and a compiler runner."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pytest
from abi_support import WARNINGS, build_abi, copy_specs


@pytest.fixture(scope="session")
def abi_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("abi")
    out = root / "generated"
    build_abi(copy_specs(root), out)
    return out


@pytest.fixture(scope="session")
def compiler() -> Callable[[Sequence[str]], subprocess.CompletedProcess[str]]:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        pytest.skip("gcc and g++ are needed to compile the generated headers")

    def run(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), capture_output=True, text=True, check=False, timeout=120)

    return run


@pytest.fixture(scope="session")
def kabi(abi_out: Path) -> Iterator[ModuleType]:
    """The generated komorebi_abi package, imported from the session's tree."""
    path = str(abi_out / "python")
    sys.path.insert(0, path)
    stale = [name for name in sys.modules if name == "komorebi_abi" or name.startswith("komorebi_abi.")]
    for name in stale:
        del sys.modules[name]
    try:
        module = importlib.import_module("komorebi_abi")
        importlib.import_module("komorebi_abi.programs.mapcollect")
        yield module
    finally:
        sys.path.remove(path)


@pytest.fixture(scope="session")
def vectors_binary(abi_out: Path, compiler: Callable[[Sequence[str]], subprocess.CompletedProcess[str]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/abi/vectors.c built against the generated header."""
    binary = tmp_path_factory.mktemp("vectors") / "vectors"
    source = Path(__file__).with_name("vectors.c")
    built = compiler(["gcc", "-std=c11", *WARNINGS, f"-I{abi_out / 'include'}", str(source), "-o", str(binary)])
    assert built.returncode == 0, built.stderr
    return binary
