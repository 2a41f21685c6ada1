"""load -> validate -> model -> plan -> render: the one path every command takes.

`plan` is everything `ttlgen validate` runs; `render` turns a planned project into the
bytes of every generated file, MANIFEST included. build, check and diff write or compare
those bytes; explain and review render with a tracing context; compat plans both sides.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from ttlgen import __version__
from ttlgen.errors import SpecErrors
from ttlgen.model.project import Project, build_project
from ttlgen.plan.project import ProjectPlan, plan_project
from ttlgen.spec.document import SpecDocument
from ttlgen.spec.load import load_specs
from ttlgen.validate.documents import validate_documents

if TYPE_CHECKING:
    from ttlgen.emit._base import EmitContext


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


def plan(specs_dir: Path) -> tuple[Project, ProjectPlan]:
    """Everything up to the plan stage: the checks `ttlgen validate` runs."""
    project = load_project(specs_dir)
    return project, plan_project(project)


def render(project: Project, planned: ProjectPlan, ctx: EmitContext) -> dict[str, bytes]:
    """Every generated file, path -> the bytes `build` writes, sorted by path; MANIFEST
    records what produced them."""
    # The renderer (Jinja and every emitter) is imported here, not with the module:
    # `ttlgen validate` plans without it.
    from ttlgen.emit._header import finalize
    from ttlgen.emit._notice import MANIFEST
    from ttlgen.emit.emitters import EMITTERS

    made_by: dict[str, str] = {}
    files: dict[str, bytes] = {}
    for name, emit in EMITTERS:
        for file in emit(project, planned, ctx):
            if file.path in made_by or file.path == MANIFEST:
                other = made_by.get(file.path, "provenance (reserved)")
                raise RuntimeError(f"emitters {other!r} and {name!r} both produce {file.path!r}")
            made_by[file.path] = name
            files[file.path] = finalize(file)
    files[MANIFEST] = manifest(project, ctx, files)
    return dict(sorted(files.items()))


def render_specs(specs_dir: Path, templates_dir: Path | None = None, cached: bool = True) -> dict[str, bytes]:
    """`plan` and `render` of a spec tree with a template tree (default: the shipped one);
    ``cached``: compiled templates may come from the cache."""
    from ttlgen.emit._base import EmitContext, Templates
    from ttlgen.emit._templates import default_templates_dir

    context = EmitContext(Templates(templates_dir or default_templates_dir()), cached=cached)
    project, planned = plan(specs_dir)
    return render(project, planned, context)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest(project: Project, ctx: EmitContext, outputs: dict[str, bytes]) -> bytes:
    """Provenance that changes with versions lives here, never in the generated files: the
    generator's version and the hash of every input (as read) and output."""
    from ttlgen.emit._notice import NOTICE

    lines = [
        f"# {NOTICE}",
        "# What produced this tree: the generator's version and the hash of every input and output.",
        f"generator ttlgen {__version__}",
    ]
    lines.extend(f"input {spec.sha256} {spec.source}" for spec in project.inputs)
    lines.extend(f"template {_sha256(data)} templates/{name}" for name, data in ctx.templates.files.items())
    lines.extend(f"output {_sha256(outputs[name])} {name}" for name in sorted(outputs))
    return ("\n".join(lines) + "\n").encode("utf-8")
