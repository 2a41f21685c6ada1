"""The plan of a whole project: what the emitters need beyond the model."""

from __future__ import annotations

from dataclasses import dataclass

from ttlgen.errors import DiagnosticSink
from ttlgen.model.project import Project
from ttlgen.plan import goldens, kernel_target_cpp
from ttlgen.plan.kernels import LoweredKernel, plan_kernels
from ttlgen.plan.tables import ResolverTables, resolver_tables


@dataclass(frozen=True)
class ProjectPlan:
    """Every kernel of the model, resolved and lowered, in the model's order, and the
    resolver's tables the kernels were resolved with (None: no ops or no targets), with
    their C++ view for TT-Lang's compiler (None: no tables, or the vocabulary states no
    C++ spelling)."""

    kernels: tuple[LoweredKernel, ...]
    tables: ResolverTables | None = None
    kernel_target_cpp: kernel_target_cpp.KernelTargetCpp | None = None


def plan_tables(project: Project) -> tuple[ResolverTables | None, kernel_target_cpp.KernelTargetCpp | None]:
    """The resolver's tables and their C++ view (None: no ops or no targets)."""
    if not (project.ops.ops and project.targets.targets):
        return None, None
    tables = resolver_tables(project.ops, project.targets)
    return tables, kernel_target_cpp.build(tables, project.ops.vocabulary, project.targets)


def plan_project(project: Project) -> ProjectPlan:
    """Check the goldens, resolve and lower every kernel; raises SpecErrors with every
    problem found."""
    tables, cpp = plan_tables(project)
    sink = DiagnosticSink()
    goldens.check(project.targets, tables, sink)
    sink.raise_if_any()
    return ProjectPlan(
        tuple(plan_kernels(project.kernels.kernels, project.ops, project.targets, project.spelling, project.api)),
        tables,
        cpp,
    )
