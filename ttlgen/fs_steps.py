"""The file-system steps a build takes, one call each (``FS``), so tests can refuse or stop
a build at any of them; and the removal of a leftover without recursion.

ttlgen/write.py stages and swaps trees through these steps only.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Union

from ttlgen.errors import UsageError

# What the file-system steps take: the stage's paths are strings (see FileSystem).
StrPath = Union[str, "os.PathLike[str]"]


class OutputError(UsageError):
    """The output tree could not be written (the environment refused it); ``outcome`` says
    what state that left the tree in."""

    def __init__(self, path: Path, error: OSError, outcome: str = "the previous tree is unchanged") -> None:
        self.path = path
        self.error = error
        super().__init__(f"cannot write {path}: {error.strerror or error}; {outcome}")


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


class FileSystem:
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


FS = FileSystem()
