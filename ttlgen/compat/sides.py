"""One side of a comparison: a spec tree loaded, modelled and planned, with its documents.

The documents stay beside the model so a change can point at the exact key that changed
(an offset, a value) rather than only at the object that holds it.

Both sides name their files by source name (``specs/abi/komorebi.yaml``: the spec
directory's name and the path in it), whatever the current directory: the specs at the
ref are read into a temporary directory named like the spec directory, so the two sides
agree on every name, and a change or a generated line is matched across the sides by it.
Only what is printed names the files from the current directory (:class:`SpecPaths`), as
every other ttlgen message does.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ttlgen.compat.changes import Location
from ttlgen.errors import KeyPath, Mark, SpecErrors
from ttlgen.model.project import Project, build_project
from ttlgen.pipeline import validate_specs
from ttlgen.plan.project import ProjectPlan, plan_project
from ttlgen.provenance.origins import Locator, node_mark, node_path
from ttlgen.spec.document import SpecDocument
from ttlgen.spec.files import display_path

T = TypeVar("T")


@dataclass(frozen=True)
class SpecPaths:
    """How a source name of the spec directory the user gave is shown: from the current
    directory, as the working tree's file at that path (the file at the ref is the same
    file at another commit)."""

    specs_dir: Path

    def shown(self, source: str) -> str:
        head, _, rest = source.partition("/")
        if not rest or head != self.specs_dir.resolve().name:
            return source
        return display_path(self.specs_dir / rest)

    def relocated(self, value: T) -> T:
        """``value`` (a report, a change, a location, or a tuple of them) with every
        location's file shown from the current directory."""
        return _relocated(value, self.shown)


def _relocated(value: T, shown: Callable[[str], str]) -> T:
    if isinstance(value, Location | Mark):
        return dataclasses.replace(value, file=shown(value.file))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {f.name: _relocated(getattr(value, f.name), shown) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changed)
    if isinstance(value, tuple):
        return tuple(_relocated(v, shown) for v in value)  # type: ignore[return-value]
    return value


class SideSpecErrors(SpecErrors):
    """The spec errors of one side, introduced by which side it is, with each file shown
    from the current directory."""

    def __init__(self, side: str, errors: SpecErrors, paths: SpecPaths) -> None:
        self.side = side
        super().__init__(paths.relocated(errors.diagnostics))

    def render(self) -> str:
        return f"the specs {self.side} do not load:\n" + super().render()


@dataclass
class Side:
    label: str  # "at origin/main (abc123)" or "in the working tree"
    documents: tuple[SpecDocument, ...]
    project: Project
    paths: SpecPaths  # how its files are shown

    @classmethod
    def load(cls, specs_dir: Path, label: str, paths: SpecPaths) -> Side:
        """The specs in ``specs_dir``, each file named by its source name."""
        try:
            documents = validate_specs(specs_dir, by_source=True)
            project = build_project(documents)
        except SpecErrors as exc:
            raise SideSpecErrors(label, exc, paths) from None
        return cls(label, tuple(documents), project, paths)

    @functools.cached_property
    def plan(self) -> ProjectPlan:
        try:
            return plan_project(self.project)
        except SpecErrors as exc:
            raise SideSpecErrors(self.label, exc, self.paths) from None

    @functools.cached_property
    def locator(self) -> Locator:
        return Locator(self.documents)

    def locate(self, mark: Mark, key: str | None = None) -> Location:
        """Where ``mark`` is, or the ``key`` of the spec node it belongs to when the node has it."""
        document = self.locator.by_file.get(mark.file)
        if key is None or document is None:
            return Location.of(mark)
        path = (*node_path(mark.path), key)
        if path not in document.positions.values:
            return Location.of(mark)
        return Location.of(node_mark(document, path))

    def at(self, file: str, path: KeyPath) -> Location:
        """The spec node at ``path`` of ``file``."""
        document = self.locator.by_file.get(file)
        return Location.of(node_mark(document, path)) if document is not None else Location(file)

    def node(self, mark: Mark) -> Location:
        """The spec node ``mark`` belongs to (the list item rather than one of its keys)."""
        return Location.of(self.locator.node(mark))
