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
An output path that is a symbolic link is replaced where it points (:func:`tree_path`).

Reading and comparing the tree is ttlgen/tree.py.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Union

from ttlgen.errors import UsageError
from ttlgen.tree import ReadError, TreeDiff, compare, directories_of, read_regular

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no advisory locks of this kind
    fcntl = None  # type: ignore[assignment]

# What the file-system steps take: the stage's paths are strings (see _FileSystem).
StrPath = Union[str, "os.PathLike[str]"]


class OutputError(UsageError):
    """The output tree could not be written (the environment refused it). A swapped tree is
    intact; a tree updated in place is marked incomplete until the next build succeeds."""

    def __init__(self, path: Path, error: OSError, in_place: bool = False) -> None:
        self.path = path
        self.error = error
        reason = error.strerror or str(error)
        outcome = (
            f"the tree is marked incomplete ({INCOMPLETE}) until a build succeeds"
            if in_place
            else "the previous tree is unchanged"
        )
        super().__init__(f"cannot write {path}: {reason}; {outcome}")


# Written first and removed last by an update in place (`_update_in_place`): while it is
# there, `check` lists it as an orphan, so a tree an interrupted update left half new is
# never taken for an up-to-date one.
INCOMPLETE = ".ttlgen-incomplete"


# ----------------------------------------------------------------------- file system


def _renameat2() -> Callable[[bytes, bytes], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    # The interpreter's own symbols include its C library's, and looking there costs no
    # search: ctypes.util.find_library runs `ldconfig -p` in a child process (2-4 ms of
    # every build, measured).
    try:
        func = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        try:
            func = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).renameat2
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

    # The paths of a stage's files are plain strings: a tree is hundreds of them, and a
    # pathlib join costs more than the system call it feeds.

    def mkdir(self, path: StrPath) -> None:
        os.mkdir(path)

    def write(self, path: StrPath, content: bytes) -> None:
        with open(path, "wb") as handle:
            handle.write(content)

    def link(self, old: StrPath, new: StrPath) -> None:
        try:
            os.link(old, new, follow_symlinks=False)
        except OSError:
            shutil.copy2(old, new, follow_symlinks=False)

    def copy(self, old: StrPath, new: StrPath, content: bytes) -> None:
        """A new file with ``old``'s content (known to be ``content``) and mtime."""
        times = os.stat(old, follow_symlinks=False)
        self.write(new, content)
        os.utime(new, ns=(times.st_atime_ns, times.st_mtime_ns))

    def chmod(self, path: StrPath, mode: int) -> None:
        os.chmod(path, mode)

    def unlink(self, path: StrPath) -> None:
        os.unlink(path)

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
        # Named by the tree's path: the stage is a temporary name the user never chose.
        raise OSError(code, os.strerror(code), str(b))

    def remove_tree(self, path: Path) -> None:
        """Remove a leftover, whatever it is; a link is removed, never followed."""
        if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
            path.unlink(missing_ok=True)
        else:
            # A leftover that cannot be removed now (a directory made unwritable inside
            # it) is removed by the next command's recovery; the tree at the path is
            # complete either way.
            _remove_directory(path)


def _remove_directory(root: Path) -> None:
    """shutil.rmtree(root, ignore_errors=True) without recursion: before Python 3.12 it
    recursed once a level, so a tree nested a thousand deep raised RecursionError."""
    pending, emptied = [os.fspath(root)], []
    while pending:
        directory = pending.pop()
        emptied.append(directory)
        try:
            with os.scandir(directory) as scan:
                entries = list(scan)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
    for directory in reversed(emptied):  # every directory after those inside it
        with contextlib.suppress(OSError):
            os.rmdir(directory)


FS = _FileSystem()


def resolved(path: Path) -> Path:
    """``path`` made absolute with every symbolic link in it followed."""
    try:
        return path.resolve()
    except RuntimeError:  # Python before 3.13 reports a loop of links so
        reason = "a loop of symbolic links"
    except OSError as exc:
        reason = "a loop of symbolic links" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
    raise UsageError(f"cannot follow the symbolic links of {path}: {reason}")


def tree_path(out_dir: Path) -> Path:
    """Where the tree of ``out_dir`` is, as an absolute path whose parent is the directory
    that really holds it (so ``--out .`` and ``--out ..`` stage and lock beside the tree,
    never inside it): ``out_dir``, or where it points when it is a symbolic link. The tree
    is replaced at the link's target and the link is kept (swapping the link itself would
    leave the target's old tree behind it)."""
    absolute = Path(os.path.abspath(out_dir))
    if absolute.parent == absolute:
        raise UsageError(f"--out {out_dir} is a file system's root; choose a directory below it")
    located = resolved(absolute.parent) / absolute.name
    return resolved(located) if located.is_symlink() else located


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


@contextlib.contextmanager
def tree_lock(out_dir: Path, shared: bool = False, waiting: IO[str] | None = None) -> Iterator[None]:
    """Hold the tree's lock: exclusive for a build, shared for a reader.

    The lock is an advisory lock on the directory that holds the tree (the tree itself is
    replaced by every build, and a lock file would be litter beside it). When another
    ttlgen holds it, one line is written to ``waiting`` and the call blocks until the
    other finishes. A build creates that directory when it does not exist yet, so that
    builds of a new tree are serialised too; a reader of a tree whose directory does not
    exist has nothing to lock (and nothing to read).
    """
    parent = tree_path(out_dir).parent
    if not shared:
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(Path(exc.filename) if exc.filename else parent, exc) from None
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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@dataclass(frozen=True)
class _Modes:
    """The modes the current umask gives a new file and a new directory: every file and
    directory of a built tree has them, whichever files changed."""

    file: int
    directory: int

    @classmethod
    def current(cls) -> _Modes:
        mask = _umask()
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
            raise OutputError(Path(exc.filename) if exc.filename else out_dir, exc, in_place=True) from None
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
