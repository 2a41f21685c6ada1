"""Every emitter. Adding an output kind is adding its module, its templates, and its line
in `EMITTERS`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ttlgen.emit import (
    abi_c,
    abi_cpp,
    abi_docs,
    abi_python,
    emulator_api,
    kernel_config,
    kernel_target_adapter,
    kernel_target_tables,
    kernels,
    programs,
    schemas,
)

if TYPE_CHECKING:
    from ttlgen.emit._base import EmitContext, GeneratedFile
    from ttlgen.model.project import Project
    from ttlgen.plan.project import ProjectPlan

Emitter = Callable[["Project", "ProjectPlan", "EmitContext"], "list[GeneratedFile]"]

# Every emitter, by name (the name a path collision between two of them is reported with).
EMITTERS: tuple[tuple[str, Emitter], ...] = (
    ("abi_c", abi_c.emit),
    ("abi_cpp", abi_cpp.emit),
    ("abi_docs", abi_docs.emit),
    ("abi_python", abi_python.emit),
    ("emulator_api", emulator_api.emit),
    ("kernel_config", kernel_config.emit),
    ("kernel_target_adapter", kernel_target_adapter.emit),
    ("kernel_target_tables", kernel_target_tables.emit),
    ("kernels", kernels.emit),
    ("programs", programs.emit),
    ("schemas", schemas.emit),
)
