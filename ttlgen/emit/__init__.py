"""Emitters: one module per output kind, found by name.

Every module in this package whose name does not start with ``_`` is an emitter, of one
of two shapes:

- ``emit(project, plan, ctx) -> list[GeneratedFile]``: files of the whole project;
- ``emit_kernel(kernel, ctx) -> list[GeneratedFile]``: the files of one lowered kernel,
  from that kernel alone (so a build regenerates only the kernels an edit reached, see
  ttlgen/incremental.py).

Adding an output kind is adding such a module and its templates.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ttlgen.emit._base import EmitContext, GeneratedFile
    from ttlgen.model.project import Project
    from ttlgen.plan.kernels import LoweredKernel
    from ttlgen.plan.project import ProjectPlan

ProjectEmitter = Callable[["Project", "ProjectPlan", "EmitContext"], "list[GeneratedFile]"]
KernelEmitter = Callable[["LoweredKernel", "EmitContext"], "list[GeneratedFile]"]


@dataclass(frozen=True)
class Emitter:
    """One emitter module: exactly one of ``project`` and ``kernel`` is set."""

    name: str
    project: ProjectEmitter | None = None
    kernel: KernelEmitter | None = None


def emitters() -> list[Emitter]:
    """Every emitter, by module name."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        project, kernel = getattr(module, "emit", None), getattr(module, "emit_kernel", None)
        if (project is None) == (kernel is None):
            raise RuntimeError(f"emitter module {module.__name__} must define exactly one of emit and emit_kernel")
        found.append(Emitter(info.name, project=project, kernel=kernel))
    return found
