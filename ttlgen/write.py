"""Comparing a generated tree with what is on disk, and replacing it atomically.

``build`` stages the complete new tree beside the output directory, then swaps it in.
Where the kernel can exchange two paths in one step (Linux ``renameat2`` with
``RENAME_EXCHANGE``), the output path holds a complete tree at every moment: the old one
until the exchange, the new one after it. Elsewhere the swap is two renames, and a build
killed between them leaves the old tree beside the path; every command that reads or
writes the tree puts it back first (:func:`recover`). Unchanged files keep their mtime
(and so keep make/ninja from rebuilding what did not change): they are hard-linked into
the stage when they already have the mode the current umask gives a new file, and copied
otherwise, so that every file and directory of the new tree gets that mode (modes never
depend on which files changed) while nothing of the old tree changes before the swap.

Builds are serialised by an advisory lock on the directory holding the tree; ``check``
and ``diff`` take the same lock shared, so they never read a tree in the middle of a swap.
An output path that is a symbolic link is replaced where it points (`tree_path`).

The lock and the tree's path are ttlgen/tree_lock.py; each step on the disk goes through
ttlgen/fs_steps.py; reading and comparing the tree is ttlgen/tree.py.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ttlgen.errors import UsageError
from ttlgen.fs_steps import FS, OutputError, StrPath
from ttlgen.tree import ReadError, TreeDiff, compare, directories_of, read_regular
from ttlgen.tree_lock import tree_path

# Written first and removed last by an update in place (`_update_in_place`): while it is
# there, `check` lists it as an orphan, so a tree an interrupted update left half new is
# never taken for an up-to-date one.
INCOMPLETE = ".ttlgen-incomplete"


def _swap_refused(out_dir: Path) -> str | None:
    """Why the tree at ``out_dir`` (a tree path) is updated in place instead of swapped
    whole, or None: a mount point cannot be renamed, and a tree holding the current
    directory would leave the user's shell in a deleted directory."""
    if not out_dir.is_dir():
        return None
    if os.path.ismount(out_dir):
        return "a mount point"
    try:
        Path.cwd().resolve().relative_to(out_dir)
    except (ValueError, OSError):
        return None
    return "the current directory's tree"


def _stage_name(out_dir: Path, role: str) -> Path:
    return out_dir.parent / f".{out_dir.name}.ttlgen-{role}-{os.getpid()}"


def _leftovers(out_dir: Path) -> list[tuple[str, Path]]:
    """The stages and old trees (role, path) that builds of ``out_dir`` left beside it, by
    name: the tree's own name is matched as text, never as a pattern, whatever it holds."""
    prefix = f".{out_dir.name}.ttlgen-"
    try:
        names = sorted(os.listdir(out_dir.parent))
    except OSError:
        return []
    found = []
    for name in names:
        role, _, pid = name[len(prefix) :].rpartition("-")
        if name.startswith(prefix) and role in ("stage", "old") and pid.isdigit():
            found.append((role, out_dir.parent / name))
    return found


def interrupted_swap(out_dir: Path) -> Path | None:
    """The old tree a build killed between the two renames of its swap left beside
    ``out_dir`` (the output path is then empty), or None."""
    out_dir = tree_path(out_dir)
    if out_dir.exists() or not out_dir.parent.is_dir():
        return None
    return next((path for role, path in _leftovers(out_dir) if role == "old"), None)


def recover(out_dir: Path) -> None:
    """Undo what an interrupted build left behind (stale stages, a half-done swap).

    Call it holding the tree's exclusive lock: a stage of a live build is not a leftover.
    """
    out_dir = tree_path(out_dir)
    for role, leftover in _leftovers(out_dir):
        if role == "old" and leftover.is_dir() and not os.path.lexists(out_dir):
            try:
                FS.rename(leftover, out_dir)  # the swap stopped between its two renames
            except OSError as exc:
                raise UsageError(
                    f"cannot put back the tree an interrupted build left at {leftover}: "
                    f"{exc.strerror or exc}; move it to {out_dir} yourself"
                ) from None
        else:
            FS.remove_tree(leftover)


