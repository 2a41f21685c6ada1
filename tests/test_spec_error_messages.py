"""Every class of spec error has a fixture tree and a snapshot of the exact messages.

Each directory under tests/fixtures/bad_specs/<kind>/<case>/ is a small spec tree that
must be rejected; its messages (file:line:column: key path: message) are snapshotted.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from tests.conftest import REPO, run_cli

BAD_SPECS = REPO / "tests" / "fixtures" / "bad_specs"
CASES = sorted(p.relative_to(BAD_SPECS).as_posix() for p in BAD_SPECS.glob("*/*") if p.is_dir())


class TextSnapshot(SingleFileSnapshotExtension):
    file_extension = "txt"
    _write_mode = WriteMode.TEXT


@pytest.mark.parametrize("case", CASES, ids=[c.replace("/", ".") for c in CASES])
def test_bad_spec_is_rejected_with_located_messages(case: str, tmp_path: Path, snapshot: SnapshotAssertion) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(BAD_SPECS / case, specs)
    result = run_cli("validate", "--specs", specs)
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("specs/"), "every message starts with its file location"
    assert result.stderr == snapshot(extension_class=TextSnapshot)
