"""Every `--out` a user can name is built, or refused up front with one line; nothing is
left beside the tree.

What the tree holds is not the point: the builds read the real specs without their kernels
and start from the tree those build (tests/tree_support.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import TEMPLATES, run_cli
from tests.tree_support import small_render, small_specs, tree, write_built


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    """tmp_path/specs: the real specs without their kernels."""
    return small_specs(tmp_path / "specs")


def stale_copy(tmp_path: Path) -> Path:
    out = write_built(tmp_path / "generated")
    (out / "docs" / "komorebi-abi.md").write_text("stale\n")
    (out / "orphan.txt").write_text("no spec makes me\n")
    return out


def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name not in ("generated", "specs", "mnt", "inside")]


def test_out_dot_builds_the_tree_the_current_directory_is(specs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stale_copy(tmp_path)
    monkeypatch.chdir(out)
    result = run_cli("build", "--specs", specs, "--out", ".")
    assert result.exit_code == 0, result.stderr
    assert tree(out) == small_render()
    assert Path.cwd().samefile(out), "the current directory is still the tree"
    assert leftovers(tmp_path) == []


def test_out_dot_dot_from_inside_the_tree_builds_it(specs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = stale_copy(tmp_path)
    monkeypatch.chdir(out / "docs")
    result = run_cli("build", "--specs", specs, "--out", "..")
    assert result.exit_code == 0, result.stderr
    assert tree(out) == small_render()
    assert leftovers(tmp_path) == []


def test_a_mount_point_out_is_updated_in_place(specs: Path, tmp_path: Path) -> None:
    mount = tmp_path / "mnt"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(mount)], capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN)")
    try:
        assert run_cli("build", "--specs", specs, "--out", mount).exit_code == 0
        (mount / "docs" / "komorebi-abi.md").write_text("stale\n")
        (mount / "orphan.txt").write_text("no spec makes me\n")
        result = run_cli("build", "--specs", specs, "--out", mount)
        assert result.exit_code == 0, result.stderr
        assert tree(mount) == small_render()
        assert leftovers(tmp_path) == []
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_cache_inside_out_is_refused_before_anything_is_written(specs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "generated" / ".cache"))
    result = run_cli("build", "--specs", specs, "--out", tmp_path / "generated")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert "contains the cache directory" in line and "TTLGEN_CACHE_DIR" in line
    assert not (tmp_path / "generated").exists()


def test_a_cache_inside_out_is_no_obstacle_with_no_cache(specs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "generated" / ".cache"))
    result = run_cli("build", "--specs", specs, "--out", tmp_path / "generated", "--no-cache")
    assert result.exit_code == 0, result.stderr
    assert tree(tmp_path / "generated") == small_render()


def test_the_file_system_root_is_refused_as_out(specs: Path) -> None:
    result = run_cli("build", "--specs", specs, "--out", "/")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["ttlgen: --out / is a file system's root; choose a directory below it"]


@pytest.mark.parametrize("command", ["build", "check", "diff"])
def test_an_out_inside_the_template_directory_is_refused_with_why(specs: Path, command: str) -> None:
    # The tree's MANIFEST hashes every template, its own files among them: each build
    # would change the next one's input, and the tree would never be up to date.
    shutil.copytree(TEMPLATES, "templates")
    result = run_cli(command, "--specs", specs, "--templates", "templates", "--out", "templates/gen")
    assert (result.exit_code, result.stderr) == (
        2, "ttlgen: --out templates/gen is inside the template directory templates: every file below it is read "
        "as a template, so each build changes the templates of the next; choose an --out outside it\n",
    )  # fmt: skip
    assert not Path("templates/gen").exists()


def test_an_out_inside_the_spec_directory_is_refused_with_why(specs: Path) -> None:
    result = run_cli("build", "--specs", "specs", "--out", "specs/gen")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("ttlgen: --out specs/gen is inside the spec directory specs: ") and "is read as a spec" in line
    assert not Path("specs/gen").exists()
