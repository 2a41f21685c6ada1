"""`ttlgen run` and `ttlgen accuracy`: exit codes, text and JSON output."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kernel_helpers import SPECS

from tests.conftest import CliResult, real_project, run_cli

pytestmark = pytest.mark.device


def test_run_passes_and_reports_metrics() -> None:
    result = run_cli("run", "eltwise_add_bf16", "--seed", "4", "--specs", SPECS)
    assert result.exit_code == 0, result.stderr
    assert "eltwise_add_bf16 (seed 4): PASS" in result.stdout
    assert "pcc=" in result.stdout and "max_abs=" in result.stdout and "mean_abs=" in result.stdout


def test_run_json_has_metrics_plan_and_verdict() -> None:
    result = run_cli("run", "joint_resolution_f32", "--seed", "4", "--json", "--specs", SPECS)
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["status"] == "pass" and data["seed"] == 4
    assert data["plan"]["unpack_to_dest_fp32"] == [0, 1]
    assert set(data["outputs"]["out"]) == {"max_abs", "mean_abs", "pcc", "max_rel"}


def test_run_exits_1_when_a_kernel_misses_its_tolerance(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(SPECS, specs)
    path = specs / "kernels" / "elementwise.yaml"
    text = path.read_text().replace(
        'tolerance: {pcc: 0.999999, max_rel: 4.0e-3, derivation: "f32 FPU: TF32 truncation of both operands',
        'tolerance: {pcc: 0.999999, max_rel: 1.0e-7, derivation: "too tight for the FPU: TF32 truncation of both operands',
    )
    path.write_text(text)
    result = run_cli("run", "eltwise_add_f32", "--seed", "1", "--specs", specs)
    assert result.exit_code == 1
    assert "FAIL" in result.stdout


def test_run_unknown_kernel_is_bad_input() -> None:
    result = run_cli("run", "no_such_kernel", "--specs", SPECS)
    assert result.exit_code == 2
    assert "unknown kernel 'no_such_kernel'" in result.stderr


@pytest.fixture(scope="module")
def accuracy_json() -> CliResult:
    """`accuracy --json` over K 1 and 4, for the tests that only read what it printed."""
    return run_cli("accuracy", "--k", "1,4", "--block", "2", "--json", "--specs", SPECS)


@pytest.fixture(scope="module")
def hardware_json() -> CliResult:
    """The same with --hardware."""
    return run_cli("accuracy", "--k", "1,4", "--block", "2", "--hardware", "--json", "--specs", SPECS)


def test_accuracy_json_rows(accuracy_json: CliResult) -> None:
    result = accuracy_json
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)["rows"]
    assert [(r["method"], r["k"], r["block"]) for r in rows] == [
        (m, k, 2) for m in ("l1_acc", "dst_roundtrip", "fp32_dest") for k in (1, 4)
    ]
    for row in rows:
        assert {"method", "k", "block", "subblocked", "max_abs", "mean_abs", "pcc"} <= set(row)
        assert row["subblocked"] is False and row["pcc"] > 0.999
    fp32 = [r for r in rows if r["method"] == "fp32_dest"]
    l1 = [r for r in rows if r["method"] == "l1_acc"]
    assert fp32[1]["max_abs"] < l1[1]["max_abs"]


def test_accuracy_marks_subblocked_blocks() -> None:
    result = run_cli("accuracy", "--k", "1", "--block", "4", "--json", "--specs", SPECS)
    rows = json.loads(result.stdout)["rows"]
    assert {r["method"]: r["subblocked"] for r in rows} == {"l1_acc": True, "dst_roundtrip": True, "fp32_dest": True}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "1,,2"], "--k: empty item in '1,,2'"),
        (["--k", "0,x"], "--k: '0' is not a positive integer"),
        (["--k", "-4"], "--k: '-4' is not a positive integer"),
        (["--k", "1.5"], "--k: '1.5' is not a positive integer"),
        (["--block", "two"], "--block: 'two' is not a positive integer"),
        (["--k", "257"], "--k: 257 exceeds the limit of 256"),
        (["--block", "17"], "--block: 17 exceeds the limit of 16"),
        (["--k", "9" * 5000], "exceeds the limit of 256"),
        (["--k", ",".join(str(k) for k in range(1, 18))], "--k: 17 values, at most 16"),
        (["--seeds", "17"], "--seeds: 17 is outside 1..16"),
        (["--k", "256,255,254", "--block", "16,15,14"], "the table is too large"),
    ],
)
def test_accuracy_rejects_malformed_or_oversized_requests_with_exit_2(args: list[str], message: str) -> None:
    result = run_cli("accuracy", *args, "--specs", SPECS)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_accuracy_limits_are_checked_before_the_specs_are_read(tmp_path: Path) -> None:
    # --k 100000 must fail at once, not after building (or failing to build) anything.
    result = run_cli("accuracy", "--k", "100000", "--specs", tmp_path / "no-such-specs")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "ttlgen: --k: 100000 exceeds the limit of 256 (expected comma-separated integers 1..256)"
    ]


def test_accuracy_shows_progress_on_stderr_but_not_with_json(accuracy_json: CliResult) -> None:
    text = run_cli("accuracy", "--k", "1", "--block", "2", "--specs", SPECS)
    assert text.exit_code == 0
    assert "ttlgen accuracy: row 3/3: fp32_dest K=1 block=2" in text.stderr
    quiet = accuracy_json
    assert quiet.exit_code == 0 and quiet.stderr == ""
    asked = run_cli("accuracy", "--k", "1", "--block", "2", "--json", "--progress", "--specs", SPECS)
    assert "row 1/3" in asked.stderr
    json.loads(asked.stdout)


def test_accuracy_hardware_json_carries_hardware_rows_and_ratios(hardware_json: CliResult) -> None:
    result = hardware_json
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert "tt-lang" in data["hardware"]["source"]
    by_key = {(r["method"], r["k"]): r for r in data["rows"]}
    l1 = by_key[("l1_acc", 4)]
    assert l1["hardware"] == {"max_abs": 0.228, "mean_abs": 0.026, "pcc": 0.999995112, "one_minus_pcc": pytest.approx(4.888e-6)}
    assert l1["ratio"]["mean_abs"] == pytest.approx(l1["mean_abs"] / 0.026)
    assert l1["ratio"]["one_minus_pcc"] == pytest.approx(l1["one_minus_pcc"] / (1 - 0.999995112))
    # No hardware row was measured for the round trip at K = 1 or for fp32 DST.
    assert by_key[("dst_roundtrip", 1)]["hardware"] is None and by_key[("fp32_dest", 4)]["ratio"] is None


def test_accuracy_hardware_json_keeps_the_types_of_the_measurement_conditions(hardware_json: CliResult) -> None:
    result = hardware_json
    assert result.exit_code == 0, result.stderr
    conditions = json.loads(result.stdout)["hardware"]["conditions"]
    assert conditions["fp32_dest_acc_en"] is False and conditions["math_fidelity"] == "HiFi4"


def test_accuracy_hardware_table_prints_hardware_columns_and_source() -> None:
    result = run_cli("accuracy", "--k", "16", "--block", "2", "--hardware", "--specs", SPECS)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "hw mean" in lines[0] and "mean x" in lines[0]
    (row,) = [line for line in lines if line.startswith("dst_roundtrip")]
    assert "0.123" in row and "1.591e-05" in row
    assert any(line.startswith("hardware rows: Measured on Tenstorrent hardware") for line in lines)


def _envelope(stdout: str) -> list[str]:
    """The messages of the error envelope every command prints with --json when it fails."""
    data = json.loads(stdout)
    assert data["status"] == "error"
    return [e["message"] for e in data["errors"]]


def test_accuracy_json_reports_bad_input_in_the_error_envelope() -> None:
    result = run_cli("accuracy", "--k", "0", "--json", "--specs", SPECS)
    assert result.exit_code == 2
    assert _envelope(result.stdout) == ["--k: '0' is not a positive integer (expected comma-separated integers 1..256)"]


@pytest.fixture
def no_compiler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A TTLGEN_CXX that does not exist, and an empty compile cache, so the run needs it."""
    missing = str(tmp_path / "no-such-g++")
    with _compiling_with(missing, tmp_path, monkeypatch):
        yield missing


