"""Generation part by part, reusing every part an edit cannot have changed.

The output tree is made of parts, each a pure function of what it reads:

- **a kernel part**: one kernel, lowered (ttlgen/plan/kernels.py) and printed by every
  per-kernel emitter (``emit_kernel``). It reads its own entry of the spec file it is
  declared in (the entry's data and positions, and the file's name) and the specs that
  are not kernel specs, never another kernel.
- **a project part**: one project emitter (``emit``). Most read no kernel at all. Which
  ones do, and how much, is found, not declared: an emitter first runs with the kernels
  withheld (`Withheld`); one that reaches for them runs again with their outline only
  (each kernel's name, spec file and buffer names, `Outlined`), and one that reaches past
  that runs with the kernels themselves, then with their plans too. What it read is
  recorded, and its outputs depend on exactly that: an editor schema that names each
  kernel's buffers is made again when a kernel or buffer is added, renamed or moved,
  not when a kernel's body changes.

The specs are always loaded, validated and modelled whole (the checks across files must
see every file); only planning and printing are split. Each part's outputs are recorded
(ttlgen/part_cache.py) under a key hashing the generator (its code, libraries and
templates) and exactly the specs the part reads, by their content (`SpecDocument.digest`:
data and positions; a kernel entry's own digest for a kernel part). So a build after an
edit inside one kernel lowers and prints that kernel (and any other of its file whose
lines the edit moved), runs the emitters that read kernels, and takes every other file
from the record: bytes that the same inputs produced before, as the tree cache does for
a whole tree. ``check --no-cache`` and
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
    KERNEL_OUTLINE = 1  # each kernel's name, spec file and buffer names (`Outlined`)
    KERNEL_SPECS = 2  # the kernels' model (project.kernels)
    KERNEL_PLANS = 3  # their plans as well (plan.kernels): every kernel must be lowered


class KernelsWithheld(Exception):
    """An emitter used the kernels it was run without."""


class _Refusing:
    """Every use of the object but the attribute lookups a subclass allows goes to ``_use``."""

    __slots__ = ()

    def _use(self, *args: object, **kwargs: object) -> NoReturn:
        raise NotImplementedError

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        self._use()

    __iter__ = __len__ = __bool__ = __getitem__ = __contains__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = _refuse
    __repr__ = __str__ = __format__ = __reduce__ = __reduce_ex__ = _refuse


class Withheld(_Refusing):
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


# What the outline of a kernel shows, and of each of its buffers.
_KERNEL_OUTLINE = frozenset({"name", "source", "dfbs"})
_DFB_OUTLINE = frozenset({"name"})


class Outlined(_Refusing):
    """Stands in for a kernel (or one of its buffers) of which only the outline may be read:
    the attributes in ``shown``. Any other use raises and is remembered, in the one
    `Withheld` all the stand-ins of a run share; ``isinstance`` sees the real type, so an
    emitter that tests it reads on and meets the stand-in's limits."""

    __slots__ = ("_real", "_shown", "_tracker")

    def __init__(self, real: object, shown: frozenset[str], tracker: Withheld) -> None:
        self._real, self._shown, self._tracker = real, shown, tracker

    def _use(self, *args: object, **kwargs: object) -> NoReturn:
        self._tracker._use()

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return type(self._real)

    def __getattr__(self, name: str) -> object:
        if name not in self._shown:
            self._use()
        value = getattr(self._real, name)
        if name == "dfbs":
            return tuple(Outlined(dfb, _DFB_OUTLINE, self._tracker) for dfb in value)
        return value


def _outlined(kernels: KernelsModel, tracker: Withheld) -> KernelsModel:
    return KernelsModel(tuple(cast(Kernel, Outlined(k, _KERNEL_OUTLINE, tracker)) for k in kernels.kernels))


def _outline(kernel: Kernel) -> str:
    """Everything `Outlined` shows of ``kernel``."""
    return "\0".join((kernel.name, kernel.source, *(dfb.name for dfb in kernel.dfbs)))


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PartKeys:
    """The record keys of one spec tree's parts.

    ``shared`` hashes the generator, every spec's name and kind, and the content of every
    spec but the kernel specs; ``outline`` adds every kernel's outline, ``everything`` the
    kernel specs' content. A kernel part's key adds its own entry's digest to ``shared``."""

    shared: str
    outline: str
    everything: str
    kernel_entries: dict[tuple[str, str], str]  # (kernel spec's source name, kernel) -> entry digest

    @classmethod
    def of(cls, documents: Sequence[SpecDocument], kernels: KernelsModel, generator: str) -> PartKeys:
        shared = [generator]
        kernel_files = []
        entries: dict[tuple[str, str], str] = {}
        for document in documents:
            if document.kind == KERNEL_KIND:
                kernel_files.append(f"{document.source} {document.digest}")
                shared.append(f"{document.source} {document.kind}")
                # ttlgen/model/kernels.py builds a kernel from its own entry and the file's
                # names, never from a sibling entry.
                entries.update(((document.source, name), d) for name, d in document.entry_digests("kernels").items())
            else:
                shared.append(f"{document.source} {document.kind} {document.digest}")
        shared_key = _digest("shared", *shared)
        outline = _digest("outline", shared_key, *(_outline(k) for k in kernels.kernels))
        everything = _digest("everything", shared_key, *kernel_files)
        return cls(shared_key, outline, everything, entries)

    def kernel(self, kernel: Kernel, emitters: Sequence[str]) -> str:
        """The key of a kernel part printed by ``emitters``."""
        entry = self.kernel_entries[(kernel.source, kernel.name)]
        return _digest("kernel", self.shared, *emitters, "\0", kernel.name, kernel.source, entry)

    def project(self, emitter: str, reads: Reads) -> str:
        read = {Reads.NO_KERNELS: self.shared, Reads.KERNEL_OUTLINE: self.outline}.get(reads, self.everything)
        return _digest("emitter", emitter, read)


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
        if reads == Reads.NO_KERNELS:
            view = replace(project, kernels=cast(KernelsModel, withheld))
        elif reads == Reads.KERNEL_OUTLINE:
            view = replace(project, kernels=_outlined(project.kernels, withheld))
        else:
            view = project
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
    keys = PartKeys.of(documents, project.kernels, generator)
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
