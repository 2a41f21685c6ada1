"""One side of a comparison: a spec tree loaded, modelled and planned, with its documents.

The documents stay beside the model so a change can point at the exact key that changed
(an offset, a value) rather than only at the object that holds it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from ttlgen.compat.changes import Location
from ttlgen.errors import KeyPath, Mark, SpecErrors
from ttlgen.model.project import Project, build_project
from ttlgen.pipeline import validate_specs
from ttlgen.plan.project import ProjectPlan, plan_project
from ttlgen.provenance.origins import node_path
from ttlgen.spec.document import SpecDocument


class SideSpecErrors(SpecErrors):
    """The spec errors of one side, introduced by which side it is."""

    def __init__(self, side: str, errors: SpecErrors) -> None:
        self.side = side
        super().__init__(errors.diagnostics)

    def render(self) -> str:
        return f"the specs {self.side} do not load:\n" + super().render()


@dataclass
class Side:
    label: str  # "at origin/main (abc123)" or "in the working tree"
    specs_dir: Path
    documents: tuple[SpecDocument, ...]
    project: Project

    @classmethod
    def load(cls, specs_dir: Path, label: str, by_source: bool = False) -> Side:
        try:
            documents = validate_specs(specs_dir, by_source)
            project = build_project(documents)
        except SpecErrors as exc:
            raise SideSpecErrors(label, exc) from None
        return cls(label, specs_dir, tuple(documents), project)

    @functools.cached_property
    def plan(self) -> ProjectPlan:
        try:
            return plan_project(self.project)
        except SpecErrors as exc:
            raise SideSpecErrors(self.label, exc) from None

    @functools.cached_property
    def by_file(self) -> dict[str, SpecDocument]:
        return {d.display: d for d in self.documents}

    def locate(self, mark: Mark, key: str | None = None) -> Location:
        """Where ``mark`` is, or the ``key`` of the spec node it belongs to when the node has it."""
        document = self.by_file.get(mark.file)
        if key is None or document is None:
            return Location.of(mark)
        path = (*node_path(mark.path), key)
        if path not in document.positions.values:
            return Location.of(mark)
        return Location.of(document.mark(path))

    def at(self, file: str, path: KeyPath) -> Location:
        """The spec node at ``path`` of ``file``."""
        document = self.by_file.get(file)
        return Location.of(document.mark(path)) if document is not None else Location(file)

    def node(self, mark: Mark) -> Location:
        """The spec node ``mark`` belongs to (the list item rather than one of its keys)."""
        document = self.by_file.get(mark.file)
        if document is None:
            return Location.of(mark)
        path = node_path(mark.path)
        return Location.of(document.mark(path)) if path in document.positions.values else Location.of(mark)
