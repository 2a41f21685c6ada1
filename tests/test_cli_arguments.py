"""Hostile or mistaken arguments end in exit 2 with the valid range, never a traceback."""

from __future__ import annotations

import importlib.util
import json
from importlib import metadata
from pathlib import Path

import pytest

from tests.conftest import REPO, SPECS, run_cli
from ttlgen.cli import device_extra_command


@pytest.mark.parametrize("seed", ["-1", "18446744073709551616", "99999999999999999999999", "x"])
def test_run_rejects_a_seed_outside_its_range(seed: str) -> None:
    result = run_cli("run", "eltwise_add_bf16", "--seed", seed)
    assert result.exit_code == 2
    assert "--seed" in result.stderr
    if seed.lstrip("-").isdigit():
        assert "0<=x<=18446744073709551615" in result.stderr


@pytest.mark.parametrize("command", [["run", "eltwise_add_bf16"], ["accuracy"]])
def test_device_commands_without_numpy_name_the_install_command(
    command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numpy" else real(name, *a))
    result = run_cli(*command)
    assert result.exit_code == 2
    assert f"needs NumPy, from ttlgen's `device` extra: {device_extra_command()}\n" in result.stderr


class _Installed:
    """A distribution whose pip record (direct_url.json) is ``record``."""

    def __init__(self, record: str | None) -> None:
        self.record = record

    def read_text(self, name: str) -> str | None:
        return self.record if name == "direct_url.json" else None


@pytest.mark.parametrize(
    ("record", "command"),
    [
        ('{"url": "file:///src/ttl%20gen", "dir_info": {"editable": true}}', "pip install -e '/src/ttl gen[device]'"),
        ('{"url": "file:///src/ttlgen", "dir_info": {}}', "pip install '/src/ttlgen[device]'"),
        (None, "pip install -e '.[device]' in the ttlgen repository"),
    ],
    ids=["editable", "from-a-directory", "no-record"],
)
def test_the_device_extra_command_fits_how_ttlgen_was_installed(
    record: str | None, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ttlgen is installed from its repository: a package-index name would install something else.
    monkeypatch.setattr(metadata, "distribution", lambda name: _Installed(record))
    assert device_extra_command() == command


def test_diff_without_differences_exits_0_and_prints_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = run_cli("diff")
    assert (result.exit_code, result.stdout) == (0, "")


def test_diff_json_carries_the_lists_and_the_text(generated_copy: Path) -> None:
    (generated_copy / "stray.txt").write_text("old\n")
    result = run_cli("diff", "--specs", SPECS, "--out", generated_copy, "--json", "--no-cache")
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["status"] == "stale"
    assert payload["orphaned"] == ["stray.txt"]
    assert "--- a/generated/stray.txt" in payload["diff"]


def test_did_you_mean_names_the_closest_valid_names_only() -> None:
    from ttlgen.errors import did_you_mean

    assert did_you_mean("tile_slu", ["tile_silu", "tile_sub", "tile_add"]) == " (did you mean 'tile_silu' or 'tile_sub'?)"
    assert did_you_mean("zzz", ["tile_add"]) == ""
