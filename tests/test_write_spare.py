"""A build stages the new tree in the tree the last build of the same output replaced (its
spare, kept in the cache: ttlgen/write.py `_stage`) rather than creating every directory
again; whatever the spare holds, the tree is the one a stage from scratch gives."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from ttlgen import write
from ttlgen.write import existing_files, write_tree

FILES = {
    "MANIFEST": b"manifest 1\n",
    "include/a.h": b"a\n",
    "include/deep/b.h": b"b\n",
    "kernels/k1/compute.cpp": b"k1\n",
    "kernels/k2/compute.cpp": b"k2\n",
}


def changed(files: dict[str, bytes], edits: dict[str, bytes | None]) -> dict[str, bytes]:
    out = dict(files)
    for path, value in edits.items():
        if value is None:
            del out[path]
        else:
            out[path] = value
    return out


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every entry of a tree: content and mode, directories included (content b"")."""
    found: dict[str, tuple[bytes, int]] = {".": (b"", stat.S_IMODE(os.stat(root).st_mode))}
    for directory, dirs, names in os.walk(root):
        for name in dirs:
            path = Path(directory) / name
            found[str(path.relative_to(root))] = (b"", stat.S_IMODE(os.lstat(path).st_mode))
        for name in names:
            path = Path(directory) / name
            found[str(path.relative_to(root))] = (path.read_bytes(), stat.S_IMODE(os.lstat(path).st_mode))
    return found


def spare_of(out: Path) -> Path:
    path = write._spare_path(out)
    assert path is not None, "the test's cache is on the file system of its trees"
    return path


def counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[object]:
    calls: list[object] = []
    real = getattr(write.FS, name)

    def counted(*args: object) -> object:
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(write.FS, name, counted)
    return calls


