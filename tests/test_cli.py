"""The command line explains itself and never shows a traceback for a user error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tests.tree_support import small_specs
from ttlgen.cli import app

COMMANDS = sorted(c.name or c.callback.__name__ for c in app.registered_commands if c.callback is not None)


def test_top_level_help_lists_every_command() -> None:
    result = run_cli("--help")
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_explains_itself(command: str) -> None:
    result = run_cli(command, "--help")
    assert result.exit_code == 0
    assert "Usage:" in result.stdout
    # A one-line summary plus at least one sentence of explanation or an option list.
    assert len(result.stdout.strip().splitlines()) >= 5


def test_no_arguments_prints_help() -> None:
    result = run_cli()
    assert "Usage:" in result.stdout + result.stderr


def test_unknown_command_is_a_usage_error() -> None:
    assert run_cli("frobnicate").exit_code == 2


def test_user_errors_print_no_traceback_in_a_real_process(tmp_path: Path) -> None:
    bad = tmp_path / "specs" / "x.yaml"
    bad.parent.mkdir()
    bad.write_text("spec: nope/v1\n")
    result = subprocess.run(
        [sys.executable, "-m", "ttlgen", "build", "--specs", str(bad.parent), "--out", str(tmp_path / "out")],
        capture_output=True, text=True,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("specs/x.yaml:1:7: spec: unknown spec kind 'nope'")
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def _ttlgen(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ttlgen", *map(str, args)],
        capture_output=True, text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_the_console_entry_point_ends_with_the_commands_exit_code_and_its_whole_output(tmp_path: Path) -> None:
    # The default --specs, read from the current directory: the real specs without their
    # kernels (tests/tree_support.py), as what the tree holds is not the point.
    small_specs(tmp_path / "specs")
    out = tmp_path / "out"
    built = _ttlgen("build", "--out", out, "--json", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["files"] == len([p for p in out.rglob("*") if p.is_file()])
    (out / "MANIFEST").write_text("stale\n")
    stale = _ttlgen("check", "--out", out, cwd=tmp_path)
    assert (stale.returncode, stale.stderr.splitlines()[0]) == (1, f"stale: {out / 'MANIFEST'}")
    unknown = _ttlgen("no-such-command", cwd=tmp_path)
    assert unknown.returncode == 2 and "No such command" in unknown.stderr
    helped = _ttlgen("--help", cwd=tmp_path)
    assert helped.returncode == 0 and all(command in helped.stdout for command in COMMANDS)


def test_the_console_entry_point_runs_the_exit_handlers(tmp_path: Path) -> None:
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('handler ran', flush=True))\n"
        "from ttlgen.cli import main\n"
        "sys.argv = ['ttlgen', 'validate']\n"
        "main()\n"
    )
    small_specs(tmp_path / "specs")
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("handler ran\n")
