"""Writes each spec kind's JSON Schema to schemas/, for editors to validate as the CLI does."""

from __future__ import annotations

import json

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan
from ttlgen.spec.kinds import spec_kinds


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    del project, ctx  # the schemas are the generator's own, not derived from specs
    return [
        GeneratedFile(
            path=f"schemas/{kind.schema_file}",
            body=json.dumps(kind.schema(), indent=2, ensure_ascii=False),
            sources=(f"ttlgen/schemas/{kind.schema_file}",),
        )
        for kind in spec_kinds()
    ]
