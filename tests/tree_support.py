"""The spec tree and the output tree that the tests of build, check, diff and the tree
writer start from, and ttlgen processes forked to act on them.

Most of those tests are about what a command does with the tree on disk (stale, missing
and orphaned files, entries that are not regular files, modes, kills, locks, --out paths),
not about what the specs make of it. They run on the real specs without their kernel
specs (`small_specs`): every kind of output but the kernels' own (about a third of the
files), in about a third of the render time. The tree those specs build is rendered once
per test process (`small_render`) and written where a test needs a built tree
(`write_built`), instead of each test building it first.

Tests about the content itself (the committed tree is what `build` writes, builds do not
depend on hash seeds, every template's cache record) keep the real specs whole.

Tests of several ttlgen processes at once (the build lock, races) or of a process's limits
run each in a child forked from the test (`forked_ttlgen`): a process of its own, with its
own locks, limits and exit, that does not start Python and import ttlgen again (about
0.6 s of CPU each). Tests of the console entry point, of Ctrl-C and of builds killed at
any moment of their life (imports included) start `python -m ttlgen` instead.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from multiprocessing.process import BaseProcess
from pathlib import Path

from tests.conftest import SPECS, real_documents
from ttlgen import write
from ttlgen.tree import existing_entries


def _kernel_spec_files() -> frozenset[str]:
    """The real kernel spec files, relative to specs/ (from the loaded specs' kinds)."""
    prefix = f"{SPECS.name}/"
    return frozenset(d.source.removeprefix(prefix) for d in real_documents() if d.kind == "ttlgen.kernel")


def small_specs(dest: Path, keep: Iterable[str] = ()) -> Path:
    """``dest``: a writable copy of the real specs without their kernel spec files, but those
    named in ``keep`` (relative to specs/). Name it specs/ so messages read as for the real tree."""
    dropped = _kernel_spec_files() - set(keep)

    def ignore(directory: str, names: list[str]) -> set[str]:
        inside = Path(directory).relative_to(SPECS)
        return {name for name in names if (inside / name).as_posix() in dropped}

    shutil.copytree(SPECS, dest, ignore=ignore)
    return dest


@functools.cache
def _small_render() -> tuple[tuple[str, bytes], ...]:
    from ttlgen.pipeline import render_specs

    with tempfile.TemporaryDirectory() as scratch:
        return tuple(render_specs(small_specs(Path(scratch) / SPECS.name)).items())


def small_render() -> dict[str, bytes]:
    """What `ttlgen build` writes from `small_specs` (path -> bytes), rendered once per process:
    a new dict each call, so a test may change its copy."""
    return dict(_small_render())


def write_built(out: Path) -> Path:
    """``out`` made the tree a build of `small_specs` leaves there (files, modes and all)."""
    write.write_tree(out, small_render())
    return out


def tree(root: Path) -> dict[str, bytes]:
    """Every file of the tree at ``root`` (bytecode caches skipped, as build and check do)."""
    return {path: (root / path).read_bytes() for path in existing_entries(root)}


def _entry_point(
    args: list[str], cwd: Path, stderr: Path, env: Mapping[str, str], first: Callable[[], None] | None
) -> None:
    """In the forked child: the console entry point, as `python -m ttlgen ARGS` runs it."""
    from ttlgen.__main__ import main

    os.chdir(cwd)
    os.environ.update(env)
    if first is not None:
        first()
    # Python's and the C library's standard streams both: stderr to the file, stdout dropped.
    os.dup2(os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.stderr = open(2, "w", encoding="utf-8", buffering=1, closefd=False)  # noqa: SIM115 - the process's own
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.argv = ["ttlgen", *args]
    main()


def forked_ttlgen(
    *args: str | Path,
    cwd: Path,
    stderr: Path,
    env: Mapping[str, str] | None = None,
    first: Callable[[], None] | None = None,
) -> BaseProcess:
    """``ttlgen ARGS`` running in a child forked from this process (started; ``exitcode`` is
    the command's exit code once it ends), in ``cwd`` with ``env`` added to its environment,
    its stderr written to the file ``stderr``. ``first`` runs in the child before the
    command (resource limits, waiting for a go).

    The child shares every descriptor this process has open, and so every lock taken
    through one (flock locks belong to the open file): fork it before taking a lock it
    must wait for."""
    # Everything a build runs is imported before the fork, so the child imports nothing.
    import ttlgen.__main__
    import ttlgen.cli
    import ttlgen.emit.emitters
    import ttlgen.pipeline  # noqa: F401

    stderr.write_bytes(b"")  # there from the start, as a file the child's stderr is redirected to
    child = multiprocessing.get_context("fork").Process(
        target=_entry_point, args=([str(a) for a in args], cwd, stderr, dict(env or {}), first)
    )
    child.start()
    return child
