"""Small spec trees run through the real pipeline, with chosen outputs snapshotted.

generated/ shows what an emitter change does to the shipped specs; these fixtures show it on
specs small enough to read whole in a review: tests/fixtures/emit/layout/ (one small layout:
its C header and Python codec) and tests/fixtures/emit/kernel/ (a tiny op and target set and
one kernel: the resolver tables and the compute kernel). Snapshots keep each file's own
extension under tests/__snapshots__/test_emitter_fixtures/. Only spec-dependent outputs are
snapshotted: files every tree gets verbatim (schemas, resolver engine, codec helpers) are
checked once, in generated/.
"""

from __future__ import annotations

import functools
from pathlib import PurePosixPath

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from tests.conftest import REPO
from ttlgen.pipeline import render_specs

FIXTURES = REPO / "tests" / "fixtures" / "emit"

OUTPUTS = {
    "layout": (
        "include/mini/abi/mi_abi.h",
        "python/mini_abi/codec.py",
        "python/mini_abi/layout.py",
    ),
    "kernel": (
        "kernels/add_exp/compute.cpp",
        "python/ttl_kernel_config/ops_table.py",
        "python/ttl_kernel_config/targets.py",
        "python/ttl_kernel_config/vocabulary.py",
    ),
}
CASES = [(fixture, path) for fixture, paths in OUTPUTS.items() for path in paths]


@functools.cache
def tree(fixture: str) -> dict[str, bytes]:
    return render_specs(FIXTURES / fixture / "specs")


@functools.cache
def extension_for(suffix: str) -> type[SingleFileSnapshotExtension]:
    """A text snapshot stored with the output's own extension, so review tools highlight it."""
    return type(
        f"Snapshot_{suffix}",
        (SingleFileSnapshotExtension,),
        {"file_extension": suffix, "_write_mode": WriteMode.TEXT},
    )


@pytest.mark.parametrize(
    ("fixture", "path"), CASES, ids=[f"{f}-{p.replace('/', '__')}" for f, p in CASES]
)
def test_emitted_file(fixture: str, path: str, snapshot: SnapshotAssertion) -> None:
    suffix = PurePosixPath(path).suffix.lstrip(".")
    assert tree(fixture)[path].decode("utf-8") == snapshot(extension_class=extension_for(suffix))


@pytest.mark.parametrize("fixture", sorted(OUTPUTS))
def test_fixture_tree_is_a_minimal_valid_spec_tree(fixture: str) -> None:
    """Each fixture builds, and every spec file in it is a source of a snapshotted output."""
    specs = FIXTURES / fixture / "specs"
    files = tree(fixture)
    named = "".join(files[path].decode("utf-8") for path in OUTPUTS[fixture])
    for spec in sorted(specs.rglob("*.yaml")):
        rel = f"specs/{spec.relative_to(specs).as_posix()}"
        assert rel in named, f"{rel} feeds none of the snapshotted outputs; drop it or snapshot what it feeds"


def test_fixture_paths_are_spec_trees() -> None:
    assert sorted(p.name for p in FIXTURES.iterdir()) == sorted(OUTPUTS)
    assert all((FIXTURES / f / "specs").is_dir() for f in OUTPUTS)
