"""Hostile spec text is a located error (exit 2), never a traceback, a misplaced error or a hang."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import LARGE_INPUT_CPU_S, cpu_seconds_of_cli, run_cli
from ttlgen.spec.limits import ENTRIES_LIMIT, NESTING_LIMIT

HANG_GUARD_S = 10.0  # the fuzzing rule: no spec may take longer than this


def rejected(specs: Path) -> str:
    start = time.perf_counter()
    result = run_cli("validate", "--specs", specs)
    assert time.perf_counter() - start < HANG_GUARD_S
    assert result.exit_code == 2, result.stdout
    assert "Traceback" not in result.stderr
    return result.stderr


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_yaml_nested_past_the_limit_is_located(spec_copy: Path) -> None:
    deep = "".join(f"{'  ' * i}k{i}:\n" for i in range(600)) + f"{'  ' * 600}leaf: 1\n"
    (spec_copy / "ops" / "deep.yaml").write_text("spec: ttlgen.ops/v1\nfamilies:\n" + deep.replace("\n", "\n  ", 0))
    message = rejected(spec_copy)
    assert message.startswith("specs/ops/deep.yaml:")
    assert f"nest more than {NESTING_LIMIT} levels deep" in message


@pytest.mark.parametrize(
    "value",
    ["[" * 700 + "]" * 700, "{a = " * 700 + "1" + "}" * 700],
    ids=["inline-arrays", "inline-tables"],
)
def test_toml_nested_past_the_limit_is_located(spec_copy: Path, value: str) -> None:
    line = f"families = {value}"
    (spec_copy / "ops" / "deep.toml").write_text(f'spec = "ttlgen.ops/v1"\n{line}\n')
    openers = [i for i, ch in enumerate(line) if ch in "[{"]
    message = rejected(spec_copy)
    assert message.startswith(f"specs/ops/deep.toml:2:{openers[NESTING_LIMIT] + 1}: ")


def test_toml_dotted_keys_nested_past_the_limit_are_located(spec_copy: Path) -> None:
    (spec_copy / "ops" / "deep.toml").write_text('spec = "ttlgen.ops/v1"\n' + ".".join(["k"] * 700) + " = 1\n")
    assert f"nest more than {NESTING_LIMIT} levels deep" in rejected(spec_copy)


@pytest.mark.parametrize("character", ["\x0b", "\x1b", "\x00", "\x7f", "\ufffe"])
def test_a_control_character_is_reported_at_its_own_line_and_column(spec_copy: Path, character: str) -> None:
    target = spec_copy / "ops" / "matmul.yaml"
    lines = target.read_text(encoding="utf-8").split("\n")
    lines[5] = lines[5][:3] + character + lines[5][3:]
    target.write_text("\n".join(lines), encoding="utf-8")
    message = rejected(spec_copy)
    assert message.splitlines()[0].startswith(f"specs/ops/matmul.yaml:6:4: character U+{ord(character):04X} ")
    assert len(message.splitlines()) == 2  # the error and the count, nothing unlocated


def test_a_huge_list_is_rejected_at_the_list_in_under_2_s_of_cpu(spec_copy: Path) -> None:
    items = ", ".join(["16", '"x"', "32.5"] * 33_334)
    replace_in(spec_copy / "targets" / "gen1_llk.yaml", "      - allow: [16, 32]\n", f"      - allow: [{items}]\n")
    result, cpu = cpu_seconds_of_cli("validate", "--specs", spec_copy)
    assert result.exit_code == 2
    assert f"allow: more than {ENTRIES_LIMIT} entries in one list" in result.stderr
    assert cpu < LARGE_INPUT_CPU_S, f"{cpu:.2f} s of CPU"


def test_duplicates_in_a_long_mixed_list_name_the_first_repeat(spec_copy: Path) -> None:
    items = ", ".join(f'"n{i}"' if i % 2 else str(i) for i in range(ENTRIES_LIMIT - 2)) + ', "n1"'
    replace_in(spec_copy / "targets" / "gen1_llk.yaml", "      - allow: [16, 32]\n", f"      - allow: [{items}]\n")
    assert f"allow[{ENTRIES_LIMIT - 2}]: 'n1' repeats item [1]; items must be unique" in rejected(spec_copy)


@pytest.mark.parametrize(
    ("file", "old", "new", "expected"),
    [
        ("targets/gen1_llk.yaml", "      - allow: [16, 32]\n", "      - allow: [16, 32.0]\n", "allow[1]: expected an integer, got 32.0"),
        ("kernels/unary.yaml", "block: [1, 2], input", "block: [1.0, 2], input", "block[0]: expected an integer, got 1.0"),
    ],
    ids=["enum-of-integers", "integer"],
)
def test_a_float_where_an_integer_belongs_is_an_error(spec_copy: Path, file: str, old: str, new: str, expected: str) -> None:
    replace_in(spec_copy / file, old, new)
    assert expected in rejected(spec_copy)


def test_a_schema_message_may_show_braces_literally(spec_copy: Path) -> None:
    # The spelling schema's message for a bad call text names {placeholders} in braces.
    replace_in(spec_copy / "ops" / "tt_metal_spelling.yaml", "init: binary_max_tile_init()", "init: ' binary_max_tile_init()'")
    assert "{placeholders}" in rejected(spec_copy)


def test_a_name_ending_in_a_newline_does_not_match_its_pattern(spec_copy: Path) -> None:
    # ECMA-262's $ (what editors use) is the end of the text; Python's also matches before a
    # final newline, which would print the newline into generated code.
    replace_in(spec_copy / "ops" / "matmul.yaml", "names: [tile_matmul_block]", 'names: ["tile_matmul_block\\n"]')
    message = rejected(spec_copy)
    assert "'tile_matmul_block\\n'" in message and "must be a lower-case identifier" in message
