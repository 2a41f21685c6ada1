"""load -> validate -> model -> plan: everything `ttlgen validate` runs, rendering nothing.

`ttlgen.generate` adds the emit stage on top of these."""

from __future__ import annotations

from pathlib import Path

from ttlgen.errors import SpecErrors
from ttlgen.model.project import Project, build_project
from ttlgen.plan.project import ProjectPlan, plan_project
from ttlgen.spec.document import SpecDocument
from ttlgen.spec.load import load_specs
from ttlgen.validate.documents import validate_documents


def validate_specs(specs_dir: Path, by_source: bool = False) -> list[SpecDocument]:
    """Load and schema-check every spec; raises SpecErrors with every error found."""
    documents = load_specs(specs_dir, by_source)
    diagnostics = validate_documents(documents)
    if diagnostics:
        raise SpecErrors(diagnostics)
    return documents


def load_project(specs_dir: Path) -> Project:
    """Load, validate and model the specs (renders nothing)."""
    return build_project(validate_specs(specs_dir))


def plan_specs(specs_dir: Path) -> tuple[Project, ProjectPlan]:
    """Everything up to the plan stage: the checks `ttlgen validate` runs."""
    project = load_project(specs_dir)
    return project, plan_project(project)
