"""Where a tree is (its path with symbolic links followed) and the lock that serialises
what builds, checks and diffs do to it."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ttlgen.errors import UsageError
from ttlgen.fs_steps import OutputError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no advisory locks of this kind
    fcntl = None  # type: ignore[assignment]


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
