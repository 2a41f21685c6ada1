"""The shipped JSON Schemas: valid Draft 2020-12, one per kind, and what editors get is the same."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import GENERATED, SPECS, run_cli
from ttlgen.errors import SpecErrors
from ttlgen.spec import kinds
from ttlgen.spec.load import load_specs
from ttlgen.validate.documents import validate_documents

KINDS = kinds.spec_kinds()


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.kind_id)
def test_schema_is_valid_draft_2020_12(kind: kinds.SpecKind) -> None:
    Draft202012Validator.check_schema(kind.schema())


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.kind_id)
def test_schema_pins_its_own_kind_identifier(kind: kinds.SpecKind) -> None:
    assert kind.schema()["properties"]["spec"].get("const") == kind.kind_id


def _without_tree_names(node: Any) -> Any:
    """An editor schema less what ttlgen build adds (emit/schemas.py): the name enums, and
    the per-kernel definitions that hold each kernel's dataflow buffer names."""
    if isinstance(node, list):
        return [_without_tree_names(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$defs":
            value = {k: v for k, v in value.items() if not k.startswith("names.") and "@" not in k}
        if key == "allOf":
            value = [v for v in value if not str(v.get("$ref", "")).startswith("#/$defs/names.")]
            if not value:
                continue
        out[key] = _without_tree_names(value)
    return out


def _selections_inlined(node: Any, defs: dict[str, Any], selected: str | None = None) -> Any:
    """A shipped schema with each `x-selects` reference replaced by the definition it names."""
    if isinstance(node, list):
        return [_selections_inlined(item, defs, selected) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _selections_inlined(v, defs, selected) for k, v in node.items()}
    if "x-selects" in node:
        inlined = _selections_inlined(defs[node["$ref"].removeprefix("#/$defs/")], defs, node["x-selects"])
        out = {**inlined, **{k: v for k, v in out.items() if k not in ("$ref", "x-selects")}}
    if out.get("x-names") == "selected" and selected is not None:
        out["x-names"] = selected
    return out


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.kind_id)
def test_editors_get_the_schema_the_cli_uses_plus_the_tree_names(kind: kinds.SpecKind) -> None:
    emitted = json.loads((GENERATED / "schemas" / kind.schema_file).read_text(encoding="utf-8"))
    emitted.pop("$comment")
    if kind.name == "ttlgen.kernel":  # each kernel of the tree: its own dataflow buffer names
        emitted["properties"]["kernels"].pop("properties")
    shipped = kind.schema()
    assert _without_tree_names(emitted) == _selections_inlined(shipped, shipped.get("$defs", {}))


def test_every_spec_kind_in_the_tree_has_a_schema() -> None:
    used = {doc.kind_id for doc in load_specs(SPECS)}
    assert used <= {k.kind_id for k in KINDS}


def test_a_document_found_valid_is_validated_again_once_it_changes(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    vocabulary = (SPECS / "ops" / "vocabulary.yaml").read_text()
    (specs / "v.yaml").write_text(vocabulary)
    assert validate_documents(load_specs(specs)) == []
    (specs / "v.yaml").write_text(vocabulary + "stray: 1\n")
    problems = [d.message for d in validate_documents(load_specs(specs))]
    assert problems == ["unknown key 'stray'; valid keys: default_resolver_generation, dst, element_types, full_fp32_kinds, primitives, resolver_generations, spec, strategies, ttlang_cpp"]


def test_an_invalid_document_stays_invalid_when_validated_again(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "v.yaml").write_text((SPECS / "ops" / "vocabulary.yaml").read_text() + "stray: 1\n")
    for _ in range(2):
        assert len(validate_documents(load_specs(specs))) == 1


def test_load_errors_are_reported_for_every_file_at_once(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "a.yaml").write_text("spec: nope/v1\n")
    (specs / "b.toml").write_text('spec = "nope/v1"\n')
    with pytest.raises(SpecErrors) as caught:
        load_specs(specs)
    assert [d.mark.file for d in caught.value.diagnostics] == ["specs/a.yaml", "specs/b.toml"]


def test_every_yaml_spec_points_editors_at_its_schema() -> None:
    # yaml-language-server reads this first-line modeline; a wrong path would silently
    # leave the editor validating nothing.
    for path in sorted(SPECS.rglob("*.yaml")):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        prefix = "# yaml-language-server: $schema="
        assert first.startswith(prefix), f"{path}: first line must be the schema modeline"
        schema = (path.parent / first[len(prefix):]).resolve()
        kind = next(d for d in load_specs(SPECS) if d.source == f"specs/{path.relative_to(SPECS).as_posix()}")
        assert schema == (GENERATED / "schemas" / f"{kind.kind}.{kind.version}.schema.json").resolve(), path


def test_a_toml_date_where_text_is_expected_is_a_located_error_after_the_same_text_as_a_string(tmp_path: Path) -> None:
    # Issue 24: the same spec validated with summary = "2024-01-01" (a string), then with the
    # TOML date 2024-01-01, must fail the second time (exit 2, located), whatever ran before.
    specs = tmp_path / "specs"
    shutil.copytree(SPECS, specs)
    arch = specs / "targets" / "architectures" / "quasar.yaml"
    arch.unlink()
    toml = arch.with_suffix(".toml")
    text = (
        'spec = "ttlgen.architecture/v1"\nname = "quasar"\nsummary = {summary}\nruntime_name = "QUASAR"\n'
        'rejected = "Quasar kernels need the Gen2 configuration and launch APIs"\ndfb_capacity = 32\n'
        '[golden.dfb_capacity]\nvalue = 32\nwhy = "TT-Lang gives Quasar 32 indices"\n'
    )
    toml.write_text(text.format(summary='"2024-01-01"'))
    assert run_cli("validate", "--specs", specs).exit_code == 0
    toml.write_text(text.format(summary="2024-01-01"))
    for command in ("validate", "build"):
        result = run_cli(command, "--specs", specs, "--out", tmp_path / "out") if command == "build" else run_cli(command, "--specs", specs)
        assert result.exit_code == 2, result.stderr
        assert result.stderr.startswith("specs/targets/architectures/quasar.toml:3:11: summary: expected a string")
