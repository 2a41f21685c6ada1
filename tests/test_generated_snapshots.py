"""The golden tree: one snapshot per generated file, stored with the file's own extension.

A pull request that changes a spec shows the per-file diff of these snapshots; an output
no spec produces any more shows up as an unused snapshot. Review flow:
    pytest -p no:cacheprovider --snapshot-update
then read `git diff tests/__snapshots__`.
"""

from __future__ import annotations

import functools
from pathlib import PurePosixPath

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from tests.conftest import SPECS
from ttlgen.pipeline import generate

TREE = generate(SPECS).files


@functools.cache
def extension_for(suffix: str) -> type[SingleFileSnapshotExtension]:
    return type(
        f"Snapshot_{suffix or 'plain'}",
        (SingleFileSnapshotExtension,),
        {"file_extension": suffix or "txt", "_write_mode": WriteMode.TEXT},
    )


@pytest.mark.parametrize("path", sorted(TREE), ids=[p.replace("/", "__") for p in sorted(TREE)])
def test_generated_file(path: str, snapshot: SnapshotAssertion) -> None:
    suffix = PurePosixPath(path).suffix.lstrip(".")
    assert TREE[path].decode("utf-8") == snapshot(extension_class=extension_for(suffix))
