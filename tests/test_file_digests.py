"""File digests (ttlgen/fingerprint.py) are read from disk unless stat shows the file as it
was when hashed, and files changed too recently to tell are never answered from the record."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ttlgen import fingerprint

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def memo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh record in a cache of its own; returns the cache directory."""
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(cache_dir))
    monkeypatch.delenv("TTLGEN_NO_CACHE", raising=False)
    monkeypatch.setattr(fingerprint, "_digests", None)
    monkeypatch.setattr(fingerprint, "_digests_used", set())
    monkeypatch.setattr(fingerprint, "_digests_changed", False)
    return cache_dir


def _old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    # Files a test writes are brand new; let them count as settled.
    monkeypatch.setattr(fingerprint, "_RECENT_NS", -10**12)


def _write(path: Path, text: str, mtime_s: int) -> str:
    path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime_s, mtime_s))
    return str(path)


def test_a_file_digest_is_the_sha256_of_its_content(memo: Path, tmp_path: Path) -> None:
    path = _write(tmp_path / "a.yaml", "a: 1\n", 1_000_000)
    assert fingerprint.file_digest(path) == hashlib.sha256(b"a: 1\n").digest()


def test_a_file_whose_stat_is_as_recorded_is_not_read_again(
    memo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _old_enough(monkeypatch)
    path = _write(tmp_path / "a.yaml", "a: 1\n", 1_000_000)
    fingerprint.file_digest(path)
    known = fingerprint._known_digests()
    known[path] = (*known[path][:5], b"\x01" * 32)  # what the record says, not the content
    assert fingerprint.file_digest(path) == b"\x01" * 32


def test_a_file_rewritten_with_the_same_size_is_read_again(
    memo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _old_enough(monkeypatch)
    path = _write(tmp_path / "a.yaml", "a: 1\n", 1_000_000)
    fingerprint.file_digest(path)
    _write(tmp_path / "a.yaml", "a: 2\n", 1_000_001)
    assert fingerprint.file_digest(path) == hashlib.sha256(b"a: 2\n").digest()


def test_a_file_changed_in_the_last_two_seconds_is_not_recorded(memo: Path, tmp_path: Path) -> None:
    # Its next change could fall in the same timestamp tick and leave its stat as it is.
    path = tmp_path / "a.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    fingerprint.file_digest(str(path))
    assert str(path) not in fingerprint._known_digests()


def test_a_later_process_answers_settled_files_from_the_record(memo: Path) -> None:
    path = str(REPO / "pyproject.toml")
    program = (
        "from ttlgen import fingerprint\n"
        f"print({path!r} in fingerprint._known_digests())\n"
        f"fingerprint.file_digest({path!r})\n"
    )
    env = {**os.environ, "TTLGEN_CACHE_DIR": str(memo)}

    def recorded_before() -> str:
        return subprocess.run([sys.executable, "-c", program], env=env, check=True, capture_output=True, text=True).stdout.strip()

    assert recorded_before() == "False"
    assert recorded_before() == "True"


def test_with_caching_off_nothing_is_recorded(memo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _old_enough(monkeypatch)
    monkeypatch.setenv("TTLGEN_NO_CACHE", "1")
    path = _write(tmp_path / "a.yaml", "a: 1\n", 1_000_000)
    fingerprint.file_digest(path)
    fingerprint._save_digests()
    assert not (memo / "file-digests").exists()


def test_a_damaged_record_is_ignored(memo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _old_enough(monkeypatch)
    record = fingerprint._digests_path()
    record.parent.mkdir(parents=True)
    record.write_bytes(b"\x00" * 40)
    path = _write(tmp_path / "a.yaml", "a: 1\n", 1_000_000)
    assert fingerprint.file_digest(path) == hashlib.sha256(b"a: 1\n").digest()


def test_past_the_limit_a_process_keeps_only_the_files_it_hashed(
    memo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _old_enough(monkeypatch)
    monkeypatch.setattr(fingerprint, "_DIGESTS_LIMIT", 2)
    known = fingerprint._known_digests()
    known.update({f"/gone/{n}": (0, 0, 0, 0, 0, b"\x00" * 32) for n in range(3)})
    path = _write(tmp_path / "a.yaml", "a: 1\n", 1_000_000)
    fingerprint.file_digest(path)
    fingerprint._save_digests()
    monkeypatch.setattr(fingerprint, "_digests", None)
    assert list(fingerprint._known_digests()) == [path]


def test_the_tree_hash_covers_each_file_by_path_and_content(memo: Path, tmp_path: Path) -> None:
    (tmp_path / "t" / "sub").mkdir(parents=True)
    (tmp_path / "t" / "sub" / "x.yaml").write_text("x: 1\n", encoding="utf-8")

    def tree() -> str:
        digest = hashlib.sha256()
        fingerprint.hash_tree(digest, tmp_path / "t", "t")
        return digest.hexdigest()

    first = tree()
    (tmp_path / "t" / "sub" / "x.yaml").rename(tmp_path / "t" / "sub" / "y.yaml")
    renamed = tree()
    (tmp_path / "t" / "sub" / "y.yaml").write_text("x: 2\n", encoding="utf-8")
    assert len({first, renamed, tree()}) == 3
