"""Quality gates on the generated tree: lint, strict typing, formatting, warning-free compiles."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GENERATED, REPO

PYTHON_ROOT = GENERATED / "python"
C_SOURCES = sorted(p for p in GENERATED.rglob("*") if p.suffix in (".h", ".hpp", ".c", ".cpp", ".inc"))
HEADERS = sorted(p for p in (GENERATED / "include").rglob("*") if p.suffix in (".h", ".hpp"))
PACKAGES = sorted(p.name for p in PYTHON_ROOT.iterdir() if (p / "__init__.py").is_file()) if PYTHON_ROOT.is_dir() else []


def tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; install the test extra: pip install -e '.[test]'")
    return found


def test_generated_python_passes_ruff() -> None:
    result = subprocess.run(
        [tool("ruff"), "check", "--isolated", "--no-cache", "--target-version", "py311",
         "--select", "E,F,W,I,B,UP,SIM,RUF", "--ignore", "E501", str(PYTHON_ROOT)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def mypy_complaints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What mypy --strict says of each package, from one run over all of them (each run
    first checks the standard library's stubs: most of its time, paid once here)."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path_factory.mktemp("mypy")),
         "--python-version", "3.11", *(arg for package in PACKAGES for arg in ("-p", package))],
        capture_output=True, text=True, cwd=PYTHON_ROOT, env={"MYPYPATH": str(PYTHON_ROOT), "PATH": "/usr/bin:/bin"},
    )
    # Each message starts with the file it is about, under its package's directory.
    complaints = {package: "".join(line + "\n" for line in result.stdout.splitlines() if line.startswith(f"{package}/")) for package in PACKAGES}
    # A failure no package's lines explain (a bad option, a crash) fails every package.
    assert result.returncode == 0 or any(complaints.values()), result.stdout + result.stderr
    return complaints


@pytest.mark.parametrize("package", PACKAGES)
def test_generated_python_package_passes_mypy_strict(package: str, mypy_complaints: dict[str, str]) -> None:
    assert mypy_complaints[package] == ""


@pytest.mark.parametrize("package", PACKAGES)
def test_generated_python_package_imports_with_only_the_standard_library(package: str) -> None:
    # -I isolates from site-packages, so any third-party import fails.
    result = subprocess.run(
        [sys.executable, "-I", "-B", "-c", f"import sys; sys.path.insert(0, {str(PYTHON_ROOT)!r}); import {package}"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def clang_format_complaints() -> dict[Path, str]:
    """What clang-format says of each C/C++ source, from one run over all of them (a run per
    file would cost its start-up a hundred and fifty times)."""
    result = subprocess.run(
        [tool("clang-format"), f"--style=file:{REPO / '.clang-format'}", "--dry-run", "-Werror", *map(str, C_SOURCES)],
        capture_output=True, text=True,
    )
    complaints = {path: "".join(line + "\n" for line in result.stderr.splitlines() if line.startswith(f"{path}:")) for path in C_SOURCES}
    # A failure no file's lines explain (a bad style file, a crash) fails every file.
    assert result.returncode == 0 or any(complaints.values()), result.stderr
    return complaints


@pytest.mark.parametrize("path", C_SOURCES, ids=lambda p: p.relative_to(GENERATED).as_posix())
def test_generated_c_and_cpp_are_clang_format_clean(path: Path, clang_format_complaints: dict[Path, str]) -> None:
    assert clang_format_complaints[path] == ""


@pytest.mark.parametrize("header", HEADERS, ids=lambda p: p.relative_to(GENERATED).as_posix())
def test_generated_header_compiles_warning_free_on_its_own(header: Path, tmp_path: Path) -> None:
    c_header = header.suffix == ".h"
    source = tmp_path / ("tu.c" if c_header else "tu.cpp")
    source.write_text(f'#include "{header.relative_to(GENERATED / "include").as_posix()}"\n')
    compiler = ["gcc", "-std=c11"] if c_header else ["g++", "-std=c++17"]
    result = subprocess.run(
        [*compiler, "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only",
         f"-I{GENERATED / 'include'}", str(source)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
