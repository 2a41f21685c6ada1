"""The schemas in generated/schemas/ carry the tree's own names, so an editor flags a
misspelt op, target or dataflow buffer as it is typed; the shipped ones stay generic."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import GENERATED, SPECS, real_documents
from ttlgen.spec.kinds import spec_kinds
from ttlgen.spec.load import parse_text

KINDS = [kind.schema_file for kind in spec_kinds()]


def editor_schema(schema_file: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((GENERATED / "schemas" / schema_file).read_text(encoding="utf-8"))
    return schema


def real_spec(source: str) -> Any:
    """A copy of the data of the real spec file ``source`` (loaded once per process)."""
    document = next(d for d in real_documents() if d.source == source)
    return copy.deepcopy(document.data)


def editor_errors(schema_file: str, data: Any) -> list[str]:
    validator = Draft202012Validator(editor_schema(schema_file))
    return sorted("/".join(map(str, e.absolute_path)) for e in validator.iter_errors(data))


@pytest.mark.parametrize("schema_file", KINDS)
def test_every_editor_schema_is_a_valid_draft_2020_12_schema(schema_file: str) -> None:
    Draft202012Validator.check_schema(editor_schema(schema_file))


def test_every_real_spec_is_valid_under_its_editor_schema() -> None:
    for document in real_documents():
        schema_file = f"{document.kind}.{document.version}.schema.json"
        assert editor_errors(schema_file, document.data) == [], document.source


@pytest.mark.parametrize(
    ("source", "schema_file", "path", "bad"),
    [
        ("specs/kernels/unary.yaml", "ttlgen.kernel.v1.schema.json", ("kernels", "unary_chain_bf16", "target"), "blackhol"),
        ("specs/kernels/unary.yaml", "ttlgen.kernel.v1.schema.json", ("kernels", "unary_chain_bf16", "dfbs", "x", "dtype"), "bf61"),
        ("specs/ops/elementwise.yaml", "ttlgen.ops.v1.schema.json", ("families", "sfpu_unary", "strategies", 0, "strategy"), "sfp"),
        ("specs/ops/elementwise.yaml", "ttlgen.ops.v1.schema.json", ("families", "sfpu_unary", "primitive"), "ElementwiseUnaryOp"),
        ("specs/targets/blackhole.yaml", "ttlgen.target.v1.schema.json", ("architecture",), "blackhol"),
        ("specs/targets/blackhole.yaml", "ttlgen.target.v1.schema.json", ("runtime_api",), "ComputeConfig"),
        ("specs/targets/blackhole.yaml", "ttlgen.target.v1.schema.json", ("relations", "dfb_unpack", "shared"), "gen1_llk.dfb_unpak"),
        ("specs/targets/architectures/blackhole.yaml", "ttlgen.architecture.v1.schema.json", ("default_target",), "blackhole_p150"),
        ("specs/programs/mapcollect.yaml", "ttlgen.program.v1.schema.json", ("layout",), "komorebii"),
    ],
    ids=lambda v: v if isinstance(v, str) and not v.startswith(("specs/", "ttlgen.")) else None,
)
def test_a_misspelt_name_is_flagged_at_its_place(source: str, schema_file: str, path: tuple[str | int, ...], bad: str) -> None:
    data = real_spec(source)
    node = data
    for part in path[:-1]:
        node = node[part]
    assert path[-1] in node, f"{source} has no {path}: the case is stale"
    node[path[-1]] = bad
    assert "/".join(map(str, path)) in editor_errors(schema_file, data)


def test_an_unknown_op_in_a_kernel_body_is_flagged() -> None:
    data = real_spec("specs/kernels/unary.yaml")
    text = json.dumps(data).replace('"op": "tile_exp"', '"op": "tile_slu"', 1)
    assert "tile_slu" in text
    assert editor_errors("ttlgen.kernel.v1.schema.json", json.loads(text))


def test_a_misspelt_dataflow_buffer_of_a_known_kernel_is_flagged() -> None:
    data = real_spec("specs/kernels/unary.yaml")
    body = data["kernels"]["unary_chain_bf16"]["body"]
    text = json.dumps(body)
    assert '"wait": "x"' in text
    data["kernels"]["unary_chain_bf16"]["body"] = json.loads(text.replace('"wait": "x"', '"wait": "y"', 1))
    assert editor_errors("ttlgen.kernel.v1.schema.json", data)


def test_a_new_kernel_is_checked_with_the_generic_definitions() -> None:
    data = real_spec("specs/kernels/unary.yaml")
    data["kernels"]["brand_new"] = data["kernels"].pop("unary_chain_bf16")
    assert editor_errors("ttlgen.kernel.v1.schema.json", data) == []


def test_shipped_schemas_name_nothing_of_the_tree() -> None:
    shipped = Path(__file__).resolve().parent.parent / "ttlgen" / "schemas"
    for path in sorted(shipped.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        for name in ("tile_add", "blackhole", "bf16", "ElementwiseBinary", "gen1_llk"):
            assert f'"{name}"' not in text, f"{path.name} names {name!r}; the shipped schemas stay generic"


def test_every_toml_spec_points_editors_at_its_schema() -> None:
    # taplo (Even Better TOML) reads a first-line `#:schema` directive, relative to the file.
    fixtures = Path(__file__).resolve().parent / "fixtures" / "bad_specs"
    placed = [(p, p.relative_to(SPECS)) for p in SPECS.rglob("*.toml")]
    placed += [(p, Path(*p.relative_to(fixtures).parts[2:])) for p in fixtures.rglob("*.toml")]
    assert placed, "no TOML spec to check"
    for path, under_specs in placed:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("#:schema "), f"{path}: the first line must be the #:schema directive"
        spec_line = next(line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("spec"))
        kind = spec_line.split('"')[1].replace("/", ".")
        schema = (SPECS / under_specs).parent / first.removeprefix("#:schema ")
        assert schema.resolve() == (GENERATED / "schemas" / f"{kind}.schema.json").resolve(), path


DESCRIPTION_SCHEMA = "ttlgen.kernel_description.v1.schema.json"
DESCRIPTIONS = Path(__file__).resolve().parent / "fixtures" / "kernels"
VALID_DESCRIPTIONS = sorted(p.name for p in DESCRIPTIONS.glob("*.yaml") if p.name != "not_a_kernel.yaml")


def description(name: str) -> Any:
    path = DESCRIPTIONS / name
    return parse_text(path.read_text(encoding="utf-8"), name, path.suffix)[0]


@pytest.mark.parametrize("name", VALID_DESCRIPTIONS)
def test_every_kernel_description_of_the_tests_is_valid_under_its_editor_schema(name: str) -> None:
    assert editor_errors(DESCRIPTION_SCHEMA, description(name)) == []


@pytest.mark.parametrize(
    ("path", "bad"),
    [
        (("ops", 0, "op"), "tile_slu"),
        (("target",), "blackhol"),
        (("device_arch",), "WORMHOLE"),
        (("math_fidelity",), "HiFi9"),
        (("dfbs", "0"), "bf61"),
        (("ops", 0, "result"), "bf61"),
        (("ops", 0, "attrs", "strategy"), "sfp"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_a_misspelt_name_in_a_kernel_description_is_flagged_at_its_place(path: tuple[str | int, ...], bad: str) -> None:
    data = description("bf16_add.yaml")
    data["device_arch"] = "WORMHOLE_B0"
    data["ops"][0]["attrs"] = {"strategy": "fpu"}
    assert editor_errors(DESCRIPTION_SCHEMA, data) == [], "the case must start from a valid description"
    node = data
    for part in path[:-1]:
        node = node[part]
    assert path[-1] in node, f"bf16_add.yaml has no {path}: the case is stale"
    node[path[-1]] = bad
    assert editor_errors(DESCRIPTION_SCHEMA, data) == ["/".join(map(str, path))]


@pytest.mark.parametrize("target", ["wormhole_b0_gen1_config", "blackhole", "BLACKHOLE"], ids=["target", "architecture", "runtime-name"])
def test_a_kernel_description_may_name_a_target_or_an_architecture(target: str) -> None:
    data = description("bf16_add.yaml")
    data["target"] = target
    assert editor_errors(DESCRIPTION_SCHEMA, data) == []
