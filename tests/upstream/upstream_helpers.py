"""Helpers of the upstream tests: the spec tree's pins, kernels and compile targets, fetched
once per process, and the skip-or-fail rule for a missing registry or interpreter.

A uniquely named module (not conftest) so test files can import it."""

from __future__ import annotations

import functools
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest

from tests.conftest import GENERATED, real_project
from ttlgen.model.project import Project
from ttlgen.model.tt_metal_api import ApiLevel
from ttlgen.upstream.api_check import names_of
from ttlgen.upstream.compile import Outcome, Target
from ttlgen.upstream.fetch import DownloadFailed, fetch
from ttlgen.upstream.jit import KernelDir, read_kernel_dir
from ttlgen.upstream.project import kernel_targets
from ttlgen.upstream.release_api import HeaderParseError, ReleaseApi, read_release

REQUIRE_ENV = "TTLGEN_REQUIRE_UPSTREAM"

# An edit of a kernel's compute source at an API level: the changed text, or None where the
# edit does not apply; and the compiled_mutant fixture (tests/upstream/conftest.py).
Edit = Callable[[ApiLevel, str], str | None]
CompiledMutant = Callable[[Edit], tuple[Outcome, Target]]


def required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def unavailable(reason: str) -> NoReturn:
    """Skip with ``reason``; fail instead where the upstream tests must run (CI)."""
    if required():
        pytest.fail(f"{reason} (${REQUIRE_ENV} is set: these tests must run here)")
    pytest.skip(reason)


@functools.cache
def project() -> Project:
    return real_project()


@functools.cache
def _targets() -> list[tuple[KernelDir, Target]] | str:
    try:
        return kernel_targets(project(), GENERATED)
    except DownloadFailed as exc:  # no network or package index
        return str(exc)


def targets() -> list[tuple[KernelDir, Target]]:
    """Every generated kernel with what it compiles against (the pinned headers fetched),
    or a skip (a failure under $TTLGEN_REQUIRE_UPSTREAM) when they cannot be fetched."""
    found = _targets()
    if isinstance(found, str):
        unavailable(f"the pinned tt-metal headers cannot be fetched: {found}")
    return found


# One API call statement of a generated kernel: `name<template args>(args);`.
CALL = re.compile(r"\b(?P<name>[A-Za-z_]\w*)(?:<(?P<template>[^<>()]*)>)?\((?P<args>[^()]*)\);")


def mutant_dir(tmp_path: Path, kernel: KernelDir, edit: Callable[[str], str | None], role: str = "compute") -> KernelDir | None:
    """A copy of ``kernel``'s directory whose ``role`` source ``edit`` changed, or None when
    ``edit`` finds nothing to change."""
    source = kernel.source(role).read_text(encoding="utf-8")
    changed = edit(source)
    if changed is None:
        return None
    assert changed != source
    copy = tmp_path / kernel.name
    shutil.copytree(kernel.path, copy)
    (copy / dict(kernel.sources)[role]).write_text(changed, encoding="utf-8")
    return read_kernel_dir(copy)


@functools.cache
def _release_api(level_name: str) -> ReleaseApi | str:
    level = project().api.level(level_name)
    assert level is not None and level.release is not None
    try:
        root = fetch(level.release)
    except DownloadFailed as exc:
        return f"the pinned tt-metal headers cannot be fetched: {exc}"
    try:
        return read_release(root, level.release.sha256, names_of(level))
    except HeaderParseError as exc:
        return f"tt-metal's headers cannot be parsed: {exc}"


def release_api(level_name: str) -> ReleaseApi:
    """The parsed headers of the release API level ``level_name`` pins (every name the
    shipped level declares), or a skip (a failure under $TTLGEN_REQUIRE_UPSTREAM) when the
    headers cannot be fetched or libclang is missing."""
    found = _release_api(level_name)
    if isinstance(found, str):
        unavailable(found)
    return found
