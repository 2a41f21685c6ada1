"""What ttlgen offers the tools around it: its version, shell completion, pre-commit hooks."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib

import pytest
import yaml

from tests.conftest import REPO, run_cli
from ttlgen import __version__


def test_version_prints_the_package_version() -> None:
    result = run_cli("--version")
    assert result.exit_code == 0
    assert result.stdout == f"ttlgen {__version__}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_the_package_version_is_stated_once() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "version" not in project and "version" in project["dynamic"]


def test_shell_completion_script_is_offered_for_bash() -> None:
    # The option takes no shell name: it detects the shell it is run from (its nearest shell
    # ancestor), so it is run from bash, as a user types it; the test's own process tree may
    # hold no shell. A second command keeps bash from exec'ing ttlgen in its own place.
    command = f"{shlex.quote(sys.executable)} -m ttlgen --show-completion; exit $?"
    done = subprocess.run(["bash", "--norc", "-c", command], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "complete" in done.stdout and "ttlgen" in done.stdout


def test_every_pre_commit_hook_runs_a_ttlgen_command_that_passes_on_this_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {hook["id"] for hook in hooks} >= {"ttlgen-check", "ttlgen-validate"}
    # The hooks' commands, run in-process from the repository's root as pre-commit runs them
    # there (the console entry point's own process is tests/test_cli.py's).
    monkeypatch.chdir(REPO)
    for hook in hooks:
        program, *args = shlex.split(hook["entry"])
        assert program == "ttlgen" and hook["language"] == "python" and hook["pass_filenames"] is False
        done = run_cli(*args)
        assert done.exit_code == 0, f"{hook['id']}: {done.stderr}"
