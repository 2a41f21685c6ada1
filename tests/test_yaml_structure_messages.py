"""A YAML structure error is reported at the line whose indentation went wrong, not where
the parser gave up, and a value of the wrong type says what was expected and what it got."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import SPECS, run_cli
from ttlgen.spec.yaml_source import YamlLoadError, parse_yaml

UNDER_INDENTED_KEY = """\
kernels:
  k:
    summary: one
    target: blackhole
  dfbs:
      x: 1
      y: 2
    body: []
"""

DEEPER_SECOND_ENTRY = """\
dfbs:
     x: {index: 1}
      y: {index: 2}
"""


def error_of(text: str) -> tuple[int, int, str]:
    with pytest.raises(YamlLoadError) as caught:
        parse_yaml(text, "spec.yaml")
    mark = caught.value.diagnostic.mark
    return mark.line, mark.column, caught.value.diagnostic.message


def test_an_under_indented_key_is_reported_at_its_own_line() -> None:
    line, column, message = error_of(UNDER_INDENTED_KEY)
    assert (line, column) == (5, 3)
    assert "indented 2 spaces" in message and "line 8 continues that block at 4" in message


def test_an_entry_deeper_than_the_one_before_it_is_reported_at_its_line() -> None:
    line, column, message = error_of(DEEPER_SECOND_ENTRY)
    assert (line, column) == (3, 7)
    assert "line 2, is at 5" in message


@pytest.mark.parametrize("indent", ["\t", "  \t"], ids=["tab", "spaces_then_tab"])
def test_a_tab_in_the_indentation_says_yaml_indents_with_spaces(indent: str) -> None:
    line, column, message = error_of(f"dfbs:\n  x: 1\n{indent}y: 2\n")
    assert (line, column) == (3, len(indent))
    assert message == "invalid YAML: a tab in this line's indentation; YAML indentation must use spaces"


def test_a_word_where_a_count_is_expected_says_what_a_count_is(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(SPECS, specs)
    (specs / "kernels" / "counted.yaml").write_text(
        "spec: ttlgen.kernel/v1\n"
        "kernels:\n"
        "  counted:\n"
        "    summary: a loop whose count is a word\n"
        "    target: blackhole\n"
        "    dfbs:\n"
        "      x: {index: 0, dtype: bf16, block: [1, 1], input: {shape: [1, 1]}}\n"
        "      out: {index: 16, dtype: bf16, block: [1, 1], output: {shape: [1, 1]}}\n"
        "    body:\n"
        "      - loop:\n"
        "          var: i\n"
        "          count: two\n"
        "          body: [{wait: x}, {reserve: out}, {store: {to: out, value: x}}, {pop: x}, {push: out}]\n"
        "    tolerance: {pcc: 0.99, max_rel: 0.5, derivation: a copy}\n"
    )
    result = run_cli("validate", "--specs", specs)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        "specs/kernels/counted.yaml:12:18: kernels.counted.body[0].loop.count: expected a count "
        "(a non-negative integer) or a parameter name (this kernel declares none), got 'two'"
    )
