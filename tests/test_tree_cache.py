"""The tree cache: a known fingerprint answers check and rebuilds a tree from stored blobs;
anything wrong with the cache only costs speed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.conftest import GENERATED, SPECS, run_cli
from ttlgen import generate, tree_cache
from ttlgen.write import existing_files


def tree(root: Path) -> dict[str, bytes]:
    return {path: (root / path).read_bytes() for path in existing_files(root)}


def test_a_known_tree_is_rebuilt_from_the_blob_store_without_generating(
    spec_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli("build", "--specs", spec_copy, "--out", tmp_path / "first").exit_code == 0

    def no_generation(*args: object) -> None:
        raise AssertionError("generated although the cache knows the tree")

    monkeypatch.setattr(generate, "generate", no_generation)
    assert run_cli("build", "--specs", spec_copy, "--out", tmp_path / "second").exit_code == 0
    assert tree(tmp_path / "second") == tree(tmp_path / "first")


def test_a_corrupted_blob_makes_build_generate_instead(spec_copy: Path, tmp_path: Path) -> None:
    assert run_cli("build", "--specs", spec_copy, "--out", tmp_path / "first").exit_code == 0
    manifest = (tmp_path / "first" / "MANIFEST").read_bytes()
    blob = tree_cache._blob_path(hashlib.sha256(manifest).hexdigest())
    blob.write_bytes(b"tampered\n")
    assert run_cli("build", "--specs", spec_copy, "--out", tmp_path / "second").exit_code == 0
    assert (tmp_path / "second" / "MANIFEST").read_bytes() == manifest


def test_the_committed_tree_rebuilt_from_blobs_equals_generated(tmp_path: Path) -> None:
    run_cli("check", "--specs", SPECS, "--out", GENERATED)  # records the tree of the committed specs
    out = tmp_path / "generated"
    assert run_cli("build", "--specs", SPECS, "--out", out).exit_code == 0
    assert tree(out) == tree(GENERATED)
