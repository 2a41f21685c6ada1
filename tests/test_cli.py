"""The command line explains itself and never shows a traceback for a user error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli
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


def test_a_build_runs_without_the_cycle_collector_and_restores_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from tests.conftest import SPECS
    from ttlgen import generate

    seen: list[bool] = []
    real = generate.generate

    def recording(*args: object, **kwargs: object) -> generate.GeneratedTree:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(generate, "generate", recording)
    assert gc.isenabled()
    result = run_cli("build", "--specs", SPECS, "--out", tmp_path / "out", "--no-cache")
    assert result.exit_code == 0, result.stderr
    assert seen == [False]
    assert gc.isenabled()