@contextlib.contextmanager
def _compiling_with(cxx: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The emulator's builds use ``cxx`` and an empty compile cache, and forget what they
    learnt of the compiler before and after."""
    from ttlgen.device import build

    monkeypatch.setattr(build, "CXX", cxx)
    monkeypatch.setenv("TTLGEN_DEVICE_CACHE", str(tmp_path / "device-cache"))
    build.compiler_version.cache_clear()
    build._linker.cache_clear()
    yield
    build.compiler_version.cache_clear()
    build._linker.cache_clear()


@pytest.fixture(params=["as", "ld"])
def compiler_without(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A TTLGEN_CXX that is the real g++ but finds no assembler (or no linker) on its PATH, and
    an empty compile cache: the name of the missing program."""
    missing = request.param
    real = shutil.which("g++")
    if real is None:
        pytest.skip("no g++")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("g++", "as"):
        if tool != missing:
            found = shutil.which(tool)
            assert found is not None
            (bin_dir / tool).symlink_to(found)
    # Present but not executable: g++ passes it over, as it would a program it cannot run.
    (bin_dir / missing).write_text("")
    wrapper = tmp_path / "cxx"
    wrapper.write_text(f'#!/bin/sh\nPATH={bin_dir} exec {bin_dir / "g++"} "$@"\n')
    wrapper.chmod(0o755)
    with _compiling_with(str(wrapper), tmp_path, monkeypatch):
        yield missing


def test_run_with_a_compiler_that_cannot_assemble_or_link_is_bad_environment_naming_the_program(
    compiler_without: str,
) -> None:
    result = run_cli("run", _any_kernel(), "--seed", "1", "--specs", SPECS)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert f"cannot run {compiler_without!r}" in line and "TTLGEN_CXX" in line


def _any_kernel() -> str:
    return real_project().kernels.kernels[0].name


def test_run_without_a_compiler_is_bad_environment_naming_it_and_ttlgen_cxx(no_compiler: str) -> None:
    result = run_cli("run", _any_kernel(), "--seed", "1", "--specs", SPECS)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert no_compiler in line and "TTLGEN_CXX" in line


def test_run_json_without_a_compiler_is_the_error_envelope(no_compiler: str) -> None:
    result = run_cli("run", _any_kernel(), "--seed", "1", "--json", "--specs", SPECS)
    assert result.exit_code == 2
    (message,) = _envelope(result.stdout)
    assert no_compiler in message and "TTLGEN_CXX" in message


def _with_max_pool(specs: Path) -> str:
    """A kernel of ``specs`` whose sum reduce is made a max reduce (valid, and without a float64
    reference): its name."""
    for path in sorted((specs / "kernels").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for name, body in data["kernels"].items():
            if '"pool": "sum"' in json.dumps(body):
                path.write_text(path.read_text(encoding="utf-8").replace("pool: sum", "pool: max"), encoding="utf-8")
                return str(name)
    raise AssertionError("no kernel of the specs reduces with pool: sum")


@pytest.mark.parametrize("as_json", [False, True])
def test_run_of_a_kernel_without_a_reference_is_bad_input_not_a_failure(tmp_path: Path, as_json: bool) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(SPECS, specs)
    name = _with_max_pool(specs)
    assert run_cli("validate", "--specs", specs).exit_code == 0
    result = run_cli("run", name, "--seed", "1", *(["--json"] if as_json else []), "--specs", specs)
    assert result.exit_code == 2
    assert "FAIL" not in result.stdout
    messages = _envelope(result.stdout) if as_json else [result.stderr.strip().removeprefix("ttlgen: ")]
    assert messages == ["no float64 reference for a MAX reduce (the emulator does not run it)"]


@pytest.mark.parametrize("command", [["run", "any_kernel"], ["accuracy"]])
def test_no_cache_turns_every_cache_off_for_the_command_alone(command: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from ttlgen import cache, run

    seen: list[bool] = []

    def record(*args: object, **kwargs: object) -> int:
        seen.append(cache.enabled())
        return 0

    monkeypatch.delenv("TTLGEN_NO_CACHE", raising=False)
    monkeypatch.setattr(run, "run_command" if command[0] == "run" else "accuracy_command", record)
    assert run_cli(*command, "--no-cache").exit_code == 0
    assert run_cli(*command).exit_code == 0
    assert seen == [False, True]
    assert cache.enabled()
