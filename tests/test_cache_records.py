"""A cache only ever costs or saves time: whatever happens to its records, the output is
what the inputs give.

Every record under the cache root is damaged in turn (a byte flipped, cut short, swapped
with another record, emptied) and the commands are run again: a damaged record is a miss.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import GENERATED, SPECS, run_cli
from tests.tree_support import small_specs, tree, write_built
from ttlgen import cache


def build(specs: Path, out: Path, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build with its cache at ``root``, which starts with no compiled template in memory:
    the templates compiled in memory are kept per cache root (ttlgen/emit/_base.py), and no
    other build of this process used ``root``."""
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(root))
    monkeypatch.delenv("TTLGEN_NO_CACHE", raising=False)
    done = run_cli("build", "--specs", specs, "--out", out)
    assert done.exit_code == 0, done.stderr


def records(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache root holding the records a build of the real specs makes (copy it to damage it)."""
    root = tmp_path_factory.mktemp("recorded") / "cache"
    with pytest.MonkeyPatch.context() as patch:
        build(SPECS, root.parent / "out", root, patch)
    return root


def flip(path: Path, others: list[Path]) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x5A
    path.write_bytes(bytes(data))


def truncate(path: Path, others: list[Path]) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def empty(path: Path, others: list[Path]) -> None:
    path.write_bytes(b"")


def swap(path: Path, others: list[Path]) -> None:
    other = next((o for o in others if o != path and o.read_bytes() != path.read_bytes()), None)
    if other is not None:
        mine, theirs = path.read_bytes(), other.read_bytes()
        path.write_bytes(theirs)
        other.write_bytes(mine)


DAMAGE: dict[str, Callable[[Path, list[Path]], None]] = {"flip": flip, "truncate": truncate, "empty": empty, "swap": swap}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_template_record_never_reaches_the_tree(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    root = tmp_path / "cache"
    shutil.copytree(recorded, root)
    found = records(root)
    assert found, "the build recorded its compiled templates"
    for record in found:
        DAMAGE[damage](record, found)
    looked_up: set[Path] = set()
    load = cache.load

    def spy(target: Path) -> bytes | None:
        looked_up.add(target)
        return load(target)

    monkeypatch.setattr(cache, "load", spy)
    build(SPECS, tmp_path / "out", root, monkeypatch)
    assert set(found) <= looked_up, "the build read every damaged record"
    assert tree(tmp_path / "out") == tree(GENERATED)


def test_no_cache_writes_no_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What the tree holds is not the point: the real specs without their kernels, and the
    # tree they build (tests/tree_support.py).
    specs, out = small_specs(tmp_path / "specs"), write_built(tmp_path / "generated")
    root = tmp_path / "cache"
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(root))
    assert run_cli("check", "--specs", specs, "--out", out, "--no-cache").exit_code == 0
    monkeypatch.setenv("TTLGEN_NO_CACHE", "1")
    assert run_cli("check", "--specs", specs, "--out", out).exit_code == 0
    assert not os.path.exists(root) or not records(root)
