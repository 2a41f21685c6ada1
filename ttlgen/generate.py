"""load -> validate -> model -> plan -> emit: the whole generation, in memory, writing nothing."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ttlgen import __version__, cache
from ttlgen.emit import emitters
from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit._notice import MANIFEST, NOTICE
from ttlgen.emit._templates import default_templates_dir
from ttlgen.errors import UsageError
from ttlgen.fingerprint import generator as generator_fingerprint
from ttlgen.incremental import generate_parts
from ttlgen.model.project import Project, build_project
from ttlgen.part_cache import PartRecords
from ttlgen.pipeline import validate_specs
from ttlgen.plan.project import ProjectPlan
from ttlgen.spec.files import source_name, spec_files


@dataclass(frozen=True)
class GeneratedTree:
    """The complete output: relative POSIX path -> bytes, MANIFEST included."""

    files: dict[str, bytes]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _template_files(templates_dir: Path) -> list[Path]:
    return sorted(
        (p for p in templates_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts),
        key=lambda p: p.relative_to(templates_dir).as_posix(),
    )


def manifest(specs_dir: Path, templates_dir: Path, outputs: dict[str, bytes]) -> bytes:
    """Provenance that changes with versions lives here, never in the generated files."""
    lines = [
        f"# {NOTICE}",
        "# What produced this tree: the generator's version and the hash of every input and output.",
        f"generator ttlgen {__version__}",
    ]
    for path in spec_files(specs_dir):
        lines.append(f"input {_sha256(path.read_bytes())} {source_name(specs_dir, path)}")
    for path in _template_files(templates_dir):
        lines.append(f"template {_sha256(path.read_bytes())} templates/{path.relative_to(templates_dir).as_posix()}")
    for name in sorted(outputs):
        lines.append(f"output {_sha256(outputs[name])} {name}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def emit_project(project: Project, plan: ProjectPlan, templates_dir: Path, ctx: EmitContext | None = None) -> list[GeneratedFile]:
    """Every generated file of a planned project, sorted by path, rendered in emitter order
    (``ttlgen explain`` passes a ``ctx`` that records where each line comes from)."""
    ctx = ctx or EmitContext(templates_dir)
    produced: dict[str, tuple[str, GeneratedFile]] = {}
    for emitter in emitters():
        if emitter.kernel is not None:
            files = [file for kernel in plan.kernels for file in emitter.kernel(kernel, ctx)]
        else:
            assert emitter.project is not None
            files = emitter.project(project, plan, ctx)
        for file in files:
            if file.path in produced:
                other = produced[file.path][0]
                raise RuntimeError(f"emitters {other!r} and {emitter.name!r} both produce {file.path!r}")
            produced[file.path] = (emitter.name, file)
    return [produced[path][1] for path in sorted(produced)]


def generate(specs_dir: Path, templates_dir: Path | None = None, reuse: bool = False) -> GeneratedTree:
    """The whole tree. ``reuse``: take the parts no input of which changed from the record
    of earlier generations (ttlgen/incremental.py) instead of generating them."""
    templates = templates_dir or default_templates_dir()
    if not templates.is_dir():
        raise UsageError(f"template directory {str(templates)!r} does not exist; pass --templates DIR")
    documents = validate_specs(specs_dir)
    project = build_project(documents)
    records = PartRecords.open(reuse)
    generator = generator_fingerprint(templates) if records.root is not None else ""
    files = generate_parts(documents, project, generator, EmitContext(templates), records)
    if MANIFEST in files:
        raise RuntimeError(f"an emitter produced {MANIFEST!r}, which is reserved for provenance")
    files[MANIFEST] = manifest(specs_dir, templates, files)
    records.commit()
    if records.root is not None:
        cache.trim()
    return GeneratedTree(files=dict(sorted(files.items())))
