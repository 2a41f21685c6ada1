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

ttlgen writes regular files only. Anything else in the tree (a symbolic link, a FIFO, a
socket, a device) is listed as what it is and never opened: a FIFO would block its
reader, and what a link points to is not the tree.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import difflib
import errno
import hashlib
import os
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Union

from ttlgen import cache
from ttlgen.errors import UsageError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no advisory locks of this kind
    fcntl = None  # type: ignore[assignment]

# What the file-system steps take: the stage's paths are strings (see _FileSystem).
StrPath = Union[str, "os.PathLike[str]"]


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


class OutputError(UsageError):
    """The output tree could not be written (the environment refused it); the old tree is intact."""

    def __init__(self, path: Path, error: OSError) -> None:
        self.path = path
        self.error = error
        reason = error.strerror or str(error)
        super().__init__(f"cannot write {path}: {reason}; the previous tree is unchanged")


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
    entries: dict[str, bool] = {}

    def walk(directory: str, prefix: str) -> None:
        try:
            with os.scandir(directory) as scan:
                found = sorted(scan, key=lambda entry: entry.name)
        except OSError as exc:
            raise ReadError(Path(directory), exc) from None
        for entry in found:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in IGNORED_DIRS:
                    walk(entry.path, f"{prefix}{entry.name}/")
            else:
                entries[prefix + entry.name] = entry.is_file(follow_symlinks=False)

    if out_dir.is_dir():
        walk(os.fspath(out_dir), "")
    return entries


def existing_files(out_dir: Path) -> Iterator[str]:
    """The paths of every entry of the tree but its directories (see :func:`existing_entries`)."""
    yield from existing_entries(out_dir)


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
    existing = existing_entries(out_dir)
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


def compare_hashes(expected: dict[str, str], on_disk: dict[str, str | None]) -> TreeDiff:
    """The same comparison as `compare`, from content hashes alone (None: not a regular file)."""
    stale = sorted(p for p in expected if p in on_disk and on_disk[p] != expected[p])
    missing = sorted(p for p in expected if p not in on_disk)
    unchanged = sorted(p for p in expected if on_disk.get(p) == expected[p])
    orphaned = sorted(on_disk.keys() - expected.keys())
    not_regular = sorted(p for p, digest in on_disk.items() if digest is None)
    return TreeDiff(tuple(stale), tuple(missing), tuple(orphaned), tuple(unchanged), tuple(not_regular))


