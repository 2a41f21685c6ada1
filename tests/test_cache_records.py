"""A cache only ever costs or saves time: whatever happens to its records, the output is
what the inputs give.

Every record under the cache root is damaged in turn (a byte flipped, cut short, swapped
with another record, emptied) and the commands are run again: a damaged record is a miss.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import GENERATED, SPECS, run_cli
from ttlgen.tree import existing_entries


def build(out: Path, cache: Path) -> None:
    """A build in a process of its own, which starts with no compiled template in memory."""
    env = {**os.environ, "TTLGEN_CACHE_DIR": str(cache)}
    env.pop("TTLGEN_NO_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-m", "ttlgen", "build", "--specs", str(SPECS), "--out", str(out)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr


def tree(root: Path) -> dict[str, bytes]:
    return {path: (root / path).read_bytes() for path in existing_entries(root)}


def records(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


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
def test_a_damaged_template_record_never_reaches_the_tree(tmp_path: Path, damage: str) -> None:
    root = tmp_path / "cache"
    build(tmp_path / "out", root)
    found = records(root)
    assert found, "the build recorded its compiled templates"
    for record in found:
        DAMAGE[damage](record, found)
    shutil.rmtree(tmp_path / "out")
    build(tmp_path / "out", root)
    assert tree(tmp_path / "out") == tree(GENERATED)


def test_no_cache_writes_no_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "cache"
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(root))
    assert run_cli("check", "--specs", SPECS, "--out", GENERATED, "--no-cache").exit_code == 0
    monkeypatch.setenv("TTLGEN_NO_CACHE", "1")
    assert run_cli("check", "--specs", SPECS, "--out", GENERATED).exit_code == 0
    assert not os.path.exists(root) or not records(root)
