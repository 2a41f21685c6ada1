"""Generation part by part, reusing every part an edit cannot have changed.

The output tree is made of parts, each a pure function of what it reads:

- **a kernel part**: one kernel, lowered (ttlgen/plan/kernels.py) and printed by every
  per-kernel emitter (``emit_kernel``). It reads the spec file the kernel is declared in
  and the specs that are not kernel specs, never another kernel.
- **a project part**: one project emitter (``emit``). Most read no kernel at all. Which
  ones do is found, not declared: an emitter first runs with the kernels withheld
  (`Withheld`); one that reaches for them is recorded as reading them and runs again
  with them. Its outputs then depend on every spec.

The specs are always loaded, validated and modelled whole (the checks across files must
see every file); only planning and printing are split. Each part's outputs are recorded
(ttlgen/part_cache.py) under a key hashing the generator (its code, libraries and
templates) and exactly the specs the part reads, by their content (`SpecDocument.digest`:
data and positions). So a build after an edit
of one kernel spec lowers and prints the kernels of that file, runs the emitters that
read kernels, and takes every other file from the record: bytes that the same inputs
produced before, as the tree cache does for a whole tree. ``check --no-cache`` and
``build --no-cache`` generate every part.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import NoReturn, cast

from ttlgen.emit import Emitter, emitters
from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit._header import finalize
from ttlgen.model.kernels import KIND as KERNEL_KIND
from ttlgen.model.kernels import Kernel, KernelsModel
from ttlgen.model.project import Project
from ttlgen.part_cache import Files, PartRecords, ReadsKernels
from ttlgen.plan.kernels import LoweredKernel, plan_kernels
from ttlgen.plan.project import ProjectPlan, plan_tables
from ttlgen.spec.document import SpecDocument


class Reads(enum.IntEnum):
    """How much of the kernels a project emitter reads."""

    NO_KERNELS = 0
    KERNEL_SPECS = 1  # the kernels' model (project.kernels)
    KERNEL_PLANS = 2  # their plans as well (plan.kernels): every kernel must be lowered


class KernelsWithheld(Exception):
    """An emitter used the kernels it was run without."""


class Withheld:
    """Stands in for the kernels an emitter is first run without: any use raises, and is
    remembered (so an emitter that swallowed the exception is still known to read them)."""

    __slots__ = ("used",)

    def __init__(self) -> None:
        self.used = False

    def _use(self, *args: object, **kwargs: object) -> NoReturn:
        self.used = True
        raise KernelsWithheld

    def __getattr__(self, name: str) -> NoReturn:
        self._use()

    __iter__ = __len__ = __bool__ = __getitem__ = __contains__ = _use
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = _use
    __repr__ = __str__ = __format__ = __reduce__ = __reduce_ex__ = _use


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PartKeys:
    """The record keys of one spec tree's parts.

    ``shared`` hashes the generator, every spec's name and kind, and the content of every
    spec but the kernel specs; ``everything`` adds the kernel specs' content."""

    shared: str
    everything: str
    kernel_files: dict[str, str]  # a kernel spec's source name -> its content's digest

    @classmethod
    def of(cls, documents: Sequence[SpecDocument], generator: str) -> PartKeys:
        shared = [generator]
        kernel_files = {}
        for document in documents:
            if document.kind == KERNEL_KIND:
                kernel_files[document.source] = document.digest
                shared.append(f"{document.source} {document.kind}")
            else:
                shared.append(f"{document.source} {document.kind} {document.digest}")
        shared_key = _digest("shared", *shared)
        everything = _digest("everything", shared_key, *(f"{s} {d}" for s, d in kernel_files.items()))
        return cls(shared_key, everything, kernel_files)

    def kernel(self, kernel: Kernel, emitters: Sequence[str]) -> str:
        """The key of a kernel part printed by ``emitters``."""
        return _digest("kernel", self.shared, *emitters, "\0", kernel.name, kernel.source, self.kernel_files[kernel.source])

    def project(self, emitter: str, reads: Reads) -> str:
        return _digest("emitter", emitter, self.shared if reads == Reads.NO_KERNELS else self.everything)


class _Tree:
    """The files of the parts generated or reused so far, each under the part that made it."""

    def __init__(self) -> None:
        self.made_by: dict[str, str] = {}
        self.files: dict[str, bytes] = {}

    def add(self, part: str, files: dict[str, bytes]) -> None:
        for path, data in files.items():
            if path in self.made_by:
                raise RuntimeError(f"{self.made_by[path]} and {part} both produce {path!r}")
            self.made_by[path] = part
            self.files[path] = data


