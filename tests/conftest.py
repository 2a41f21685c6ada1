"""Shared test helpers: the repository's paths and an in-process CLI runner."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ttlgen.cli import app

REPO = Path(__file__).resolve().parent.parent
SPECS = REPO / "specs"
GENERATED = REPO / "generated"
TEMPLATES = REPO / "templates"


@dataclass(frozen=True)
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(*args: str | Path) -> CliResult:
    result = CliRunner().invoke(app, [str(a) for a in args])
    # A user error must end in an exit code, never an unhandled exception.
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return CliResult(result.exit_code, result.stdout, result.stderr)


@pytest.fixture(autouse=True, scope="session")
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep the tree cache of the test run away from the user's own cache."""
    import os

    os.environ["TTLGEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("ttlgen-cache"))


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    """A writable copy of the real spec tree, named specs/ so messages read the same."""
    target = tmp_path / "specs"
    shutil.copytree(SPECS, target)
    return target


@pytest.fixture
def generated_copy(tmp_path: Path) -> Path:
    target = tmp_path / "generated"
    shutil.copytree(GENERATED, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target
