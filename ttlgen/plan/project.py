"""The plan of a whole project: what the emitters need beyond the model."""

from __future__ import annotations

from dataclasses import dataclass

from ttlgen.model.project import Project
from ttlgen.plan.kernels import LoweredKernel, plan_kernels


@dataclass(frozen=True)
class ProjectPlan:
    """Every kernel of the model, resolved and lowered, in the model's order."""

    kernels: tuple[LoweredKernel, ...]


def plan_project(project: Project) -> ProjectPlan:
    """Resolve and lower every kernel; raises SpecErrors with every problem found."""
    if not project.kernels.kernels:
        return ProjectPlan(())
    return ProjectPlan(
        tuple(plan_kernels(project.kernels.kernels, project.ops, project.targets, project.spelling, project.api))
    )
