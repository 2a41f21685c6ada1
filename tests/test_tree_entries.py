"""What is in the output tree besides the regular files ttlgen writes: symbolic links (an
editor's lock file `.#name` is a dangling one), FIFOs, sockets. ttlgen never opens them
(a FIFO blocks its reader) and reports them as what they are, an orphan or a stale output
that is not a regular file.

What the tree holds is not the point: the tests run on the real specs without their kernels
and start from the tree those build (tests/tree_support.py)."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli

# A FIFO opened for reading blocks until a writer comes: a hang must fail the test instead.
DEADLINE_S = 60


@pytest.fixture(autouse=True)
def deadline() -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"the command did not finish in {DEADLINE_S} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(DEADLINE_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def dangling_link(path: Path) -> None:
    path.symlink_to("nowhere")


def link_to_a_directory(path: Path) -> None:
    path.symlink_to("..", target_is_directory=True)


def fifo(path: Path) -> None:
    os.mkfifo(path)


def unix_socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    # A socket's path is limited to ~100 bytes; the tests run in tmp_path, so bind it relatively.
    server.bind(os.path.relpath(path))
    server.close()


def character_device(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # what /dev/null is
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD")


ENTRIES: dict[str, Callable[[Path], None]] = {
    "editor-lock-file": dangling_link,
    "link-to-a-directory": link_to_a_directory,
    "fifo": fifo,
    "socket": unix_socket,
    "device": character_device,
}
# diff and build read the tree as check does; the two kinds reported against them suffice.
REPORTED = ("editor-lock-file", "fifo")


def add_entry(generated: Path, kind: str) -> str:
    """Put an entry of ``kind`` in the docs directory; its path in the tree."""
    ENTRIES[kind](generated / "docs" / ".#komorebi-abi.md")
    return "docs/.#komorebi-abi.md"


@pytest.mark.parametrize("kind", ENTRIES)
def test_check_reports_an_entry_that_is_not_a_regular_file_as_an_orphan(
    spec_tree: Path, built: Path, kind: str
) -> None:
    path = add_entry(built, kind)
    result = run_cli("check", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 1
    assert f"orphaned: {built / path} (not a regular file)\n" in result.stderr


def test_check_json_lists_what_is_not_a_regular_file(spec_tree: Path, built: Path) -> None:
    path = add_entry(built, "fifo")
    result = run_cli("check", "--specs", spec_tree, "--out", built, "--json")
    assert json.loads(result.stdout) == {
        "status": "stale", "stale": [], "missing": [], "orphaned": [path], "not_regular": [path]
    }


def test_an_output_path_holding_a_link_is_stale_even_with_the_right_content(
    spec_tree: Path, built: Path
) -> None:
    doc = built / "docs" / "komorebi-abi.md"
    doc.rename(built.parent / "copy.md")
    doc.symlink_to(built.parent / "copy.md")
    result = run_cli("check", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 1
    assert f"stale: {doc} (not a regular file)\n" in result.stderr


@pytest.mark.parametrize("kind", REPORTED)
def test_diff_says_build_removes_an_entry_that_is_not_a_regular_file(
    spec_tree: Path, built: Path, kind: str
) -> None:
    path = add_entry(built, kind)
    result = run_cli("diff", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 1
    assert result.stdout == f"not a regular file: a/generated/{path}; build removes it\n"


@pytest.mark.parametrize("kind", REPORTED)
def test_build_removes_an_entry_that_is_not_a_regular_file(
    spec_tree: Path, built: Path, kind: str
) -> None:
    path = add_entry(built, kind)
    result = run_cli("build", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 0, result.stderr
    assert not os.path.lexists(built / path)
    assert run_cli("check", "--specs", spec_tree, "--out", built, "--no-cache").exit_code == 0


def test_build_replaces_a_linked_output_with_a_regular_file(spec_tree: Path, built: Path) -> None:
    doc = built / "docs" / "komorebi-abi.md"
    target = built.parent / "elsewhere.md"
    target.write_text("the link's target\n", encoding="utf-8")
    doc.unlink()
    doc.symlink_to(target)
    assert run_cli("build", "--specs", spec_tree, "--out", built).exit_code == 0
    assert not doc.is_symlink() and doc.is_file()
    assert target.read_text(encoding="utf-8") == "the link's target\n"


def test_build_refuses_a_tree_whose_manifest_is_a_fifo(spec_tree: Path, built: Path) -> None:
    manifest = built / "MANIFEST"
    manifest.unlink()
    os.mkfifo(manifest)
    result = run_cli("build", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 2
    assert "has no ttlgen MANIFEST" in result.stderr


def test_check_reports_an_empty_directory_as_an_orphan_at_its_outermost(spec_tree: Path, built: Path) -> None:
    (built / "stray" / "deeper").mkdir(parents=True)
    result = run_cli("check", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 1
    assert f"orphaned: {built / 'stray'} (an empty directory)\n" in result.stderr
    assert "deeper" not in result.stderr


def test_build_removes_an_empty_directory_check_reports(spec_tree: Path, built: Path) -> None:
    (built / "stray" / "deeper").mkdir(parents=True)
    assert run_cli("build", "--specs", spec_tree, "--out", built).exit_code == 0
    assert not (built / "stray").exists()
    assert run_cli("check", "--specs", spec_tree, "--out", built).exit_code == 0


def test_a_directory_emptied_of_its_outputs_is_missing_files_not_an_orphan(spec_tree: Path, built: Path) -> None:
    directory = next(p for p in sorted(built.iterdir()) if p.is_dir())
    for path in sorted(directory.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    verdict = json.loads(run_cli("check", "--specs", spec_tree, "--out", built, "--json").stdout)
    assert verdict["missing"] and verdict["orphaned"] == []


def test_check_walks_a_tree_nested_deeper_than_the_recursion_limit(spec_tree: Path, built: Path) -> None:
    import sys

    # Made and removed a level at a time: os.makedirs and shutil.rmtree recurse too.
    levels = [built / "deep"]
    for _ in range(sys.getrecursionlimit() + 100):
        levels.append(levels[-1] / "d")
    for level in levels:
        level.mkdir()
    (levels[-1] / "stray").write_text("x\n")
    try:
        result = run_cli("check", "--specs", spec_tree, "--out", built, "--json")
    finally:
        (levels[-1] / "stray").unlink()
        for level in reversed(levels):
            level.rmdir()
    assert result.exit_code == 1
    (orphan,) = json.loads(result.stdout)["orphaned"]
    assert orphan == (levels[-1] / "stray").relative_to(built).as_posix()


def test_diff_of_out_dot_names_the_directory_in_its_headers(spec_tree: Path, built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    edited = next(p for p in sorted(built.rglob("*.md")))
    edited.write_text(edited.read_text(encoding="utf-8") + "edited\n", encoding="utf-8")
    monkeypatch.chdir(built)
    result = run_cli("diff", "--specs", spec_tree, "--out", ".")
    assert result.exit_code == 1
    relative = edited.relative_to(built.parent).as_posix()
    assert f"--- a/{relative}\n+++ b/{relative}\n" in result.stdout
    (built.parent / "change.diff").write_text(result.stdout, encoding="utf-8")
    git = subprocess.run(["git", "apply", "--check", "change.diff"], cwd=built.parent, capture_output=True, text=True, check=False)
    assert git.returncode == 0, git.stderr