def _finalized(files: Iterable[GeneratedFile]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for file in files:
        if file.path in out:
            raise RuntimeError(f"one part produces {file.path!r} twice")
        out[file.path] = finalize(file)
    return out


def _emit_kernel(kernel_emitters: Sequence[Emitter], lowered: LoweredKernel, ctx: EmitContext) -> dict[str, bytes]:
    tree = _Tree()
    for emitter in kernel_emitters:
        assert emitter.kernel is not None
        tree.add(f"emitter {emitter.name!r}", _finalized(emitter.kernel(lowered, ctx)))
    return tree.files


def _run_project_emitter(
    emitter: Emitter, start: Reads, project: Project, plan: Callable[[Reads], ProjectPlan], ctx: EmitContext
) -> tuple[Reads, dict[str, bytes]]:
    """The emitter's files, run with as little of the kernels as it reads (from ``start``
    up): (what it read, its files)."""
    assert emitter.project is not None
    reads = start
    while True:
        withheld = Withheld()
        view = replace(project, kernels=cast(KernelsModel, withheld)) if reads == Reads.NO_KERNELS else project
        view_plan = plan(reads)
        stand_ins = [w for w in (withheld, view_plan.kernels) if isinstance(w, Withheld)]
        try:
            files = _finalized(emitter.project(view, view_plan, ctx))
        except Exception:
            # Whatever an emitter that reached for the withheld kernels did next (raised
            # KernelsWithheld, or swallowed it and failed later) is not its real output.
            if not any(w.used for w in stand_ins):
                raise
            files = None
        if files is not None and not any(w.used for w in stand_ins):
            return reads, files
        assert reads < Reads.KERNEL_PLANS, "nothing is withheld from a run given every kernel"
        reads = Reads(reads + 1)


def generate_parts(
    documents: Sequence[SpecDocument], project: Project, generator: str, ctx: EmitContext, records: PartRecords
) -> dict[str, bytes]:
    """Every generated file (but the MANIFEST) of a validated project, path -> bytes;
    raises SpecErrors when a kernel cannot be planned. New records are added to ``records``
    (the caller commits them once the whole generation has succeeded)."""
    keys = PartKeys.of(documents, generator)
    found = emitters()
    kernel_emitters = [e for e in found if e.kernel is not None]
    printed_by = [e.name for e in kernel_emitters]
    tree = _Tree()

    def lower(kernels: Sequence[Kernel]) -> list[LoweredKernel]:
        if not kernels:
            return []
        return plan_kernels(kernels, project.ops, project.targets, project.spelling, project.api)

    # Kernel parts: lower and print only the kernels without a record.
    kernels = project.kernels.kernels
    lowered: dict[str, LoweredKernel] = {}
    missing = []
    for kernel in kernels:
        record = records.lookup(keys.kernel(kernel, printed_by))
        if isinstance(record, Files):
            tree.add(f"kernel {kernel.name!r}", record.files)
        else:
            missing.append(kernel)
    for done in lower(missing):
        lowered[done.kernel.name] = done
        files = _emit_kernel(kernel_emitters, done, ctx)
        records.add(keys.kernel(done.kernel, printed_by), Files(files))
        tree.add(f"kernel {done.kernel.name!r}", files)

    # Project parts, each given as much of the kernels as it turns out to read.
    tables, cpp = plan_tables(project)
    every_kernel: list[ProjectPlan] = []

    def plan(reads: Reads) -> ProjectPlan:
        if reads < Reads.KERNEL_PLANS:
            return ProjectPlan(cast(tuple[LoweredKernel, ...], Withheld()), tables, cpp)  # a new one each run
        if not every_kernel:
            lowered.update((k.kernel.name, k) for k in lower([k for k in kernels if k.name not in lowered]))
            every_kernel.append(ProjectPlan(tuple(lowered[k.name] for k in kernels), tables, cpp))
        return every_kernel[0]

    for emitter in found:
        if emitter.project is None:
            continue
        shared_key = keys.project(emitter.name, Reads.NO_KERNELS)
        record = records.lookup(shared_key)
        start = Reads.NO_KERNELS
        if isinstance(record, ReadsKernels):
            start = Reads(record.level)
            record = records.lookup(keys.project(emitter.name, start))
        if isinstance(record, Files):
            tree.add(f"emitter {emitter.name!r}", record.files)
            continue
        reads, files = _run_project_emitter(emitter, start, project, plan, ctx)
        if reads != Reads.NO_KERNELS:
            records.add(shared_key, ReadsKernels(int(reads)))
        records.add(keys.project(emitter.name, reads), Files(files))
        tree.add(f"emitter {emitter.name!r}", files)
    return tree.files
