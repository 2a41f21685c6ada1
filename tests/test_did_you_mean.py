"""Unknown names come with the closest valid ones, and only those."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli
from ttlgen.errors import did_you_mean

OPS = ["tile_add", "tile_sub", "tile_mul", "tile_exp", "tile_neg", "tile_relu", "tile_max"]


def test_a_one_letter_typo_suggests_only_the_name_it_misspells() -> None:
    assert did_you_mean("tile_exps", OPS) == " (did you mean 'tile_exp'?)"


def test_names_as_close_as_the_closest_are_all_offered_best_first() -> None:
    assert did_you_mean("tile_slu", ["tile_silu", "tile_sub", "tile_add"]) == " (did you mean 'tile_silu' or 'tile_sub'?)"


def test_nothing_close_suggests_nothing() -> None:
    assert did_you_mean("frobnicate", OPS) == ""


def test_a_one_letter_typo_of_a_three_letter_name_suggests_it() -> None:
    assert did_you_mean("ouy", ["out", "x"]) == " (did you mean 'out'?)"


def test_a_letter_too_many_on_a_one_letter_name_suggests_it() -> None:
    assert did_you_mean("xq", ["x", "out"]) == " (did you mean 'x'?)"


def test_swapped_neighbours_in_a_short_name_suggest_it() -> None:
    assert did_you_mean("uot", ["out", "in"]) == " (did you mean 'out'?)"


def test_a_one_letter_name_does_not_suggest_an_unrelated_one_letter_name() -> None:
    assert did_you_mean("y", ["x", "out"]) == ""


def test_two_edits_in_a_short_name_suggest_nothing() -> None:
    assert did_you_mean("oxy", ["out", "in"]) == ""


def test_a_misspelt_short_dataflow_buffer_of_a_kernel_suggests_the_declared_one(spec_copy: Path) -> None:
    kernels = spec_copy / "kernels" / "unary.yaml"
    text = kernels.read_text(encoding="utf-8")
    assert "            - push: out\n" in text
    kernels.write_text(text.replace("            - push: out\n", "            - push: ouy\n", 1), encoding="utf-8")
    result = run_cli("validate", "--specs", spec_copy)
    assert result.exit_code == 2
    assert "unknown dataflow buffer 'ouy'; declared: out, x (did you mean 'out'?)" in result.stderr
