"""Unknown names come with the closest valid ones, and only those."""

from __future__ import annotations

from ttlgen.errors import did_you_mean

OPS = ["tile_add", "tile_sub", "tile_mul", "tile_exp", "tile_neg", "tile_relu", "tile_max"]


def test_a_one_letter_typo_suggests_only_the_name_it_misspells() -> None:
    assert did_you_mean("tile_exps", OPS) == " (did you mean 'tile_exp'?)"


def test_names_as_close_as_the_closest_are_all_offered_best_first() -> None:
    assert did_you_mean("tile_slu", ["tile_silu", "tile_sub", "tile_add"]) == " (did you mean 'tile_silu' or 'tile_sub'?)"


def test_nothing_close_suggests_nothing() -> None:
    assert did_you_mean("frobnicate", OPS) == ""
