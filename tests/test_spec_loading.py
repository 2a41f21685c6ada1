"""Loading and schema validation: every problem is reported, located, and never silently accepted.

These tests use a small stand-in spec kind so that they exercise the machinery, not
the facts of any real kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ttlgen.errors import SpecErrors, format_key_path
from ttlgen.spec import kinds
from ttlgen.spec.load import load_specs
from ttlgen.spec.yaml_source import ALIAS_EXPANSION_LIMIT
from ttlgen.validate.schema import validate_document

WIDGET_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["spec", "widgets"],
    "properties": {
        "spec": {"const": "test.widgets/v1"},
        "widgets": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["strategies"],
                "properties": {
                    "strategies": {"type": "array", "items": {"enum": ["fpu", "sfpu"]}},
                    "size": {"type": "integer", "minimum": 1},
                    "name": {"type": "string", "pattern": "^[a-z_]+$", "x-message": "{value} is not a lower_snake name"},
                },
            },
        },
    },
}


@pytest.fixture(autouse=True)
def widget_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    kind = kinds.SpecKind("test.widgets", "v1", "test.widgets.v1.schema.json")
    other = kinds.SpecKind("test.widgets", "v2", "test.widgets.v2.schema.json")
    monkeypatch.setattr(kinds, "spec_kinds", lambda: (kind, other))
    monkeypatch.setattr(kinds, "load_schema", lambda name: WIDGET_SCHEMA)


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    specs = tmp_path / "specs"
    path = specs / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return specs


def errors_of(specs: Path) -> list[str]:
    try:
        documents = load_specs(specs)
    except SpecErrors as exc:
        return [d.format() for d in exc.diagnostics]
    return [d.format() for document in documents for d in validate_document(document)]


def test_wrong_enum_value_is_located_at_the_value_with_its_key_path(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: test.widgets/v1\nwidgets:\n  tile_add:\n    strategies: [fpu, gpu]\n")
    assert errors_of(specs) == [
        "specs/w.yaml:4:23: widgets.tile_add.strategies[1]: 'gpu' is not one of 'fpu', 'sfpu'"
    ]


def test_unknown_key_is_located_at_the_key_and_lists_valid_keys(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: test.widgets/v1\nwidgets:\n  a:\n    strategies: []\n    colour: red\n")
    assert errors_of(specs) == [
        "specs/w.yaml:5:5: widgets.a.colour: unknown key 'colour'; valid keys: name, size, strategies"
    ]


def test_duplicate_key_is_an_error_naming_the_first_definition(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: test.widgets/v1\nwidgets:\n  a: {strategies: []}\n  a: {strategies: []}\n")
    assert errors_of(specs) == ["specs/w.yaml:4:3: widgets.a: duplicate key 'a' (first defined at line 3)"]


def test_all_errors_of_all_files_are_reported_in_file_order(tmp_path: Path) -> None:
    write(tmp_path, "b.yaml", "spec: test.widgets/v1\nwidgets:\n  a: {strategies: [x], size: 0}\n")
    specs = write(tmp_path, "a.yaml", "spec: test.widgets/v1\nwidgets:\n  a: {strategies: [], extra: 1}\n")
    assert errors_of(specs) == [
        "specs/a.yaml:3:23: widgets.a.extra: unknown key 'extra'; valid keys: name, size, strategies",
        "specs/b.yaml:3:20: widgets.a.strategies[0]: 'x' is not one of 'fpu', 'sfpu'",
        "specs/b.yaml:3:30: widgets.a.size: 0 is less than the minimum 1",
    ]


def test_missing_required_key_points_at_the_mapping_that_lacks_it(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: test.widgets/v1\nwidgets:\n  a:\n    size: 2\n")
    assert errors_of(specs) == ["specs/w.yaml:4:5: widgets.a: missing required key 'strategies'"]


def test_schema_node_can_replace_the_default_message(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: test.widgets/v1\nwidgets:\n  a: {strategies: [], name: Bad}\n")
    assert errors_of(specs) == ["specs/w.yaml:3:29: widgets.a.name: 'Bad' is not a lower_snake name"]


def test_unknown_kind_lists_supported_kinds(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: acme.sprockets/v1\n")
    assert errors_of(specs) == [
        "specs/w.yaml:1:7: spec: unknown spec kind 'acme.sprockets'; supported: test.widgets/v1, test.widgets/v2"
    ]


def test_unknown_version_lists_supported_versions(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: test.widgets/v9\n")
    assert errors_of(specs) == [
        "specs/w.yaml:1:7: spec: unsupported version 'v9' of 'test.widgets'; supported versions: v1, v2"
    ]


def test_spec_identifier_must_come_first(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "widgets: {}\nspec: test.widgets/v1\n")
    assert errors_of(specs) == ["specs/w.yaml:2:1: spec: 'spec' must be the first key of the file"]


def test_missing_spec_identifier_is_an_error(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "widgets: {}\n")
    assert errors_of(specs) == ["specs/w.yaml:1:1: missing 'spec: <kind>/<version>' as the first key"]


def test_non_utf8_file_is_rejected_with_the_position_of_the_bad_byte(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", b"spec: test.widgets/v1\nwidgets: {\xff}\n")
    assert errors_of(specs) == ["specs/w.yaml:2:11: file is not valid UTF-8 (byte 0xff)"]


def test_alias_expansion_beyond_the_bound_is_rejected(tmp_path: Path) -> None:
    # Each level multiplies the nodes an alias expands to; a few levels pass the bound.
    lines = ["spec: test.widgets/v1", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 5):
        prev = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([prev] * 10)}]")
    specs = write(tmp_path, "w.yaml", "\n".join(lines) + "\n")
    messages = errors_of(specs)
    assert len(messages) == 1
    assert f"aliases expand to more than {ALIAS_EXPANSION_LIMIT} nodes" in messages[0]


def test_small_aliases_are_allowed(tmp_path: Path) -> None:
    text = "spec: test.widgets/v1\nwidgets:\n  a: &s {strategies: [fpu]}\n  b: *s\n"
    specs = write(tmp_path, "w.yaml", text)
    assert errors_of(specs) == []


def test_yaml_1_1_booleans_stay_strings(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: test.widgets/v1\nwidgets:\n  a: {strategies: [], name: no}\n")
    documents = load_specs(specs)
    assert documents[0].data["widgets"]["a"]["name"] == "no"


def test_hex_integers_are_integers(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: test.widgets/v1\nwidgets:\n  a: {strategies: [], size: 0x10}\n")
    assert load_specs(specs)[0].data["widgets"]["a"]["size"] == 16


def test_yaml_syntax_error_is_located(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: test.widgets/v1\nwidgets: [a, b\n")
    messages = errors_of(specs)
    assert len(messages) == 1
    assert messages[0].startswith("specs/w.yaml:3:1: invalid YAML:")


def test_multiple_yaml_documents_are_rejected(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: test.widgets/v1\nwidgets: {}\n---\nspec: test.widgets/v1\n")
    assert errors_of(specs) == ["specs/w.yaml:4:1: a spec file holds exactly one YAML document"]


def test_toml_spec_is_validated_with_the_same_schema_and_located(tmp_path: Path) -> None:
    text = 'spec = "test.widgets/v1"\n\n[widgets.tile_add]\nstrategies = ["fpu", "gpu"]\n'
    specs = write(tmp_path, "w.toml", text)
    assert errors_of(specs) == [
        "specs/w.toml:4:22: widgets.tile_add.strategies[1]: 'gpu' is not one of 'fpu', 'sfpu'"
    ]


def test_toml_syntax_error_is_located(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.toml", 'spec = "test.widgets/v1"\nwidgets = {\n')
    messages = errors_of(specs)
    assert len(messages) == 1
    assert messages[0].startswith("specs/w.toml:2:")
    assert "invalid TOML" in messages[0]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("[widgets.a]\nsize = 1\nsize = 2\n", "4:1: widgets.a.size: duplicate key 'size' (first defined at line 3)"),
        ("[widgets.a.b]\n[widgets]\na.b.c = 1\n", "4:3: widgets.a.b: table 'b' is defined twice (first defined at line 2)"),
        ("[widgets]\na = 1\n[[widgets.a]]\n", "4:11: widgets.a: 'a' is given its whole value at line 3"),
        ("widgets = {a = {}}\nwidgets.b = 1\n", "3:1: widgets: 'widgets' is given its whole value at line 2"),
        ("widgets = {a = {}}\n[widgets.b]\n", "3:2: widgets: 'widgets' is given its whole value at line 2"),
    ],
    ids=["key", "table_through_dotted_key", "array_of_tables_after_key", "dotted_key_into_inline_table",
         "header_into_inline_table"],
)
def test_toml_redefinition_names_the_key_and_its_first_definition(tmp_path: Path, body: str, expected: str) -> None:
    specs = write(tmp_path, "w.toml", 'spec = "test.widgets/v1"\n' + body)
    (message,) = errors_of(specs)
    assert message.startswith(f"specs/w.toml:{expected}")


def test_toml_and_yaml_forms_load_to_the_same_data(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "spec: test.widgets/v1\nwidgets:\n  a: {strategies: [fpu], size: 3}\n")
    specs = write(tmp_path, "b.toml", 'spec = "test.widgets/v1"\n[widgets.a]\nstrategies = ["fpu"]\nsize = 3\n')
    yaml_doc, toml_doc = load_specs(specs)
    assert yaml_doc.data == toml_doc.data


def test_key_paths_quote_keys_that_are_not_identifiers() -> None:
    assert format_key_path(("ops", "a.b", 2, "x")) == "ops['a.b'][2].x"


@pytest.mark.parametrize(
    ("tagged", "form"),
    [
        ("!!bool yes", "a bool is true or false"),
        ("!!bool on", "a bool is true or false"),
        ("!!null wormhole", "a null is null"),
        ("!!int 3_2", "an int is decimal digits"),
        ('!!int "\u0663\u0662"', "an int is decimal digits"),
        ("!!float 1_0", "a float is a decimal number"),
        ("!!float infinity", "a float is a decimal number"),
    ],
)
def test_explicitly_tagged_scalar_outside_its_core_schema_form_is_refused_at_the_scalar(
    tmp_path: Path, tagged: str, form: str
) -> None:
    specs = write(tmp_path, "w.yaml", f"spec: test.widgets/v1\nwidgets:\n  a: {{strategies: [], size: {tagged}}}\n")
    [message] = errors_of(specs)
    tag, text = tagged.split(" ", 1)
    assert message.startswith(f"specs/w.yaml:3:29: widgets.a.size: invalid {tag} {text.strip(chr(34))!r}; {form}")


@pytest.mark.parametrize(("tagged", "value"), [("!!bool True", True), ("!!int 0x10", 16), ("!!float 3", 3.0), ("!!null ~", None)])
def test_explicitly_tagged_scalar_in_its_core_schema_form_takes_its_value(tmp_path: Path, tagged: str, value: Any) -> None:
    specs = write(tmp_path, "w.yaml", f"spec: test.widgets/v1\nwidgets:\n  a: {{size: {tagged}}}\n")
    loaded = load_specs(specs)[0].data["widgets"]["a"]["size"]
    assert loaded == value and type(loaded) is type(value)


def test_misspelt_spec_kind_suggests_the_kind_meant(tmp_path: Path) -> None:
    specs = write(tmp_path, "w.yaml", "spec: test.widget/v1\n")
    [message] = errors_of(specs)
    assert message.endswith("supported: test.widgets/v1, test.widgets/v2 (did you mean 'test.widgets'?)")


def test_recursive_alias_is_reported_where_the_alias_is_written(tmp_path: Path) -> None:
    text = "spec: test.widgets/v1\nwidgets: &w\n  a: {strategies: []}\n  b:\n    size: 1\n    again: *w\n"
    specs = write(tmp_path, "w.yaml", text)
    assert errors_of(specs) == ["specs/w.yaml:6:12: widgets.b.again: recursive alias: a node may not contain itself"]
