"""Every command fails in one JSON shape: ``{"status": "error", "errors": [...]}`` with each
error a ``Diagnostic.to_json()`` record (file, line, column, path, message, notes); the
resolver's errors add their op and operand to the same record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import REPO, SPECS, CliResult, run_cli

RECORD = {"file", "line", "column", "path", "message", "notes"}
KERNELS = REPO / "tests" / "fixtures" / "kernels"


def errors_of(result: CliResult) -> list[dict[str, Any]]:
    payload = json.loads(result.stdout)
    assert set(payload) == {"status", "errors"} and payload["status"] == "error"
    assert payload["errors"]
    for record in payload["errors"]:
        assert set(record) >= RECORD, record
        for note in record["notes"]:
            assert set(note) >= RECORD, note
    errors: list[dict[str, Any]] = payload["errors"]
    return errors


def test_build_reports_a_bad_spec_as_located_records(spec_copy: Path, tmp_path: Path) -> None:
    target = spec_copy / "targets" / "architectures" / "blackhole.yaml"
    target.write_text(target.read_text().replace("dfb_capacity: 64", "dfb_capacity: many"))
    result = run_cli("build", "--specs", spec_copy, "--out", tmp_path / "out", "--json")
    assert result.exit_code == 2
    (error,) = errors_of(result)
    assert error["file"] == "specs/targets/architectures/blackhole.yaml" and error["line"] > 0 and error["path"] == "dfb_capacity"


def test_a_usage_error_is_a_record_without_a_location(tmp_path: Path) -> None:
    result = run_cli("check", "--specs", tmp_path / "absent", "--out", tmp_path / "out", "--json")
    assert result.exit_code == 2
    (error,) = errors_of(result)
    assert (error["file"], error["line"], error["column"], error["path"]) == (None, None, None, None)
    assert "absent" in error["message"]


def test_resolve_reports_a_bad_kernel_description_as_located_records() -> None:
    result = run_cli("resolve", KERNELS / "not_a_kernel.yaml", "--specs", SPECS, "--json")
    assert result.exit_code == 2
    assert all(e["file"].endswith("not_a_kernel.yaml") and e["line"] > 0 for e in errors_of(result))


def test_resolve_reports_a_rejected_kernel_with_op_and_operand_in_the_record() -> None:
    result = run_cli("resolve", KERNELS / "bcast_conflict.yaml", "--specs", SPECS, "--json")
    assert result.exit_code == 1
    (error,) = errors_of(result)
    assert (error["op"], error["operand"], error["path"]) == ("e", 0, "ops[1].operands[0]")
    assert [(n["op"], n["path"]) for n in error["notes"]] == [("b", "ops[0]")]


def test_run_reports_an_unknown_kernel_in_the_same_shape() -> None:
    result = run_cli("run", "no_such_kernel", "--specs", SPECS, "--json")
    assert result.exit_code == 2
    (error,) = errors_of(result)
    assert "unknown kernel 'no_such_kernel'" in error["message"] and error["file"] is None


def test_run_reports_a_bad_spec_as_located_records(spec_copy: Path) -> None:
    target = spec_copy / "targets" / "architectures" / "blackhole.yaml"
    target.write_text(target.read_text().replace("dfb_capacity: 64", "dfb_capacity: many"))
    result = run_cli("run", "eltwise_add_bf16", "--specs", spec_copy, "--json")
    assert result.exit_code == 2
    (error,) = errors_of(result)
    assert error["file"] == "specs/targets/architectures/blackhole.yaml" and error["path"] == "dfb_capacity"
