"""Emitters: one module per output kind, found by name.

Every module in this package whose name does not start with ``_`` is an emitter and
exposes ``emit(project, plan, ctx) -> list[GeneratedFile]``. Adding an output kind is adding
such a module and its templates.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ttlgen.emit._base import EmitContext, GeneratedFile
    from ttlgen.model.project import Project
    from ttlgen.plan.project import ProjectPlan

Emitter = Callable[["Project", "ProjectPlan", "EmitContext"], "list[GeneratedFile]"]


def emitters() -> list[tuple[str, Emitter]]:
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.append((info.name, module.emit))
    return found
