"""Emits generated/python/ttl_kernel_config: the kernel-configuration resolver package.

Spec-dependent tables are rendered from templates; the engine, the same for every
spec, is copied from plain source files under templates/python/ttl_kernel_config/.
"""

from __future__ import annotations

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.model.ops import OpsModel
from ttlgen.model.project import Project
from ttlgen.model.targets import TargetsModel
from ttlgen.plan.project import ProjectPlan

PACKAGE = "python/ttl_kernel_config"
TEMPLATES = "python/ttl_kernel_config"

# Engine modules copied verbatim (logic shared by every spec).
STATIC_MODULES = (
    "__init__.py",
    "diagnostics.py",
    "environment.py",
    "kernel.py",
    "lookup.py",
    "resolver.py",
    "runtime.py",
    "semantics.py",
)


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    if not project.ops.ops or not project.targets.targets:
        return []
    return render_package(project.ops, project.targets, ctx)


def render_package(ops: OpsModel, targets: TargetsModel, ctx: EmitContext) -> list[GeneratedFile]:
    """Every file of the package for these models (also used by `ttlgen resolve`)."""
    files = [
        GeneratedFile(
            path=f"{PACKAGE}/{name}",
            body=ctx.copy(f"{TEMPLATES}/{name}"),
            sources=(f"templates/{TEMPLATES}/{name}",),
        )
        for name in STATIC_MODULES
    ]
    vocabulary = ops.vocabulary
    files.append(
        GeneratedFile(
            path=f"{PACKAGE}/vocabulary.py",
            body=ctx.render(
                f"{TEMPLATES}/vocabulary.py.j2",
                element_types=vocabulary.element_types,
                primitives=vocabulary.primitives,
                strategies=vocabulary.strategies,
                full_fp32_kinds=vocabulary.full_fp32_kinds,
                architectures=targets.architectures,
                runtime_enums=targets.runtime_enums,
            ),
            sources=tuple(sorted({vocabulary.source, *targets.sources})),
        )
    )
    files.append(
        GeneratedFile(
            path=f"{PACKAGE}/ops_table.py",
            body=ctx.render(
                f"{TEMPLATES}/ops_table.py.j2",
                ops=ops.ops,
                full_fp32_kinds=vocabulary.full_fp32_kinds,
            ),
            sources=ops.sources,
        )
    )
    files.append(
        GeneratedFile(
            path=f"{PACKAGE}/targets.py",
            body=ctx.render(
                f"{TEMPLATES}/targets.py.j2",
                targets=targets.targets,
                runtime_apis=targets.runtime_apis,
                no_target=targets.no_target,
            ),
            sources=targets.sources,
        )
    )
    return files
