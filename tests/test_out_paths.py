"""Every `--out` a user can name is built, or refused up front with one line; nothing is
left beside the tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import GENERATED, SPECS, run_cli
from ttlgen.tree import existing_entries


def tree(root: Path) -> dict[str, bytes]:
    return {path: (root / path).read_bytes() for path in existing_entries(root)}


def stale_copy(tmp_path: Path) -> Path:
    out = tmp_path / "generated"
    shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns("__pycache__"))
    (out / "docs" / "komorebi-abi.md").write_text("stale\n")
    (out / "orphan.txt").write_text("no spec makes me\n")
    return out


def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name not in ("generated", "specs", "mnt", "inside")]


def test_out_dot_builds_the_tree_the_current_directory_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stale_copy(tmp_path)
    monkeypatch.chdir(out)
    result = run_cli("build", "--specs", SPECS, "--out", ".")
    assert result.exit_code == 0, result.stderr
    assert tree(out) == tree(GENERATED)
    assert Path.cwd().samefile(out), "the current directory is still the tree"
    assert leftovers(tmp_path) == []


def test_out_dot_dot_from_inside_the_tree_builds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stale_copy(tmp_path)
    monkeypatch.chdir(out / "docs")
    result = run_cli("build", "--specs", SPECS, "--out", "..")
    assert result.exit_code == 0, result.stderr
    assert tree(out) == tree(GENERATED)
    assert leftovers(tmp_path) == []


def test_a_mount_point_out_is_updated_in_place(tmp_path: Path) -> None:
    mount = tmp_path / "mnt"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(mount)], capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN)")
    try:
        assert run_cli("build", "--specs", SPECS, "--out", mount).exit_code == 0
        (mount / "docs" / "komorebi-abi.md").write_text("stale\n")
        (mount / "orphan.txt").write_text("no spec makes me\n")
        result = run_cli("build", "--specs", SPECS, "--out", mount)
        assert result.exit_code == 0, result.stderr
        assert tree(mount) == tree(GENERATED)
        assert leftovers(tmp_path) == []
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_cache_inside_out_is_refused_before_anything_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "generated" / ".cache"))
    result = run_cli("build", "--specs", SPECS, "--out", tmp_path / "generated")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert "contains the cache directory" in line and "TTLGEN_CACHE_DIR" in line
    assert not (tmp_path / "generated").exists()


def test_a_cache_inside_out_is_no_obstacle_with_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "generated" / ".cache"))
    result = run_cli("build", "--specs", SPECS, "--out", tmp_path / "generated", "--no-cache")
    assert result.exit_code == 0, result.stderr
    assert tree(tmp_path / "generated") == tree(GENERATED)


def test_the_file_system_root_is_refused_as_out() -> None:
    result = run_cli("build", "--specs", SPECS, "--out", "/")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["ttlgen: --out / is a file system's root; choose a directory below it"]
