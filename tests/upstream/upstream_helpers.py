"""Helpers of the upstream tests: the spec tree's pins, kernels and compile targets, fetched
once per process, and the skip-or-fail rule for a missing registry or interpreter.

A uniquely named module (not conftest) so test files can import it."""

from __future__ import annotations

import functools
import os
from typing import NoReturn

import pytest

from tests.conftest import GENERATED, SPECS
from ttlgen.model.project import Project
from ttlgen.upstream.compile import Target
from ttlgen.upstream.fetch import DownloadFailed
from ttlgen.upstream.jit import KernelDir
from ttlgen.upstream.project import kernel_targets, load_project

REQUIRE_ENV = "TTLGEN_REQUIRE_UPSTREAM"


def required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def unavailable(reason: str) -> NoReturn:
    """Skip with ``reason``; fail instead where the upstream tests must run (CI)."""
    if required():
        pytest.fail(f"{reason} (${REQUIRE_ENV} is set: these tests must run here)")
    pytest.skip(reason)


@functools.cache
def project() -> Project:
    return load_project(SPECS)


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