def is_generated_tree(out_dir: Path, manifest: str, notice: str) -> bool:
    """True when ``out_dir`` is absent, empty, or was written by ttlgen (its MANIFEST says so)."""
    if not out_dir.exists():
        return True
    if not out_dir.is_dir():
        return False
    if not any(out_dir.iterdir()):
        return True
    try:
        content = read_regular(out_dir / manifest)
    except ReadError:
        return False
    if content is None:
        return False
    return notice in content.decode("utf-8", errors="replace").partition("\n")[0]


@dataclass(frozen=True)
class _Modes:
    """The modes the current umask gives a new file and a new directory: every file and
    directory of a built tree has them, whichever files changed."""

    file: int
    directory: int

    @classmethod
    def current(cls) -> _Modes:
        mask = os.umask(0)  # read by setting it: put back at once
        os.umask(mask)
        return cls(0o666 & ~mask, 0o777 & ~mask)


def _mode(path: StrPath) -> int:
    return stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode)


def _directories(files: Iterable[str]) -> list[str]:
    """Every directory of the tree below its root ("a", "a/b", ...), parents first."""
    return sorted(directories_of(files), key=lambda directory: (directory.count("/"), directory))


def _modes_differ(out_dir: Path, files: Iterable[str], modes: _Modes) -> bool:
    paths = list(files)
    root = os.fspath(out_dir)
    if any(_mode(f"{root}/{path}") != modes.file for path in paths):
        return True
    return any(_mode(f"{root}/{directory}") != modes.directory for directory in (".", *_directories(paths)))


def up_to_date(out_dir: Path, diff: TreeDiff) -> bool:
    """Whether a build would leave the tree as it is: the content is what the specs give
    (``diff`` is clean) and every file and directory already has the umask's mode."""
    if not diff.clean:
        return False
    try:
        return not _modes_differ(tree_path(out_dir), diff.unchanged, _Modes.current())
    except OSError:  # gone since the comparison: the build finds out what is there
        return False


def _stage(stage: str, out_dir: Path, files: dict[str, bytes], diff: TreeDiff, modes: _Modes) -> None:
    """Fill the new, empty directory ``stage`` with ``files``, every file and directory
    with the umask's mode. An unchanged file is the old tree's own inode, hard-linked (so
    it keeps its mtime), when its mode is already right, and a copy with its mtime when
    not: nothing of the old tree changes before the swap."""
    old_root = os.fspath(out_dir)
    for directory in _directories(files):
        FS.mkdir(f"{stage}/{directory}")
    unchanged = set(diff.unchanged)
    for path, content in files.items():
        old, new = f"{old_root}/{path}", f"{stage}/{path}"
        if path in unchanged:
            if _mode(old) == modes.file:
                FS.link(old, new)
                continue
            FS.copy(old, new, content)
        else:
            FS.write(new, content)
        FS.chmod(new, modes.file)
    for directory in (".", *_directories(files)):
        if _mode(f"{stage}/{directory}") != modes.directory:
            FS.chmod(f"{stage}/{directory}", modes.directory)


