"""Comparing a generated tree with what is on disk, and replacing it atomically.

``build`` stages the complete new tree beside the output directory, then swaps it in.
Where the kernel can exchange two paths in one step (Linux ``renameat2`` with
``RENAME_EXCHANGE``), the output path holds a complete tree at every moment: the old one
until the exchange, the new one after it. Elsewhere the swap is two renames, and a build
killed between them leaves the old tree beside the path; every command that reads or
writes the tree puts it back first (:func:`recover`). Unchanged files are hard-linked
into the stage, which keeps their mtime (and so keeps make/ninja from rebuilding what did
not change); every file and directory of the new tree gets the mode the current umask
gives a new file, so modes never depend on which files changed.

Builds are serialised by an advisory lock on the directory holding the tree; ``check``
and ``diff`` take the same lock shared, so they never read a tree in the middle of a swap.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import difflib
import errno
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from ttlgen.errors import UsageError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no advisory locks of this kind
    fcntl = None  # type: ignore[assignment]


@dataclass(frozen=True)
class TreeDiff:
    stale: tuple[str, ...]     # on disk with different content
    missing: tuple[str, ...]   # produced but not on disk
    orphaned: tuple[str, ...]  # on disk but produced by nothing
    unchanged: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return not (self.stale or self.missing or self.orphaned)

    def to_json(self) -> dict[str, list[str]]:
        return {"stale": list(self.stale), "missing": list(self.missing), "orphaned": list(self.orphaned)}


class OutputError(UsageError):
    """The output tree could not be written (the environment refused it); the old tree is intact."""

    def __init__(self, path: Path, error: OSError) -> None:
        self.path = path
        self.error = error
        reason = error.strerror or str(error)
        super().__init__(f"cannot write {path}: {reason}; the previous tree is unchanged")


# Bytecode caches appear wherever generated Python is imported from; they are never
# outputs, so they are neither orphans nor carried into a rebuilt tree.
IGNORED_DIRS = frozenset({"__pycache__"})


def existing_files(out_dir: Path) -> Iterator[str]:
    if not out_dir.is_dir():
        return
    for root, dirs, files in os.walk(out_dir):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in sorted(files):
            yield (Path(root) / name).relative_to(out_dir).as_posix()


def compare(out_dir: Path, files: dict[str, bytes]) -> TreeDiff:
    existing = set(existing_files(out_dir))
    stale, missing, unchanged = [], [], []
    for path, content in files.items():
        if path not in existing:
            missing.append(path)
        elif (out_dir / path).read_bytes() != content:
            stale.append(path)
        else:
            unchanged.append(path)
    orphaned = sorted(existing - files.keys())
    return TreeDiff(tuple(sorted(stale)), tuple(sorted(missing)), tuple(orphaned), tuple(sorted(unchanged)))


def compare_hashes(expected: dict[str, str], on_disk: dict[str, str]) -> TreeDiff:
    """The same comparison as `compare`, from content hashes alone."""
    stale = sorted(p for p in expected if p in on_disk and on_disk[p] != expected[p])
    missing = sorted(p for p in expected if p not in on_disk)
    unchanged = sorted(p for p in expected if on_disk.get(p) == expected[p])
    orphaned = sorted(on_disk.keys() - expected.keys())
    return TreeDiff(tuple(stale), tuple(missing), tuple(orphaned), tuple(unchanged))


def _text(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def unified_diff(out_dir: Path, files: dict[str, bytes], diff: TreeDiff) -> str:
    """The change ``build`` would make, as a git-style unified diff."""
    name = out_dir.name
    chunks: list[str] = []
    for path in sorted((*diff.stale, *diff.missing, *diff.orphaned)):
        old = (out_dir / path).read_bytes() if path not in diff.missing else b""
        new = files.get(path, b"")
        before = f"a/{name}/{path}" if path not in diff.missing else "/dev/null"
        after = f"b/{name}/{path}" if path in files else "/dev/null"
        lines = difflib.unified_diff(_text(old), _text(new), before, after)
        for line in lines:
            chunks.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(chunks)


# ----------------------------------------------------------------------- file system


def _renameat2() -> Callable[[bytes, bytes], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        func = libc.renameat2
    except (OSError, AttributeError):
        return None
    func.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    func.restype = ctypes.c_int
    at_fdcwd, rename_exchange = -100, 2

    def exchange(a: bytes, b: bytes) -> int:
        return int(func(at_fdcwd, a, at_fdcwd, b, rename_exchange))

    return exchange


_EXCHANGE = _renameat2()


class _FileSystem:
    """Every change a build makes to the disk goes through here, one call per step, so
    tests can stop a build at each of them (and the rest of this module stays plain)."""

    def mkdir(self, path: Path) -> None:
        path.mkdir()

    def write(self, path: Path, content: bytes) -> None:
        path.write_bytes(content)

    def link(self, old: Path, new: Path) -> None:
        try:
            os.link(old, new)
        except OSError:
            shutil.copy2(old, new)

    def chmod(self, path: Path, mode: int) -> None:
        os.chmod(path, mode)

    def rename(self, old: Path, new: Path) -> None:
        os.rename(old, new)

    def exchange(self, a: Path, b: Path) -> bool:
        """Swap two existing paths in one step; False where the system cannot."""
        if _EXCHANGE is None:
            return False
        if _EXCHANGE(os.fsencode(a), os.fsencode(b)) == 0:
            return True
        code = ctypes.get_errno()
        if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            return False
        raise OSError(code, os.strerror(code), str(a))

    def remove_tree(self, path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)


FS = _FileSystem()


def _stage_name(out_dir: Path, role: str) -> Path:
    return out_dir.parent / f".{out_dir.name}.ttlgen-{role}-{os.getpid()}"


@contextlib.contextmanager
def tree_lock(out_dir: Path, shared: bool = False, waiting: IO[str] | None = None) -> Iterator[None]:
    """Hold the tree's lock: exclusive for a build, shared for a reader.

    The lock is an advisory lock on the directory that holds the tree (the tree itself is
    replaced by every build, and a lock file would be litter beside it). When another
    ttlgen holds it, one line is written to ``waiting`` and the call blocks until the
    other finishes. Without a parent directory there is nothing to lock yet.
    """
    parent = out_dir.parent
    if fcntl is None or not parent.is_dir():
        yield
        return
    try:
        descriptor = os.open(parent, os.O_RDONLY)
    except OSError:  # an unreadable parent: the build fails on its own error later
        yield
        return
    try:
        mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        try:
            fcntl.flock(descriptor, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                what = "writing" if shared else "using"
                waiting.write(f"ttlgen: another ttlgen is {what} {out_dir}; waiting for it to finish\n")
                waiting.flush()
            fcntl.flock(descriptor, mode)
        yield
    finally:
        os.close(descriptor)


def interrupted_swap(out_dir: Path) -> Path | None:
    """The old tree a build killed between the two renames of its swap left beside
    ``out_dir`` (the output path is then empty), or None."""
    if out_dir.exists() or not out_dir.parent.is_dir():
        return None
    return next(iter(sorted(out_dir.parent.glob(f".{out_dir.name}.ttlgen-old-*"))), None)


def recover(out_dir: Path) -> None:
    """Undo what an interrupted build left behind (stale stages, a half-done swap).

    Call it holding the tree's exclusive lock: a stage of a live build is not a leftover.
    """
    parent = out_dir.parent
    if not parent.is_dir():
        return
    for leftover in sorted(parent.glob(f".{out_dir.name}.ttlgen-*")):
        if "-old-" in leftover.name and not out_dir.exists():
            FS.rename(leftover, out_dir)  # the swap stopped between its two renames
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
        with open(out_dir / manifest, encoding="utf-8") as handle:
            return notice in handle.readline()
    except (OSError, UnicodeDecodeError):
        return False


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _stage(stage: Path, out_dir: Path, files: dict[str, bytes], diff: TreeDiff) -> None:
    mask = _umask()
    FS.mkdir(stage)
    directories = sorted({PurePosixPath(path).parent for path in files} - {PurePosixPath(".")})
    for directory in directories:
        for part in reversed((directory, *directory.parents)):
            if part != PurePosixPath(".") and not (stage / part).exists():
                FS.mkdir(stage / part)
    unchanged = set(diff.unchanged)
    for path, content in files.items():
        if path in unchanged:
            FS.link(out_dir / path, stage / path)
        else:
            FS.write(stage / path, content)
        FS.chmod(stage / path, 0o666 & ~mask)
    for directory in (PurePosixPath("."), *directories):
        FS.chmod(stage / directory, 0o777 & ~mask)


def write_tree(out_dir: Path, files: dict[str, bytes]) -> TreeDiff:
    """Make ``out_dir`` hold exactly ``files``. Writes nothing when already identical.

    Hold the tree's exclusive lock. Raises OutputError (old tree intact) when the disk
    refuses a write.
    """
    recover(out_dir)
    diff = compare(out_dir, files)
    if diff.clean:
        return diff
    stage = _stage_name(out_dir, "stage")
    old = _stage_name(out_dir, "old")
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        _stage(stage, out_dir, files, diff)
        if not out_dir.exists():
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
