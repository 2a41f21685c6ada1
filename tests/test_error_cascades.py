"""An error that makes later checks meaningless is reported alone, with a count of what follows.

The spec-level cases (a missing vocabulary, a misspelt strategy or route operand of an op
that spellings and kernels use) are overlays in tests/fixtures/bad_specs/ops/; these tests
pin the mechanism in errors.DiagnosticSink they rely on, and the schema's own case: a
required key written misspelt is missing because of the typo.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from ttlgen.errors import DiagnosticSink, Entity, Mark, SpecErrors

VOCABULARY = Entity("op vocabulary")
OP = Entity("op", "tile_add")


def at(line: int) -> Mark:
    return Mark("specs/x.yaml", line, 1)


def messages(sink: DiagnosticSink) -> list[tuple[str, int]]:
    return [(d.message, d.consequences) for d in sink.diagnostics]


def test_an_error_after_a_broken_entity_is_counted_on_the_error_that_broke_it() -> None:
    sink = DiagnosticSink()
    sink.error(at(1), "no vocabulary", breaks=[VOCABULARY])
    sink.error(at(2), "unknown element type 'bf16'", after=[VOCABULARY])
    sink.error(at(3), "unknown element type 'f32'", after=[VOCABULARY])
    assert messages(sink) == [("no vocabulary", 2)]


def test_the_root_is_found_whichever_check_ran_first() -> None:
    sink = DiagnosticSink()
    sink.error(at(2), "unknown element type 'bf16'", after=[VOCABULARY])
    sink.error(at(1), "no vocabulary", breaks=[VOCABULARY])
    assert messages(sink) == [("no vocabulary", 1)]


def test_consequences_of_a_consequence_count_against_the_root() -> None:
    sink = DiagnosticSink()
    sink.error(at(1), "no vocabulary", breaks=[VOCABULARY])
    sink.error(at(2), "unknown strategy 'fpu'", after=[VOCABULARY], breaks=[OP])
    sink.error(at(3), "op 'tile_add' takes 2 tile operands, got 3", after=[OP])
    assert messages(sink) == [("no vocabulary", 2)]


def test_an_error_after_an_entity_nothing_broke_is_shown() -> None:
    sink = DiagnosticSink()
    sink.error(at(1), "unknown strategy 'sfp'", breaks=[OP])
    sink.error(at(2), "unknown element type 'bf61'", after=[VOCABULARY])
    assert messages(sink) == [("unknown strategy 'sfp'", 0), ("unknown element type 'bf61'", 0)]


def test_errors_that_follow_from_each_other_in_a_circle_still_show_one() -> None:
    first, second = Entity("a"), Entity("b")
    sink = DiagnosticSink()
    sink.error(at(1), "one", after=[second], breaks=[first])
    sink.error(at(2), "two", after=[first], breaks=[second])
    assert messages(sink) == [("two", 1)]


def test_the_count_is_printed_under_the_root_and_given_in_json() -> None:
    sink = DiagnosticSink()
    sink.error(at(1), "no vocabulary", breaks=[VOCABULARY])
    for line in range(2, 5):
        sink.error(at(line), "unknown element type", after=[VOCABULARY])
    with pytest.raises(SpecErrors) as caught:
        sink.raise_if_any()
    assert caught.value.render() == "specs/x.yaml:1:1: no vocabulary\n  note: 3 more errors follow from this one; fix it first"
    assert caught.value.diagnostics[0].to_json()["consequences"] == 3


def test_errors_stay_ordered_by_file_line_and_column() -> None:
    sink = DiagnosticSink()
    sink.error(Mark("specs/b.yaml", 1, 1), "b")
    sink.error(Mark("specs/a.yaml", 9, 2), "a9")
    sink.error(Mark("specs/a.yaml", 3, 7), "a3")
    with pytest.raises(SpecErrors) as caught:
        sink.raise_if_any()
    assert [d.message for d in caught.value.diagnostics] == ["a3", "a9", "b"]


def _misspell_key(spec_copy: Path, old: str, new: str) -> None:
    layout = spec_copy / "abi" / "komorebi.yaml"
    text = layout.read_text(encoding="utf-8")
    assert f"\n{old}:" in text
    layout.write_text(text.replace(f"\n{old}:", f"\n{new}:", 1), encoding="utf-8")


def test_a_misspelt_required_key_is_reported_as_the_unknown_key_alone(spec_copy: Path) -> None:
    _misspell_key(spec_copy, "abi_version", "abi_versio")
    result = run_cli("validate", "--specs", spec_copy)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:2] == [
        "specs/abi/komorebi.yaml:11:1: abi_versio: unknown key 'abi_versio'; valid keys: abi_version, blocks, constants, doc, "
        "enums, layout, naming, spec, structs, tables, word, words (did you mean 'abi_version'?)",
        "  note: 1 more error follows from this one; fix it first",
    ]
    assert "missing required key" not in result.stderr


def test_each_misspelt_required_key_is_its_own_root(spec_copy: Path) -> None:
    _misspell_key(spec_copy, "abi_version", "abi_versio")
    _misspell_key(spec_copy, "layout", "layot")
    stderr = run_cli("validate", "--specs", spec_copy).stderr
    assert "unknown key 'layot'" in stderr and "unknown key 'abi_versio'" in stderr
    assert stderr.count("1 more error follows") == 2 and "missing required key" not in stderr


def test_every_missing_required_key_is_named(spec_copy: Path) -> None:
    layout = spec_copy / "abi" / "komorebi.yaml"
    text = layout.read_text(encoding="utf-8")
    layout.write_text(text.replace("\nlayout: komorebi\n", "\n", 1).replace("\nabi_version: {major: 1, minor: 0}\n", "\n", 1), encoding="utf-8")
    stderr = run_cli("validate", "--specs", spec_copy).stderr
    assert "missing required key 'layout'" in stderr and "missing required key 'abi_version'" in stderr