def _update_in_place(out_dir: Path, files: dict[str, bytes], diff: TreeDiff, modes: _Modes) -> None:
    """Make the tree hold ``files`` file by file: each written under a temporary name and
    renamed over its path (never half a file), orphans and emptied directories removed,
    modes set; the `INCOMPLETE` marker is there from the first change to the last."""
    root = os.fspath(out_dir)
    marker = f"{root}/{INCOMPLETE}"
    FS.write(marker, b"ttlgen is updating this tree in place; an interrupted build left it incomplete: run `ttlgen build`\n")
    wanted = set(_directories(files))
    for path in diff.orphaned:
        if path != INCOMPLETE:  # an interrupted update's marker: written again above
            FS.remove_tree(Path(f"{root}/{path}"))
    for directory in sorted(wanted, key=lambda d: d.count("/")):
        target = f"{root}/{directory}"
        if os.path.lexists(target) and (os.path.islink(target) or not os.path.isdir(target)):
            FS.remove_tree(Path(target))
        if not os.path.isdir(target):
            FS.mkdir(target)
    for path in (*diff.stale, *diff.missing):
        target = f"{root}/{path}"
        if os.path.isdir(target) and not os.path.islink(target):
            FS.remove_tree(Path(target))
        temporary = f"{target.rpartition('/')[0]}/.ttlgen-tmp-{os.getpid()}"
        FS.write(temporary, files[path])
        FS.chmod(temporary, modes.file)
        FS.rename(Path(temporary), Path(target))
    for path in diff.unchanged:
        if _mode(f"{root}/{path}") != modes.file:
            FS.chmod(f"{root}/{path}", modes.file)
    for directory, subdirectories, _ in sorted(os.walk(root), reverse=True):  # deepest first
        relative = os.path.relpath(directory, root)
        for name in subdirectories:
            inner = name if relative == "." else f"{relative}/{name}"
            if inner not in wanted and os.path.isdir(f"{root}/{inner}") and not os.listdir(f"{root}/{inner}"):
                FS.remove_tree(Path(f"{root}/{inner}"))
    for directory in (".", *wanted):
        if _mode(f"{root}/{directory}") != modes.directory:
            FS.chmod(f"{root}/{directory}", modes.directory)
    FS.unlink(marker)


def _repository_in(diff: TreeDiff) -> str | None:
    """The first `.git` among the tree's orphans (a directory, or a worktree's file), or
    None: the one kind of orphan that is never ttlgen's to delete."""
    for path in diff.orphaned:
        parts = path.split("/")
        if ".git" in parts:
            return "/".join(parts[: parts.index(".git") + 1])
    return None


def write_tree(out_dir: Path, files: dict[str, bytes]) -> TreeDiff:
    """Make ``out_dir`` hold exactly ``files``, every file and directory with the mode the
    umask gives. Writes nothing when that is already so.

    Hold the tree's exclusive lock. Raises OutputError when the disk refuses a write. The
    tree is staged beside ``out_dir`` and swapped in whole (the old tree is intact until
    the swap), except where it cannot be (`_swap_refused`): then it is updated in place. A
    symbolic link at ``out_dir`` is kept; the tree is replaced where it points.
    """
    out_dir = tree_path(out_dir)
    recover(out_dir)
    diff = compare(out_dir, files)
    if up_to_date(out_dir, diff):
        return diff
    repository = _repository_in(diff)
    if repository is not None:
        raise UsageError(
            f"refusing to replace {out_dir}: it holds {out_dir / repository}, a Git repository "
            "(its history), which a build would delete with the other orphans; move it out of the "
            "tree or choose another --out"
        )
    if _swap_refused(out_dir) is not None:
        try:
            _update_in_place(out_dir, files, diff, _Modes.current())
        except OSError as exc:
            raise OutputError(
                Path(exc.filename) if exc.filename else out_dir,
                exc,
                f"the tree is marked incomplete ({INCOMPLETE}) until a build succeeds",
            ) from None
        return diff
    stage = _stage_name(out_dir, "stage")
    old = _stage_name(out_dir, "old")
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        FS.mkdir(stage)
        _stage(os.fspath(stage), out_dir, files, diff, _Modes.current())
        if not os.path.lexists(out_dir):
            FS.rename(stage, out_dir)
        elif FS.exchange(stage, out_dir):
            stage, old = old, stage  # the old tree is now at the stage's path
        else:
            FS.rename(out_dir, old)
            try:
                FS.rename(stage, out_dir)
            except BaseException:
                if old.exists() and not out_dir.exists():
                    FS.rename(old, out_dir)
                raise
    except OSError as exc:
        raise OutputError(Path(exc.filename) if exc.filename else out_dir, exc) from None
    finally:
        FS.remove_tree(stage)
    FS.remove_tree(old)
    return diff
