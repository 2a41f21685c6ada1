"""Emits generated/python/ttl_kernel_config: the kernel-configuration resolver package.

The engine modules are copied verbatim from the library the plan stage resolves kernels
with (``ttlgen/resolver/``). The table modules print the ``ResolverTables`` the plan
stage built and resolved with, and ``__init__.py`` binds the two.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from pathlib import Path

import ttlgen.resolver
from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.model.namespaces import KERNEL_CONFIG_PACKAGE
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan
from ttlgen.resolver import Tables

PACKAGE = f"python/{KERNEL_CONFIG_PACKAGE}"
TEMPLATES = "python/ttl_kernel_config"

ENGINE_DIR = Path(ttlgen.resolver.__file__).resolve().parent
ENGINE_SOURCE = "ttlgen/resolver"
# Every module of the library but its __init__ (the generated package has its own,
# which binds the engine to the rendered tables).
ENGINE_MODULES = tuple(sorted(p.name for p in ENGINE_DIR.glob("*.py") if p.name != "__init__.py"))


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    if plan.tables is None:
        return []
    ops, targets = project.ops, project.targets
    files = [
        GeneratedFile(
            path=f"{PACKAGE}/{name}",
            body=(ENGINE_DIR / name).read_text(encoding="utf-8"),
            sources=(f"{ENGINE_SOURCE}/{name}",),
        )
        for name in ENGINE_MODULES
    ]
    tables = plan.tables
    rendered = (
        ("__init__.py", (f"templates/{TEMPLATES}/__init__.py.j2",)),
        ("vocabulary.py", tuple(sorted({ops.vocabulary.source, *targets.sources}))),
        ("ops_table.py", ops.sources),
        ("targets.py", targets.sources),
        ("runtime_constants.py", targets.sources),
    )
    for name, sources in rendered:
        body = ctx.render(f"{TEMPLATES}/{name}.j2", t=tables, py=literal, devices=devices(tables.tables))
        files.append(GeneratedFile(path=f"{PACKAGE}/{name}", body=body, sources=sources))
    return files


def devices(tables: Tables) -> list[tuple[str, str, str]]:
    """(device name, architecture, default target) of every architecture with a target a
    kernel can be compiled for; the device name is the runtime's, in lower case."""
    defaults = {t.architecture: t.name for t in tables.targets if t.default_for_architecture}
    return [
        (a.runtime_name.lower(), a.name, defaults[a.name])
        for a in tables.architectures
        if a.runtime_name is not None and a.name in defaults
    ]


def literal(value: object) -> str:
    """Python source for a table value: enum members as ``Class.MEMBER``, records
    (NamedTuples) as calls with keyword arguments (defaults left out), sets in declaration
    order."""
    if isinstance(value, enum.Enum):  # before str and int: StrEnum and IntEnum are both
        return f"{type(value).__name__}.{value.name}"
    if value is None or isinstance(value, bool | int | str):
        return repr(value)
    fields = getattr(type(value), "_fields", None)
    if isinstance(value, tuple) and fields is not None:  # a NamedTuple record
        defaults = getattr(type(value), "_field_defaults", {})
        arguments = [
            f"{name}={literal(current)}"
            for name, current in zip(fields, value, strict=True)
            if name not in defaults or current != defaults[name]
        ]
        return f"{type(value).__name__}({', '.join(arguments)})"
    if isinstance(value, frozenset):
        if not value:
            return "frozenset()"
        return "frozenset({" + ", ".join(literal(v) for v in sorted(value, key=_order)) + "})"
    if isinstance(value, tuple):
        items = [literal(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, Mapping):
        return "MappingProxyType({" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "})"
    raise TypeError(f"no Python literal for {type(value).__name__} values")


def _order(value: object) -> tuple[int, str]:
    if isinstance(value, enum.Enum):
        return list(type(value)).index(value), ""
    if isinstance(value, int):
        return value, ""
    return 0, str(value)

