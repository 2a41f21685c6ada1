"""Every class of spec error has an overlay on the real specs and the exact messages it gets.

A case is a directory tests/fixtures/bad_specs/<area>/<case>/ holding only what differs from
specs/ (format: tests/fixtures/bad_specs/README.md): the broken spec files at their path
under specs/, an optional delete.txt, and expected.txt with the messages `ttlgen validate`
prints. The test copies specs/, applies the overlay, validates and compares the messages.

The expected messages live beside the broken file rather than under __snapshots__ so a
reviewer reads a case in one directory, and adding, moving or deleting a case is one
directory that no snapshot clean-up can touch. `pytest --snapshot-update` rewrites an
expected.txt that differs, as it does for syrupy snapshots; review the result with
`git diff tests/fixtures/bad_specs`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import (
    BAD_SPECS,
    EXPECTED_MESSAGES,
    REPO,
    SPECS,
    bad_spec_tree,
    deletions,
    overlay_files,
    run_cli,
)

CASES = sorted(p.relative_to(BAD_SPECS).as_posix() for p in BAD_SPECS.glob("*/*") if p.is_dir())
IDS = [c.replace("/", ".") for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bad_spec_is_rejected_with_located_messages(
    case: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
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
def test_overlay_changes_specs_only_where_it_breaks_them(case: str) -> None:
    """A case holds broken or new files only: an unchanged copy of a real spec is dead weight."""
    directory = BAD_SPECS / case
    files = overlay_files(directory)
    assert files or deletions(directory), f"{case} changes nothing in specs/"
    for source in files:
        real = SPECS / source.relative_to(directory)
        assert not real.exists() or real.read_bytes() != source.read_bytes(), (
            f"{source.relative_to(REPO)} is a copy of {real.relative_to(REPO)}; delete it from the case"
        )
