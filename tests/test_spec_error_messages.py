"""Every class of spec error has a patch of the real specs and the exact messages it gets.

A case is a directory tests/fixtures/bad_specs/<area>/<case>/ holding only what differs from
specs/ (format: tests/fixtures/bad_specs/README.md): patch.yaml with text edits of real spec
files and specs to delete, any new (broken) spec file at its path under specs/, and
expected.txt with the messages `ttlgen validate` prints. The test copies specs/, applies the
patch, validates and compares the messages.

The expected messages live beside the patch rather than under __snapshots__ so a reviewer
reads a case in one directory, and adding, moving or deleting a case is one directory that
no snapshot clean-up can touch. `pytest --snapshot-update` rewrites an expected.txt that
differs, as it does for syrupy snapshots; review the result with
`git diff tests/fixtures/bad_specs`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import BAD_SPECS, SPECS, bad_spec_tree, run_cli
from tests.spec_patch import EXPECTED_MESSAGES, Edit, StaleAnchor, apply_edits, load_patch
from ttlgen import cache

CASES = sorted(p.relative_to(BAD_SPECS).as_posix() for p in BAD_SPECS.glob("*/*") if p.is_dir())
IDS = [c.replace("/", ".") for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bad_spec_is_rejected_with_located_messages(
    case: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The messages of an unknown API function say whether the pinned release has one, when
    # its headers are fetched: without them, as on a fresh clone, the messages are the same
    # whatever this machine's cache holds (tests/test_op_completeness.py covers the rest).
    monkeypatch.setenv(cache.UPSTREAM_ENV, str(tmp_path / "no-upstream-cache"))
    specs = bad_spec_tree(case, tmp_path)
    result = run_cli("validate", "--specs", specs)
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("specs/"), "every message starts with its file location"
    expected = BAD_SPECS / case / EXPECTED_MESSAGES
    updating = request.config.getoption("update_snapshots", default=False)
    if updating and (not expected.exists() or expected.read_text(encoding="utf-8") != result.stderr):
        expected.write_text(result.stderr, encoding="utf-8")
    assert expected.exists(), f"{case} has no {EXPECTED_MESSAGES}; run pytest --snapshot-update and review it"
    assert result.stderr == expected.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_case_states_only_what_differs_from_the_real_specs(case: str) -> None:
    """A case edits real files in place and adds only files the real tree lacks: a copy of a
    real spec goes stale as soon as the real file gains an entry."""
    patch = load_patch(BAD_SPECS / case, case)
    assert patch.edits or patch.delete or patch.files, f"{case} changes nothing in specs/"
    for relative, _ in patch.files:
        assert not (SPECS / relative).exists(), (
            f"{case} holds a whole specs/{relative}; state the change as an edit in its patch.yaml"
        )
    for edit in patch.edits:
        assert edit.old != edit.new, f"{case}: an edit of {edit.file} replaces {edit.old!r} by itself"


def test_an_anchor_the_real_spec_no_longer_holds_names_the_case_and_the_text(tmp_path: Path) -> None:
    spec = tmp_path / "ops" / "x.yaml"
    spec.parent.mkdir()
    spec.write_text("names: [a, b]\n", encoding="utf-8")
    with pytest.raises(StaleAnchor, match=r"ops/some_case: .*specs/ops/x\.yaml is not found: 'names: \[a\]'"):
        apply_edits(tmp_path, [Edit("ops/x.yaml", "names: [a]", "names: [c]")], case="ops/some_case")


def test_an_anchor_found_twice_is_refused_rather_than_guessed(tmp_path: Path) -> None:
    spec = tmp_path / "x.yaml"
    spec.write_text("a: 1\nb: 1\n", encoding="utf-8")
    with pytest.raises(StaleAnchor, match="found 2 times"):
        apply_edits(tmp_path, [Edit("x.yaml", ": 1", ": 2")], case="c")
    assert spec.read_text(encoding="utf-8") == "a: 1\nb: 1\n"
