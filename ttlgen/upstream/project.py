"""The specs' side of the upstream checks: which release each level pins, which kernels
there are and what each compiles against."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ttlgen.errors import Diagnostic, DiagnosticSink, SpecErrors, UsageError, did_you_mean
from ttlgen.model import tt_metal_api
from ttlgen.model.project import Project
from ttlgen.model.tt_metal_api import ApiLevel, KernelKind, Release
from ttlgen.pipeline import load_project
from ttlgen.spec.document import SpecDocument
from ttlgen.spec.load import load_specs
from ttlgen.upstream.compile import Target
from ttlgen.upstream.fetch import fetch
from ttlgen.upstream.jit import (
    ARCHITECTURES,
    Architecture,
    KernelDir,
    ProgramError,
    read_kernel_dir,
)
from ttlgen.validate.documents import validate_documents


@dataclass(frozen=True)
class LevelSpec:
    """An API level's spec file, read on its own."""

    doc: SpecDocument
    path: Path
    level: ApiLevel


def load_levels(specs: Path, names: Sequence[str] = ()) -> list[LevelSpec]:
    """The API levels of a spec tree (or those named), each read from its file alone: the
    upstream checks and the import need the level, not a consistent tree (a refresh may
    drop a function a spelling still calls until the spelling follows). Raises SpecErrors
    for an invalid level file, UsageError for an unknown level."""
    documents = [d for d in load_specs(specs) if d.kind == tt_metal_api.KIND]
    diagnostics = validate_documents(documents)
    if diagnostics:
        raise SpecErrors(diagnostics)
    sink = DiagnosticSink()
    found = []
    for doc in documents:
        level = tt_metal_api.read_level(doc, sink)
        found.append(LevelSpec(doc, specs / doc.source.split("/", 1)[1], level))
    sink.raise_if_any()
    known = [f.level.level for f in found]
    for name in names:
        if name not in known:
            raise UsageError(f"no API level {name!r} in {specs}{did_you_mean(name, known)}; levels: {', '.join(sorted(known)) or 'none'}")
    return sorted((f for f in found if not names or f.level.level in names), key=lambda f: f.level.level)


def pinned(level: ApiLevel) -> Release:
    """The release ``level`` follows; a located error when it pins none."""
    if level.release is None:
        raise SpecErrors([Diagnostic(level.mark, f"API level {level.level!r} pins no release: add `release:` (package, version, wheel, sha256)")])
    return level.release


def level_named(project: Project, level: str, specs: Path) -> ApiLevel:
    """API level ``level`` of the specs read from ``specs``; a UsageError when there is none."""
    found = project.api.level(level)
    if found is None:
        names = project.api.level_names
        raise UsageError(f"no API level {level!r} in {specs}{did_you_mean(level, names)}; levels: {', '.join(names) or 'none'}")
    return found


def release_of(level: str, specs: Path = Path("specs")) -> Release:
    """The release API level ``level`` of the spec tree pins."""
    return pinned(level_named(load_project(specs), level, specs))


def architectures(project: Project) -> tuple[list[Architecture], list[str]]:
    """The architectures of the specs the JIT model compiles for, and the others."""
    names = sorted({arch for arch, _ in project.targets.architectures})
    return [ARCHITECTURES[n] for n in names if n in ARCHITECTURES], [n for n in names if n not in ARCHITECTURES]


def kernel_targets(project: Project, out: Path, names: Sequence[str] = ()) -> list[tuple[KernelDir, Target]]:
    """Each kernel of the specs (or those named) with what it compiles against: its
    generated directory under ``out``, and the level of its target's runtime API with the
    release that level pins (its headers fetched)."""
    kernels = {k.name: k for k in project.kernels.kernels}
    unknown = [n for n in names if n not in kernels]
    if unknown:
        raise UsageError(f"no kernel {unknown[0]!r} in the specs{did_you_mean(unknown[0], kernels)}")
    targets = {t.name: t for t in project.targets.targets}
    found: list[tuple[KernelDir, Target]] = []
    resolved: dict[str, Target] = {}
    for name in names or sorted(kernels):
        kernel = kernels[name]
        level_name = targets[kernel.target].kernel_api
        if level_name is None:
            continue  # a kernel of no runtime has nothing to compile against
        if level_name not in resolved:
            level = project.api.level(level_name)
            assert level is not None  # the model checked every runtime API's level
            release = pinned(level)
            entry = {kind: None if level.entry(kind).uses_macros else level.entry(kind).function for kind in KernelKind}
            resolved[level_name] = Target(level_name, release, fetch(release), entry)
        directory = out / "kernels" / name
        try:
            read = read_kernel_dir(directory)
        except ProgramError as exc:
            raise UsageError(f"{exc}; run `ttlgen build`") from None
        if read.kernel_api != level_name:
            raise UsageError(f"{directory / 'program.json'} says kernel_api {read.kernel_api!r}, the specs {level_name!r}; run `ttlgen build`")
        found.append((read, resolved[level_name]))
    return found
