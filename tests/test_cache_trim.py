"""The cache root stays under TTLGEN_CACHE_MAX_MB: past it, the records written longest
ago go first (ttlgen/cache.py: trim)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ttlgen import cache

HOUR = 3600.0
NOW = 1_000_000_000.0


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TTLGEN_CACHE_MAX_MB", str(8 / 1024))  # 8 KiB
    return tmp_path / "cache"


def record(root: Path, name: str, written: float, size: int = 1024) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    os.utime(path, (written, written))
    return path


def test_past_the_limit_the_oldest_records_go_until_three_quarters_remain(root: Path) -> None:
    paths = [record(root, f"parts/ab/{i:02}", NOW - 100 + i) for i in range(12)]  # 12 KiB
    cache.trim(NOW)
    kept = [p for p in paths if p.exists()]
    assert kept == paths[-6:]  # 6 KiB <= 3/4 of 8 KiB


def test_under_the_limit_nothing_goes(root: Path) -> None:
    paths = [record(root, f"blobs/{i}", NOW - i) for i in range(8)]
    cache.trim(NOW)
    assert all(p.exists() for p in paths)


def test_the_emulators_builds_are_never_trimmed(root: Path) -> None:
    build = record(root, "device/abc/kernel.exe", NOW - 10 * HOUR, size=64 * 1024)
    cache.trim(NOW)
    assert build.exists()


def test_the_root_is_looked_at_once_an_hour_at_most(root: Path) -> None:
    cache.trim(NOW)
    paths = [record(root, f"parts/{i}", NOW - 100 + i) for i in range(12)]
    cache.trim(NOW + HOUR / 2)
    assert all(p.exists() for p in paths)
    cache.trim(NOW + HOUR + 1)
    assert not paths[0].exists()


def test_a_missing_root_or_a_mistyped_limit_changes_nothing(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache.trim(NOW)  # no root yet
    monkeypatch.setenv("TTLGEN_CACHE_MAX_MB", "lots")  # the default limit then
    paths = [record(root, f"parts/{i}", NOW - i) for i in range(12)]
    cache.trim(NOW + 2 * HOUR)
    assert all(p.exists() for p in paths)
