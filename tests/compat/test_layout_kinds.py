"""Each kind of top-level thing of a layout (constant, enum, word, struct, table, block)
changes alike: a thing removed breaks the wire, a thing at the same place under a new name
breaks source only, a thing added is compatible. Every layout of the real specs, and every
thing of each kind, is changed in turn on the model (so the catalogue's spec edits need not
name one of each)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SPECS
from ttlgen.compat.changes import Change, Impact
from ttlgen.compat.layout_diff import LayoutDiff
from ttlgen.compat.sides import Side, SpecPaths
from ttlgen.model.layout import Layout

# Layout's tuple of each kind of top-level thing, and the word a finding names it by.
KINDS = {"constants": "constant", "enums": "enum", "words": "word", "structs": "struct", "tables": "table", "blocks": "block"}


@pytest.fixture(scope="module")
def side() -> Side:
    return Side.load(SPECS, "in the working tree", SpecPaths(Path("specs")))


def _layouts(side: Side) -> list[Layout]:
    layouts = list(side.project.layouts.layouts)
    assert layouts, "the specs have a layout"
    return layouts


def _things(layout: Layout, kind: str) -> tuple[Any, ...]:
    return tuple(getattr(layout, kind))


def _each(side: Side, kind: str) -> list[tuple[Layout, int, Any]]:
    """Every thing of ``kind`` of every layout, with its layout and index."""
    found = [(layout, i, thing) for layout in _layouts(side) for i, thing in enumerate(_things(layout, kind))]
    if not found:
        pytest.skip(f"no layout of the specs has a {KINDS[kind]}")
    return found


def _diff(side: Side, old: Layout, new: Layout) -> list[Change]:
    return LayoutDiff(side, side, old, new).run()


def _found(changes: list[Change], kind: str, noun: str, name: str) -> list[Change]:
    return [c for c in changes if c.kind == kind and c.subject == f"{noun} {name!r}"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_removed_thing_breaks_the_wire(side: Side, kind: str) -> None:
    noun = KINDS[kind]
    for layout, i, thing in _each(side, kind):
        things = _things(layout, kind)
        new = dataclasses.replace(layout, **{kind: things[:i] + things[i + 1 :]})
        (change,) = _found(_diff(side, layout, new), f"{noun}-removed", noun, thing.name)
        assert change.impact is Impact.WIRE and change.after is None and change.before is not None


@pytest.mark.parametrize("kind", KINDS)
def test_a_thing_renamed_in_place_breaks_source_only(side: Side, kind: str) -> None:
    noun = KINDS[kind]
    for layout, i, thing in _each(side, kind):
        things = _things(layout, kind)
        renamed = dataclasses.replace(thing, name=f"{thing.name}_renamed")
        new = dataclasses.replace(layout, **{kind: (*things[:i], renamed, *things[i + 1 :])})
        changes = _diff(side, layout, new)
        (change,) = _found(changes, f"{noun}-renamed", noun, thing.name)
        assert change.impact is Impact.SOURCE
        assert f"renamed to '{thing.name}_renamed'" in change.message
        assert not _found(changes, f"{noun}-removed", noun, thing.name)


@pytest.mark.parametrize("kind", KINDS)
def test_an_added_thing_is_compatible(side: Side, kind: str) -> None:
    noun = KINDS[kind]
    for layout, _, thing in _each(side, kind):
        things = _things(layout, kind)
        copy = dataclasses.replace(thing, name=f"{thing.name}_added")
        changes = _diff(side, layout, dataclasses.replace(layout, **{kind: (*things, copy)}))
        (change,) = _found(changes, f"{noun}-added", noun, copy.name)
        assert change.impact is Impact.COMPATIBLE and change.before is None and change.after is not None


def test_every_kind_of_top_level_thing_is_covered() -> None:
    """A new kind of top-level thing in the layout model joins KINDS (and these tests)."""
    tuples = {f.name for f in dataclasses.fields(Layout) if str(f.type).startswith("tuple[")}
    assert tuples == set(KINDS)