def test_the_tree_a_build_replaces_becomes_the_spare_of_its_output(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    write_tree(out, FILES)
    assert not spare_of(out).exists()  # nothing was replaced
    write_tree(out, changed(FILES, {"MANIFEST": b"manifest 2\n"}))
    assert (spare_of(out) / "MANIFEST").read_bytes() == b"manifest 1\n"
    assert sorted(existing_files(spare_of(out))) == sorted(FILES)


def test_a_build_in_a_spare_creates_no_directory_when_the_tree_keeps_its_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "generated"
    write_tree(out, FILES)
    write_tree(out, changed(FILES, {"MANIFEST": b"manifest 2\n"}))
    made = counting(monkeypatch, "mkdir")
    write_tree(out, changed(FILES, {"MANIFEST": b"manifest 3\n", "include/a.h": b"a3\n"}))
    assert made == []
    assert not spare_of(out).exists() or (spare_of(out) / "MANIFEST").read_bytes() == b"manifest 2\n"


def test_in_a_spare_an_unchanged_file_is_the_trees_own_inode_and_keeps_its_mtime(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    write_tree(out, FILES)
    os.utime(out / "include/a.h", ns=(1_000_000_000, 1_000_000_000))
    write_tree(out, changed(FILES, {"include/a.h": b"a2\n"}))  # the spare now holds the first a.h
    before = os.stat(out / "kernels/k1/compute.cpp")
    write_tree(out, changed(FILES, {"include/a.h": b"a2\n", "MANIFEST": b"manifest 3\n"}))
    after = os.stat(out / "kernels/k1/compute.cpp")
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    # a.h went back to no earlier content: a new file, not the spare's old inode and mtime
    assert os.stat(out / "include/a.h").st_mtime_ns != 1_000_000_000


def test_a_file_that_returns_to_an_earlier_content_is_a_new_file_not_the_spares(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    write_tree(out, FILES)
    os.utime(out / "include/a.h", ns=(1_000_000_000, 1_000_000_000))
    write_tree(out, changed(FILES, {"include/a.h": b"a2\n"}))
    write_tree(out, FILES)  # a.h as it first was: the spare holds that very file
    # Reusing it would give the file its first mtime, older than anything built from a2.
    assert os.stat(out / "include/a.h").st_mtime_ns != 1_000_000_000
    assert (out / "include/a.h").read_bytes() == b"a\n"


@pytest.mark.parametrize(
    "damage",
    ["extra-files", "symlink-for-a-file", "directory-for-a-file", "file-for-a-directory", "wrong-modes", "other-content", "empty", "bytecode-cache"],
)
def test_whatever_the_spare_holds_the_build_gives_the_tree_a_fresh_stage_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    target = changed(FILES, {"MANIFEST": b"manifest 2\n", "kernels/k3/compute.cpp": b"k3\n", "kernels/k2/compute.cpp": None})
    fresh = tmp_path / "fresh" / "generated"
    write_tree(fresh, FILES)
    with monkeypatch.context() as patch:
        patch.setattr(write, "_spare_path", lambda out_dir: None)
        write_tree(fresh, target)

    out = tmp_path / "generated"
    write_tree(out, FILES)
    spare = spare_of(out)
    shutil.rmtree(spare, ignore_errors=True)
    shutil.copytree(out, spare)
    if damage == "extra-files":
        (spare / "stray.txt").write_bytes(b"x")
        (spare / "stray").mkdir()
        (spare / "stray" / "f").write_bytes(b"y")
    elif damage == "symlink-for-a-file":
        (spare / "include/a.h").unlink()
        (spare / "include/a.h").symlink_to(out / "include/a.h")
    elif damage == "directory-for-a-file":
        (spare / "MANIFEST").unlink()
        (spare / "MANIFEST").mkdir()
    elif damage == "file-for-a-directory":
        shutil.rmtree(spare / "include/deep")
        (spare / "include/deep").write_bytes(b"not a directory")
    elif damage == "wrong-modes":
        os.chmod(spare / "include/a.h", 0o600)
        os.chmod(spare / "include", 0o700)
    elif damage == "other-content":
        for path in existing_files(spare):
            (spare / path).write_bytes(b"stale\n")
    elif damage == "empty":
        shutil.rmtree(spare)
        spare.mkdir()
    elif damage == "bytecode-cache":
        (spare / "include" / "__pycache__").mkdir()
        (spare / "include" / "__pycache__" / "a.pyc").write_bytes(b"\0")
    write_tree(out, target)
    assert snapshot(out) == snapshot(fresh)


def test_the_live_tree_is_never_written_through_its_spare(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    write_tree(out, FILES)
    write_tree(out, changed(FILES, {"MANIFEST": b"manifest 2\n"}))
    # The spare shares every unchanged file with the tree; the next build changes one.
    assert os.stat(spare_of(out) / "include/a.h").st_ino == os.stat(out / "include/a.h").st_ino
    write_tree(out, changed(FILES, {"MANIFEST": b"manifest 2\n", "include/a.h": b"a2\n"}))
    assert (out / "include/a.h").read_bytes() == b"a2\n"
    assert (spare_of(out) / "include/a.h").read_bytes() == b"a\n"  # the replaced tree, intact


def test_at_most_a_bounded_number_of_spares_is_kept(tmp_path: Path) -> None:
    for i in range(write.SPARES_KEPT + 3):
        out = tmp_path / f"tree{i}" / "generated"
        write_tree(out, FILES)
        write_tree(out, changed(FILES, {"MANIFEST": b"manifest 2\n"}))
    spares = spare_of(tmp_path / "tree0" / "generated").parent
    assert len(list(spares.iterdir())) == write.SPARES_KEPT
    # the most recently used are the ones kept
    assert spare_of(tmp_path / f"tree{write.SPARES_KEPT + 2}" / "generated").exists()
    assert not spare_of(tmp_path / "tree0" / "generated").exists()


def test_without_caching_no_spare_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_NO_CACHE", "1")
    out = tmp_path / "generated"
    write_tree(out, FILES)
    write_tree(out, changed(FILES, {"MANIFEST": b"manifest 2\n"}))
    assert write._spare_path(out) is None
    assert sorted(existing_files(out)) == sorted(FILES)
    assert [p.name for p in tmp_path.iterdir()] == ["generated"]