def _text(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def unified_diff(out_dir: Path, files: dict[str, bytes], diff: TreeDiff) -> str:
    """The change ``build`` would make, as a git-style unified diff."""
    name = out_dir.name
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
        raise OSError(code, os.strerror(code), str(a))

    def remove_tree(self, path: Path) -> None:
        """Remove a leftover, whatever it is; a link is removed, never followed."""
        if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
            path.unlink(missing_ok=True)
        else:
            # A leftover that cannot be removed now (a directory made unwritable inside
            # it) is removed by the next command's recovery; the tree at the path is
            # complete either way.
            shutil.rmtree(path, ignore_errors=True)


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
    """Where the tree of ``out_dir`` is: ``out_dir``, or where it points when it is a
    symbolic link. The tree is replaced at the link's target and the link is kept (swapping
    the link itself would leave the target's old tree behind it)."""
    return resolved(out_dir) if out_dir.is_symlink() else out_dir


def _stage_name(out_dir: Path, role: str) -> Path:
    return out_dir.parent / f".{out_dir.name}.ttlgen-{role}-{os.getpid()}"


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
    return next(iter(sorted(out_dir.parent.glob(f".{out_dir.name}.ttlgen-old-*"))), None)


def recover(out_dir: Path) -> None:
    """Undo what an interrupted build left behind (stale stages, a half-done swap).

    Call it holding the tree's exclusive lock: a stage of a live build is not a leftover.
    """
    out_dir = tree_path(out_dir)
    parent = out_dir.parent
    if not parent.is_dir():
        return
    for leftover in sorted(parent.glob(f".{out_dir.name}.ttlgen-*")):
        if "-old-" in leftover.name and leftover.is_dir() and not os.path.lexists(out_dir):
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
    found: set[str] = set()
    for path in files:
        end = path.rfind("/")
        while end > 0 and path[:end] not in found:
            found.add(path[:end])
            end = path.rfind("/", 0, end)
    return sorted(found, key=lambda directory: (directory.count("/"), directory))


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


def _spare_path(out_dir: Path) -> Path | None:
    """Where the tree a build of ``out_dir`` replaced is kept for the next build of it to
    stage into (`_stage`), or None: caching is off, or the cache is on another file
    system (the spare moves in and out by rename).

    A stage made from scratch creates every directory of the tree and the tree it
    replaces is removed: tens of milliseconds of directory creation and removal per build
    on the 2-core VM, up to a tenth of a small build, and the part of it that slows most
    when the disk is busy (measured: 1.5 to 46 ms for the 53 directories of generated/).
    A spare needs only the changes. It is a cache, so its content is never trusted: every
    entry of it is checked or replaced (`_stage`)."""
    if not cache.enabled():
        return None
    root = cache.cache_root() / "spares"
    try:
        root.mkdir(parents=True, exist_ok=True)
        if os.stat(root).st_dev != os.stat(out_dir.parent).st_dev:
            return None
    except OSError:
        return None
    return root / hashlib.sha256(os.fsencode(os.path.realpath(out_dir))).hexdigest()[:32]


def _stage(stage: str, out_dir: Path, files: dict[str, bytes], diff: TreeDiff, modes: _Modes) -> None:
    """Make the directory ``stage`` (new and empty, or a spare: some earlier tree of
    ``out_dir``, or anything else) hold ``files``: an unchanged file as the tree's own
    inode, hard-linked (so it keeps its mtime) when its mode is already right and copied
    with its mtime when not, every other file a new inode, every file and directory with
    the umask's mode, nothing else. An inode the tree may share is never written: an entry
    to replace is unlinked first."""
    old_root = os.fspath(out_dir)
    directories = _directories(files)
    wanted = set(directories)

    def prune(directory: str, prefix: str) -> None:
        with os.scandir(directory) as scan:
            entries = list(scan)
        for entry in entries:
            path = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if path in wanted:
                    prune(entry.path, f"{path}/")
                else:
                    FS.remove_tree(Path(entry.path))
            elif path not in files:
                FS.unlink(entry.path)

    prune(stage, "")  # after it, what remains at a directory's path is that directory
    for directory in directories:
        if not os.path.isdir(f"{stage}/{directory}"):
            FS.mkdir(f"{stage}/{directory}")
    unchanged = set(diff.unchanged)
    for path, content in files.items():
        old, new = f"{old_root}/{path}", f"{stage}/{path}"
        try:
            there = os.lstat(new)
        except FileNotFoundError:
            there = None
        current = os.lstat(old) if path in unchanged else None
        # Shared with the old tree, the file may not change: only one whose mode is right.
        linked = current is not None and stat.S_IMODE(current.st_mode) == modes.file
        if linked and there is not None and current is not None and os.path.samestat(there, current):
            continue  # already the tree's own file
        if there is not None:
            FS.unlink(new)
        if linked:
            FS.link(old, new)
            continue
        if current is not None:
            FS.copy(old, new, content)
        else:
            FS.write(new, content)
        FS.chmod(new, modes.file)
    for directory in (".", *directories):
        if _mode(f"{stage}/{directory}") != modes.directory:
            FS.chmod(f"{stage}/{directory}", modes.directory)


def _take_spare(spare: Path | None, stage: Path) -> bool:
    """Move the spare (if any) to the stage's path."""
    if spare is None:
        return False
    try:
        FS.rename(spare, stage)
    except OSError:
        return False
    if os.path.isdir(stage) and not os.path.islink(stage):
        return True
    FS.remove_tree(stage)  # not a directory: nothing to refit
    return False


# Spares kept at most, the least recently used removed first: one per output tree a user
# builds, and trees come and go (a temporary --out, a deleted checkout).
SPARES_KEPT = 8


def _keep_as_spare(old: Path, spare: Path | None) -> None:
    """The replaced tree becomes the spare, or is removed."""
    if spare is not None and os.path.isdir(old):
        try:
            FS.rename(old, spare)
        except OSError:
            FS.remove_tree(old)  # a spare that could not be taken is in the way: keep neither
            return
        with contextlib.suppress(OSError):
            os.utime(spare)  # its last use, for the bound below
            with os.scandir(spare.parent) as scan:
                kept = sorted(((e.stat(follow_symlinks=False).st_mtime_ns, e.path) for e in scan), reverse=True)
            for _, path in kept[SPARES_KEPT:]:
                FS.remove_tree(Path(path))
        return
    FS.remove_tree(old)


def write_tree(out_dir: Path, files: dict[str, bytes]) -> TreeDiff:
    """Make ``out_dir`` hold exactly ``files``, every file and directory with the mode the
    umask gives. Writes nothing when that is already so.

    Hold the tree's exclusive lock. Raises OutputError (old tree intact) when the disk
    refuses a write. A symbolic link at ``out_dir`` is kept; the tree is replaced where it
    points.
    """
    out_dir = tree_path(out_dir)
    recover(out_dir)
    diff = compare(out_dir, files)
    if up_to_date(out_dir, diff):
        return diff
    stage = _stage_name(out_dir, "stage")
    old = _stage_name(out_dir, "old")
    spare = _spare_path(out_dir) if os.path.isdir(out_dir) else None
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        modes = _Modes.current()
        if not _take_spare(spare, stage):
            FS.mkdir(stage)
        _stage(os.fspath(stage), out_dir, files, diff, modes)
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
    _keep_as_spare(old, spare)
    return diff
