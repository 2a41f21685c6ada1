"""Compile generated kernels against their level's real tt-metal headers, as the JIT does.

A *unit* is one kernel source compiled for one processor of one architecture against the
headers of the release its API level pins: a compute kernel on each TRISC (unpack, math,
pack), a reader or writer on each data-movement processor (BRISC on NoC 0, NCRISC on NoC
1). Each unit's truth is its own compile with exactly the files the JIT writes for it
(:mod:`ttlgen.upstream.jit`).

Parsing tt-metal's headers is nearly all of a compile's time (0.3 s of CPU; a kernel adds
milliseconds), so units that reach the compiler identically but for their kernel source
and the per-CB data formats are first compiled together, one translation unit per
(architecture, release, processor, compute scalars and defines, compile-time arguments): every
kernel in a namespace of its own, the CB format arrays of the first kernel binding each
CB (they only feed run-time code; the scalars that templates and `if constexpr` see are
the same for all). A batch that compiles vouches for each of its units; a batch that
fails is compiled unit by unit, so every failure is a unit's own compile and names it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ttlgen.model.tt_metal_api import KernelKind, Release
from ttlgen.upstream import jit
from ttlgen.upstream.jit import Architecture, KernelDir, Processor

ROLES = {KernelKind.COMPUTE: ("compute",), KernelKind.DATAFLOW: ("reader", "writer")}
# A kernel compiled in a batch adds a few milliseconds to the headers' 0.3 s.
_MAX_BATCH = 64


@dataclass(frozen=True)
class Target:
    """What one kernel is compiled against: its API level, the release the level pins, and
    the directory holding that release's ``tt_metal/``; ``entry`` is the level's entry
    function (None when the entry point is a macro, which a batch cannot call)."""

    level: str
    release: Release
    root: Path
    entry: dict[KernelKind, str | None]


@dataclass(frozen=True)
class Unit:
    kernel: KernelDir
    role: str  # reader, compute or writer
    processor: Processor
    arch: Architecture
    target: Target

    @property
    def source(self) -> Path:
        return self.kernel.source(self.role)

    def describe(self) -> str:
        """``eltwise_add_bf16 reader on NCRISC (NoC 1), wormhole_b0, level current (ttnn 0.81.1)``."""
        return (
            f"{self.kernel.name} {self.role} on {self.processor.label}, {self.arch.name}, "
            f"level {self.target.level} ({self.target.release.name})"
        )


@dataclass(frozen=True)
class Outcome:
    unit: Unit
    error: str | None  # the compiler's first error; None when the unit compiles

    @property
    def ok(self) -> bool:
        return self.error is None


def units(
    kernels: Iterable[tuple[KernelDir, Target]],
    architectures: Sequence[Architecture],
    processors: Sequence[Processor] = jit.PROCESSORS,
) -> list[Unit]:
    """Every (kernel source, processor, architecture) of ``kernels``."""
    found = []
    for kernel, target in kernels:
        for arch in architectures:
            for processor in processors:
                for role in ROLES[processor.kind]:
                    found.append(Unit(kernel, role, processor, arch, target))
    return found


def compile_units(selected: Sequence[Unit], batch: bool = True) -> list[Outcome]:
    """Compile every unit; outcomes in the order of ``selected``."""
    cxx = jit.compiler()
    if shutil.which(cxx) is None:
        raise FileNotFoundError(f"no C++ compiler {cxx!r} (set ${jit.CXX_ENV} to g++'s path)")
    groups = _batches(selected) if batch else [[u] for u in selected]
    workers = os.cpu_count() or 1
    results: dict[int, str | None] = {}
    with tempfile.TemporaryDirectory(prefix="ttlgen-upstream-compile-") as scratch, ThreadPoolExecutor(workers) as pool:
        first = list(pool.map(lambda item: _compile(cxx, item[1], Path(scratch) / f"b{item[0]}"), enumerate(groups)))
        retry = []
        for group, error in zip(groups, first, strict=True):
            if error is None or len(group) == 1:
                results.update({id(u): error for u in group})
            else:
                retry.extend(group)
        again = list(pool.map(lambda item: _compile(cxx, [item[1]], Path(scratch) / f"u{item[0]}"), enumerate(retry)))
        results.update({id(u): error for u, error in zip(retry, again, strict=True)})
    return [Outcome(u, results[id(u)]) for u in selected]


def _batches(selected: Sequence[Unit]) -> list[list[Unit]]:
    groups: dict[tuple[object, ...], list[Unit]] = {}
    for unit in selected:
        entry = unit.target.entry[unit.processor.kind]
        key: tuple[object, ...] = (
            unit.arch.name, unit.target.release.sha256, unit.processor.name, unit.kernel.args(unit.role),
            unit.kernel.scalars if unit.processor.kind is KernelKind.COMPUTE else None,
            unit.kernel.defines if unit.processor.kind is KernelKind.COMPUTE else None,  # one defines_generated.h
        )
        if entry is None:
            key = (*key, id(unit))  # a macro entry point: compiled alone
        groups.setdefault(key, []).append(unit)
    return [group[i : i + _MAX_BATCH] for group in groups.values() for i in range(0, len(group), _MAX_BATCH)]


def _compile(cxx: str, group: Sequence[Unit], directory: Path) -> str | None:
    """Compile ``group`` (one unit, or a batch of them) in one translation unit; the
    compiler's first error, or None."""
    head = group[0]
    kernels = list({u.kernel.name: u.kernel for u in group}.values())
    jit.write_files(
        directory, head.processor, kernels, [u.source for u in group], head.arch, head.target.entry[head.processor.kind]
    )
    args = jit.command(cxx, head.target.root, directory, head.processor, head.arch, head.kernel.args(head.role))
    done = subprocess.run(args, capture_output=True, text=True, check=False, cwd=directory)
    if done.returncode == 0 or host_only(done.stderr, directory):
        return None
    # Headers are named from the wheel's tt_metal/ on, not by where the cache put them.
    found = first_error(_without_host_only(done.stderr, directory).replace(f"{head.target.root}{os.sep}", ""))
    return found or f"{cxx} exited with status {done.returncode} and no error message"


