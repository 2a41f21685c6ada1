"""A generated tree on disk: its entries, read without following or blocking on anything
but regular files, and compared with a generation.

ttlgen writes regular files only. Anything else in the tree (a symbolic link, a FIFO, a
socket, a device) is listed as what it is and never opened: a FIFO would block its
reader, and what a link points to is not the tree.
"""

from __future__ import annotations

import difflib
import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ttlgen.errors import UsageError


@dataclass(frozen=True)
class TreeDiff:
    """How a tree on disk differs from a generation."""

    stale: tuple[str, ...]     # on disk with different content, or not as a regular file
    missing: tuple[str, ...]   # produced but not on disk
    orphaned: tuple[str, ...]  # on disk but produced by nothing
    unchanged: tuple[str, ...]
    not_regular: tuple[str, ...]  # the stale and orphaned entries that are not regular files

    @property
    def clean(self) -> bool:
        return not (self.stale or self.missing or self.orphaned)

    def to_json(self) -> dict[str, list[str]]:
        return {
            "stale": list(self.stale),
            "missing": list(self.missing),
            "orphaned": list(self.orphaned),
            "not_regular": list(self.not_regular),
        }


class ReadError(UsageError):
    """The output tree could not be read (the environment refused it)."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(f"cannot read {path}: {error.strerror or error}")


# Bytecode caches appear wherever generated Python is imported from; they are never
# outputs, so they are neither orphans nor carried into a rebuilt tree.
IGNORED_DIRS = frozenset({"__pycache__"})


def existing_entries(out_dir: Path) -> dict[str, bool]:
    """Every entry of the tree but its directories, by path: whether it is a regular file.

    Links are not followed (a link to a directory is an entry, not a directory to walk),
    so nothing outside the tree is listed; the tree's own path may be a link.
    """
    return _walk(out_dir)[0]


def _walk(out_dir: Path) -> tuple[dict[str, bool], list[str]]:
    """existing_entries, and every directory below the root ("a/", "a/b/"). The walk keeps
    its own stack: a tree nested deeper than Python's recursion limit is still a tree."""
    entries: dict[str, bool] = {}
    directories: list[str] = []
    if not out_dir.is_dir():
        return entries, directories
    pending = [(os.fspath(out_dir), "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            with os.scandir(directory) as scan:
                found = sorted(scan, key=lambda entry: entry.name, reverse=True)
        except OSError as exc:
            raise ReadError(Path(directory), exc) from None
        for entry in found:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in IGNORED_DIRS:
                    directories.append(f"{prefix}{entry.name}/")
                    pending.append((entry.path, f"{prefix}{entry.name}/"))
            else:
                entries[prefix + entry.name] = entry.is_file(follow_symlinks=False)
    return dict(sorted(entries.items())), directories


def directories_of(paths: Iterable[str]) -> set[str]:
    """Every directory below the root that holds one of ``paths`` ("a", "a/b", ...)."""
    found: set[str] = set()
    for path in paths:
        end = path.rfind("/")
        while end > 0 and path[:end] not in found:
            found.add(path[:end])
            end = path.rfind("/", 0, end)
    return found


def _empty_directories(entries: dict[str, bool], directories: list[str], files: dict[str, bytes]) -> list[str]:
    """The outermost directories (as "a/b/") that hold no entry at any depth and no file
    ``files`` puts there: a build leaves them out of the tree, so they are orphans."""
    occupied = {f"{directory}/" for directory in directories_of((*entries, *files))}
    outermost = []
    for directory in directories:
        parent = directory[: directory.rfind("/", 0, -1) + 1]  # "" for the root
        if directory not in occupied and (parent == "" or parent in occupied):
            outermost.append(directory)
    return outermost


def read_regular(path: Path) -> bytes | None:
    """The content of the regular file at ``path``, or None when it is something else.

    Nothing else is opened: the type is checked first, and the open itself refuses a link
    and does not wait on a FIFO, should one have taken the file's place in between.
    """
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
    except OSError as exc:
        raise ReadError(Path(path), exc) from None
    return _read_listed(path)


def _read_listed(path: str | Path) -> bytes | None:
    """read_regular of a path the caller has just seen listed as a regular file (its
    directory entry says so): the open refuses a link and does not wait on a FIFO, and
    what it opened is read only if it is still a regular file."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link since the check
            return None
        raise ReadError(Path(path), exc) from None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        try:
            return handle.read()
        except OSError as exc:
            raise ReadError(Path(path), exc) from None


def compare(out_dir: Path, files: dict[str, bytes]) -> TreeDiff:
    existing, directories = _walk(out_dir)
    # An empty directory is an orphan like a stray file (README: check lists orphans,
    # build removes them): an entry that is not a regular file.
    existing.update(dict.fromkeys(_empty_directories(existing, directories, files), False))
    stale, missing, unchanged = [], [], []
    not_regular = {path for path, regular in existing.items() if not regular and path not in files}
    root = os.fspath(out_dir)
    for path, content in files.items():
        if path not in existing:
            missing.append(path)
            continue
        on_disk = _read_listed(f"{root}/{path}") if existing[path] else None
        if on_disk is None:
            not_regular.add(path)
        if on_disk != content:
            stale.append(path)
        else:
            unchanged.append(path)
    orphaned = sorted(existing.keys() - files.keys())
    return TreeDiff(
        tuple(sorted(stale)), tuple(sorted(missing)), tuple(orphaned), tuple(sorted(unchanged)), tuple(sorted(not_regular))
    )


def _text(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def unified_diff(out_dir: Path, files: dict[str, bytes], diff: TreeDiff) -> str:
    """The change ``build`` would make, as a git-style unified diff."""
    # The directory's own name, also for `--out .`: `a//path` is no header git applies.
    name = os.path.basename(os.path.abspath(out_dir))
    chunks: list[str] = []
    not_regular = set(diff.not_regular)
    for path in sorted((*diff.stale, *diff.missing, *diff.orphaned)):
        # What is not a regular file has no text to diff: say what build does with it.
        if path in not_regular:
            chunks.append(f"not a regular file: a/{name}/{path}; build {'replaces' if path in files else 'removes'} it\n")
        absent = path in diff.missing or path in not_regular
        old = b"" if absent else read_regular(out_dir / path) or b""
        new = files.get(path, b"")
        before = "/dev/null" if absent else f"a/{name}/{path}"
        after = f"b/{name}/{path}" if path in files else "/dev/null"
        lines = difflib.unified_diff(_text(old), _text(new), before, after)
        for line in lines:
            chunks.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(chunks)
