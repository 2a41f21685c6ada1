"""`ttlgen run` and `ttlgen accuracy`: exit codes, text and JSON output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from kernel_helpers import SPECS

from tests.conftest import run_cli

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


def test_accuracy_json_rows() -> None:
    result = run_cli("accuracy", "--k", "1,4", "--block", "2", "--json", "--specs", SPECS)
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


def test_accuracy_rejects_bad_lists() -> None:
    result = run_cli("accuracy", "--k", "0,x", "--specs", SPECS)
    assert result.exit_code == 2
    assert "--k" in result.stderr