_ERROR = re.compile(r"^(?P<where>[^\s:][^:]*:\d+:\d+): (?:fatal )?error: (?P<message>.*)$", re.MULTILINE)
_LONGEST = 400
# Errors of the host compiler alone, which the JIT's SFPI compiler does not make: g++ before
# 13 rejects `#pragma GCC unroll N` whose count is a template parameter (GCC 13 accepts one),
# and tt-llk's SFPU rounding ops are written so (ckernel_sfpu_rounding_ops.h's
# `#pragma GCC unroll ITERATIONS`), in every translation unit that includes them.
_HOST_ONLY = (re.compile(r"^.#pragma GCC unroll. requires an assignment-expression"),)
_TRUNCATED = "compilation terminated due to -fmax-errors"
_ASSERTION_FAILED = "static assertion failed"
_LITERAL_FALSE = re.compile(r"\bstatic_assert\s*\(\s*false\s*[,)]")


def _literal_false_assertion(where: str, message: str, directory: Path) -> bool:
    """Whether the error is a ``static_assert(false, ...)`` failing where a template defines
    it. g++ before 13 evaluates such an assertion at the definition, even in an ``if
    constexpr`` branch no instantiation takes; C++23's P2593R1, which GCC 13 and Clang 17
    apply to every language mode as a defect report, makes it fail only when the branch is
    instantiated, and the JIT's SFPI compiler (GCC 13 or later) accepts it. tt-llk writes
    one in ``_calculate_fill_int_`` (ckernel_sfpu_fill.h at ttnn 0.69.0 and 0.81.1), which
    0.69.0's ckernel_sfpu.h includes into every math TRISC using the SFPU and 0.81.1's
    fill.h into every one calling fill_tile. (A host compiler before GCC 13 cannot tell an
    instantiated one from it; the device's compiler still does.)"""
    if not message.startswith(_ASSERTION_FAILED):
        return False
    path, _, line = where.rpartition(":")[0].rpartition(":")
    try:
        text = (directory / path).read_text(encoding="utf-8", errors="replace").splitlines()[int(line) - 1]
    except (OSError, ValueError, IndexError):
        return False
    return _LITERAL_FALSE.search(text) is not None


def _host_only_error(where: str, message: str, directory: Path) -> bool:
    return any(p.search(message) for p in _HOST_ONLY) or _literal_false_assertion(where, message, directory)


def _without_host_only(stderr: str, directory: Path) -> str:
    """``stderr`` without the error lines only the host compiler writes (so the first error
    reported is one the JIT's compiler would make too)."""
    return _ERROR.sub(lambda m: "" if _host_only_error(m.group("where"), m.group("message"), directory) else m.group(0), stderr)


def host_only(stderr: str, directory: Path = Path()) -> bool:
    """Whether every error of a failed compile is one only the host compiler makes (and the
    compiler did not stop early, which could hide others); ``directory``: where it ran."""
    errors = [(m.group("where"), m.group("message")) for m in _ERROR.finditer(stderr)]
    return (
        bool(errors)
        and _TRUNCATED not in stderr
        and all(_host_only_error(where, message, directory) for where, message in errors)
    )


def first_error(stderr: str) -> str | None:
    """The compiler's first ``file:line:column: error: message``, its message shortened
    (a template's arguments can run to thousands of characters)."""
    found = _ERROR.search(stderr)
    if found is None:
        lines = [line for line in stderr.splitlines() if line.strip()]
        return lines[0][:_LONGEST] if lines else None
    message = found.group("message")
    if len(message) > _LONGEST:
        message = message[: _LONGEST - 3] + "..."
    return f"{found.group('where')}: error: {message}"
