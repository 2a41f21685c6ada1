"""The whole validated model of a spec tree, built domain by domain in dependency order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ttlgen.errors import DiagnosticSink
from ttlgen.spec.document import SpecDocument


@dataclass(frozen=True)
class Project:
    """Typed model of all specs. Emitters read only this."""

    spec_files: tuple[str, ...]


def documents_of(documents: Sequence[SpecDocument], kind: str) -> list[SpecDocument]:
    return [d for d in documents if d.kind == kind]


def build_project(documents: Sequence[SpecDocument]) -> Project:
    """Build every domain model; raises SpecErrors with all semantic errors found."""
    sink = DiagnosticSink()
    project = Project(spec_files=tuple(d.file for d in documents))
    sink.raise_if_any()
    return project
