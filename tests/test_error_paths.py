"""Messages name a spec by a path that finds it from the working directory; generated headers
name it as <spec dir name>/<path>, whatever the working directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SPECS, run_cli


def break_vocabulary(specs: Path) -> None:
    target = specs / "ops" / "vocabulary.yaml"
    target.write_text(target.read_text(encoding="utf-8").replace("bits: 16", "bits: sixteen", 1), encoding="utf-8")


def first_error_file(specs_argument: str | Path) -> str:
    result = run_cli("validate", "--specs", specs_argument, "--json")
    assert result.exit_code == 2
    return str(json.loads(result.stdout)["errors"][0]["file"])


def test_a_spec_tree_inside_the_working_directory_is_named_relative_to_it(spec_copy: Path) -> None:
    break_vocabulary(spec_copy)
    assert first_error_file(spec_copy.resolve()) == "specs/ops/vocabulary.yaml"


def test_an_absolute_spec_tree_elsewhere_is_named_by_its_absolute_path(
    spec_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    break_vocabulary(spec_copy)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    named = first_error_file(spec_copy.resolve())
    assert Path(named).is_absolute() and Path(named).is_file()
    assert named == str(spec_copy.resolve() / "ops" / "vocabulary.yaml")


def test_a_relative_spec_tree_outside_is_named_as_given(spec_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    break_vocabulary(spec_copy)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert first_error_file("../specs") == "../specs/ops/vocabulary.yaml"


def test_the_spec_directory_itself_as_the_working_directory(spec_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    break_vocabulary(spec_copy)
    monkeypatch.chdir(spec_copy)
    result = run_cli("validate", "--specs", ".")
    assert result.stderr.startswith("ops/vocabulary.yaml:")


def test_headers_name_sources_by_the_spec_directory_whatever_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    out = tmp_path / "out"
    assert run_cli("build", "--specs", SPECS, "--out", out, "--no-cache").exit_code == 0
    header = (out / "include" / "komorebi" / "abi" / "km_abi.h").read_text(encoding="utf-8")
    assert "//   specs/abi/komorebi.yaml\n" in header
