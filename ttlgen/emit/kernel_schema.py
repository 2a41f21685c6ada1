"""Writes the kernel spec kind's editor schema, schemas/ttlgen.kernel.v1.schema.json.

It is made as every editor schema is (schemas.py), but it alone names the tree's kernels
(each kernel gets a definition with its own buffers' names). Written apart, it is the
only editor schema a build after a kernel-spec edit makes again: the others read no
kernel and come from their record (ttlgen/incremental.py).
"""

from __future__ import annotations

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit.schemas import KERNEL_KIND, schema_file
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan
from ttlgen.spec.kinds import spec_kinds


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    del plan, ctx
    return [schema_file(kind, project) for kind in spec_kinds() if kind.name == KERNEL_KIND]
