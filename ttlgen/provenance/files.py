"""Generated files of a spec tree with the origin of each line, as ``build`` writes them.

Tracing a render costs several times the render, and an explanation seldom needs the
whole tree: ``explain FILE`` needs one file, ``review`` the files that differ between
its sides. So the tree is rendered plainly first (:func:`emitted`: each file with the
emitter that produces it), and only the emitters of the files wanted are run again
with a tracing context (:func:`trace_files`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ttlgen.emit._base import EmitContext, GeneratedFile, Templates
from ttlgen.emit._header import _normalise, finalize
from ttlgen.emit.emitters import EMITTERS
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan
from ttlgen.provenance.origins import FileProvenance, LineOrigin, Locator, OriginKind
from ttlgen.provenance.tracing import ModelIndex, Tracer, TracingContext
from ttlgen.spec.document import SpecDocument


@dataclass(frozen=True)
class Emitted:
    """One generated file, untraced."""

    emitter: str  # the name of the emitter that produces it (``EMITTERS``)
    data: bytes  # what ``build`` writes


def emitted(project: Project, plan: ProjectPlan, templates: Templates) -> dict[str, Emitted]:
    """Every generated file but MANIFEST (which no line of provenance describes): path ->
    the emitter that produces it and its bytes."""
    ctx = EmitContext(templates)
    return {file.path: Emitted(name, finalize(file)) for name, emit in EMITTERS for file in emit(project, plan, ctx)}


def trace_files(
    project: Project,
    plan: ProjectPlan,
    documents: Sequence[SpecDocument],
    templates: Templates,
    emitters: Collection[str] | None = None,
) -> dict[str, FileProvenance]:
    """Render the files of ``emitters`` (names in ``EMITTERS``; None: every emitter) with a
    tracing context; path -> its lines and their origins."""
    locator = Locator(tuple(documents))
    headers = {(level.level, header.path): header.mark for level in project.api.levels for header in level.headers}
    tracer = Tracer(ModelIndex((project, plan), locator), templates, plan.kernels, headers)
    ctx = TracingContext(templates, cached=False, tracer=tracer)
    files = [file for name, emit in EMITTERS if emitters is None or name in emitters for file in emit(project, plan, ctx)]
    # A file's body is the text one render returned. Two files with the same text (two
    # kernels with the same data movement) are rendered in the order of their sorted paths.
    rendered: dict[str, deque[tuple[LineOrigin, ...]]] = {}
    for text, origins in tracer.rendered:
        rendered.setdefault(text, deque()).append(origins)
    out = {}
    for file in sorted(files, key=lambda f: f.path):
        found = rendered.get(file.body)
        out[file.path] = _as_written(file, found.popleft() if found else None)
    return out


def _as_written(file: GeneratedFile, body: tuple[LineOrigin, ...] | None) -> FileProvenance:
    """The file's lines with its header, which the framework adds around the body."""
    lines = finalize(file).decode("utf-8").split("\n")[:-1]
    body_lines = _normalise(file.body).split("\n")[:-1]
    whole = LineOrigin(OriginKind.FILE, files=file.sources)
    origins = list(body[: len(body_lines)]) if body is not None else [whole] * len(body_lines)
    header = LineOrigin(OriginKind.HEADER, files=file.sources)
    extra = len(lines) - len(body_lines)
    if lines[extra:] == body_lines:  # a comment header before the body
        placed = [header] * extra + origins
    elif body_lines and lines[0] == body_lines[0] and lines[extra + 1 :] == body_lines[1:]:  # a JSON comment key
        placed = [origins[0], *[header] * extra, *origins[1:]]
    else:
        placed = [whole] * len(lines)
    return FileProvenance(file.path, tuple(lines), tuple(placed))
