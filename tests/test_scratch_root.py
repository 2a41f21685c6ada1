"""The suite's scratch files go to RAM-backed storage only when the user chose no place and
it has room (tests/conftest.py: ram_scratch_root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import _CHOSEN_TEMP, ram_scratch_root


def _no_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _CHOSEN_TEMP:
        monkeypatch.delenv(name, raising=False)


def test_a_writable_directory_with_room_is_chosen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_choice(monkeypatch)
    assert ram_scratch_root(tmp_path, room=1) == tmp_path


@pytest.mark.parametrize("name", _CHOSEN_TEMP)
def test_a_temporary_directory_the_user_named_stands(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_choice(monkeypatch)
    monkeypatch.setenv(name, str(tmp_path))
    assert ram_scratch_root(tmp_path, room=1) is None


def test_a_directory_without_the_room_asked_is_not_chosen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_choice(monkeypatch)
    assert ram_scratch_root(tmp_path, room=1 << 62) is None


def test_a_missing_directory_is_not_chosen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_choice(monkeypatch)
    assert ram_scratch_root(tmp_path / "absent", room=1) is None
