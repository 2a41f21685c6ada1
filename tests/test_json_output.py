"""Every command's --json output is strict JSON (RFC 8259): a number that is not finite is
the string "inf", "-inf" or "nan" (README "Commands"), never the bare ``NaN`` or
``Infinity`` that json.dumps writes by default and strict parsers refuse."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
import typer.main

from tests.conftest import GENERATED, REPO, SPECS, real_project, run_cli
from ttlgen import run as run_module
from ttlgen.cli import app
from ttlgen.errors import json_output
from ttlgen.model.kernels import Kernel


def strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON (RFC 8259)")

    return json.loads(text, parse_constant=refuse)


def test_json_output_writes_each_non_finite_number_as_its_string() -> None:
    payload = {"max_abs": math.inf, "low": -math.inf, "rows": [math.nan, (np.float64("inf"),)], "pcc": 0.5}
    assert strict_json(json_output(payload)) == {"max_abs": "inf", "low": "-inf", "rows": ["nan", ["inf"]], "pcc": 0.5}


def test_json_output_writes_finite_values_as_json_dumps_does() -> None:
    payload = {"status": "ok", "files": 3, "ratio": 1e-7, "nested": [{"a": None, "b": True}], "text": "é\n"}
    assert json_output(payload) == json.dumps(payload, indent=2) + "\n"


def _kernel_with_inputs() -> Kernel:
    return next(k for k in real_project().kernels.kernels if any(d.tensor is not None and d.tensor.role == "input" for d in k.dfbs))


def _json_commands() -> Iterator[tuple[str, ...]]:
    def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                yield from walk(sub, (*path, name))
        elif any("--json" in p.opts for p in command.params):
            yield path

    return walk(typer.main.get_command(app), ())


def _invocations(tmp_path: Path) -> dict[tuple[str, ...], list[str | Path]]:
    """A cheap invocation of each command that takes --json: its answer where it needs no
    network, else an error envelope (the upstream commands fetch tt-metal's releases)."""
    kernel = _kernel_with_inputs().name
    tree = ["--specs", SPECS, "--out", GENERATED]
    return {
        ("build",): ["build", "--specs", SPECS, "--out", tmp_path / "out"],
        ("check",): ["check", *tree],
        ("diff",): ["diff", *tree],
        ("validate",): ["validate", "--specs", SPECS],
        ("compat",): ["compat", "--against", "HEAD", *tree],
        ("explain",): ["explain", GENERATED / "kernels" / kernel / "program.json", *tree],
        ("resolve",): ["resolve", kernel, "--specs", SPECS],
        ("run",): ["run", kernel, "--seed", "1", "--specs", SPECS],
        ("accuracy",): ["accuracy", "--k", "1", "--block", "2", "--specs", SPECS],
        ("upstream", "fetch"): ["upstream", "fetch", "--level", "no_such_level", "--specs", SPECS],
        ("upstream", "compile"): ["upstream", "compile", "tile_no_such_kernel", "--specs", SPECS, "--out", GENERATED],
        ("upstream", "check"): ["upstream", "check", "--level", "no_such_level", "--specs", SPECS],
    }


def test_every_command_that_takes_json_has_an_invocation_here(tmp_path: Path) -> None:
    assert sorted(_invocations(tmp_path)) == sorted(_json_commands())


DEVICE_COMMANDS = {("run",), ("accuracy",)}  # they run kernels on the emulator


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, marks=[pytest.mark.device] if c in DEVICE_COMMANDS else [], id=" ".join(c)) for c in sorted(_json_commands())],
)
def test_every_command_prints_strict_json(command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # compat reads the specs at a git ref of this repository
    result = run_cli(*_invocations(tmp_path)[command], "--json")
    assert result.stdout, result.stderr
    strict_json(result.stdout)


@pytest.mark.device
def test_run_prints_the_non_finite_metrics_of_a_kernel_as_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    # NaN inputs reach the float64 reference and the emulator's outputs alike (as inputs at
    # the float32 maximum do, stored as infinity), so every metric they feed is non-finite.
    def nan_inputs(kernel: Kernel, rng: np.random.Generator) -> dict[str, npt.NDArray[np.float32]]:
        finite = make_inputs(kernel, rng)
        return {name: np.full_like(data, np.nan) for name, data in finite.items()}

    make_inputs = run_module.make_inputs
    monkeypatch.setattr(run_module, "make_inputs", nan_inputs)
    result = run_cli("run", _kernel_with_inputs().name, "--seed", "1", "--json", "--specs", SPECS)
    assert result.exit_code == 1, result.stdout + result.stderr
    report = strict_json(result.stdout)
    metrics = [value for output in report["outputs"].values() for value in output.values()]
    assert {"inf", "nan"} & set(metrics), report["outputs"]
    assert all(isinstance(v, float) or v in ("inf", "-inf", "nan") for v in metrics)
