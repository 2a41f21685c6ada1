"""The spec tree and the output tree that the tests of build, check, diff and the tree
writer start from.

Most of those tests are about what a command does with the tree on disk (stale, missing
and orphaned files, entries that are not regular files, modes, kills, locks, --out paths),
not about what the specs make of it. They run on the real specs without their kernel
specs (`small_specs`): every kind of output but the kernels' own (about a third of the
files), in about a third of the render time. The tree those specs build is rendered once
per test process (`small_render`) and written where a test needs a built tree
(`write_built`), instead of each test building it first.

Tests about the content itself (the committed tree is what `build` writes, builds do not
depend on hash seeds, every template's cache record) keep the real specs whole.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from collections.abc import Iterable
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

