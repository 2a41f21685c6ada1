"""The command line explains itself and never shows a traceback for a user error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
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


def _ttlgen(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ttlgen", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_the_console_entry_point_ends_with_the_commands_exit_code_and_its_whole_output(tmp_path: Path) -> None:
    # main() ends the process without the interpreter's teardown: the exit code, stdout,
    # stderr and the files written must be exactly what a normal exit gives.
    out = tmp_path / "out"
    built = _ttlgen("build", "--out", out, "--json", cwd=REPO)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["files"] == len([p for p in out.rglob("*") if p.is_file()])
    (out / "MANIFEST").write_text("stale\n")
    stale = _ttlgen("check", "--out", out, cwd=REPO)
    assert (stale.returncode, stale.stderr.splitlines()[0]) == (1, f"stale: {out / 'MANIFEST'}")
    unknown = _ttlgen("no-such-command", cwd=REPO)
    assert unknown.returncode == 2 and "No such command" in unknown.stderr
    helped = _ttlgen("--help", cwd=REPO)
    assert helped.returncode == 0 and all(command in helped.stdout for command in COMMANDS)


def test_the_console_entry_point_runs_the_exit_handlers(tmp_path: Path) -> None:
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('handler ran', flush=True))\n"
        "from ttlgen.cli import main\n"
        "sys.argv = ['ttlgen', 'validate']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("handler ran\n")


def test_the_console_entry_point_freezes_what_the_cli_import_made_and_runs_the_command_with_the_collector_on() -> None:
    probe = (
        "import gc, sys\n"
        "import ttlgen.__main__ as entry, ttlgen.cli\n"
        "ttlgen.cli.main = lambda: print(gc.isenabled(), gc.get_freeze_count() > 0)\n"
        "entry.main()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True True\n"
