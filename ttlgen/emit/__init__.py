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

import contextlib
import importlib
import marshal
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ttlgen import cache
from ttlgen.fingerprint import code as code_fingerprint

if TYPE_CHECKING:
    from ttlgen.emit._base import EmitContext, GeneratedFile
    from ttlgen.model.project import Project
    from ttlgen.plan.kernels import LoweredKernel
    from ttlgen.plan.project import ProjectPlan

ProjectEmitter = Callable[["Project", "ProjectPlan", "EmitContext"], "list[GeneratedFile]"]
KernelEmitter = Callable[["LoweredKernel", "EmitContext"], "list[GeneratedFile]"]

# The function each shape of emitter module defines.
_ENTRY = {"project": "emit", "kernel": "emit_kernel"}


@dataclass(frozen=True)
class Emitter:
    """One emitter module: exactly one of ``project`` and ``kernel`` is set."""

    name: str
    project: ProjectEmitter | None = None
    kernel: KernelEmitter | None = None


class _Deferred:
    """An emitter's function, its module imported at the first call: a build that takes
    most parts from the part records runs few emitters (ttlgen/incremental.py), and
    importing all of them cost 7 ms of it."""

    def __init__(self, module: str, function: str) -> None:
        self._module, self._function = module, function

    def __call__(self, *args: Any) -> Any:
        return getattr(importlib.import_module(self._module), self._function)(*args)


def _inventory_path() -> Path:
    return cache.cache_root() / "emitters" / code_fingerprint().hex()


def _scan() -> list[tuple[str, str]]:
    """(module name, shape) of every emitter module, each imported and checked."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        project, kernel = getattr(module, "emit", None), getattr(module, "emit_kernel", None)
        if (project is None) == (kernel is None):
            raise RuntimeError(f"emitter module {module.__name__} must define exactly one of emit and emit_kernel")
        found.append((info.name, "project" if project is not None else "kernel"))
    return found


def _recorded() -> list[tuple[str, str]] | None:
    """The inventory a process with the same code scanned, when it is recorded intact."""
    entries = cache.read_marshalled(_inventory_path())
    if not isinstance(entries, list):
        return None
    if not all(isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], str) and e[1] in _ENTRY for e in entries):
        return None
    return entries


def emitters() -> list[Emitter]:
    """Every emitter, by module name. Which modules are emitters, and of which shape, is a
    fact of ttlgen's code: it is recorded under the code's fingerprint (as every record of
    ``ttlgen.cache``; with caching off, every call scans), and a module is imported only
    when its emitter runs."""
    entries = _recorded() if cache.enabled() else None
    if entries is None:
        entries = _scan()
        if cache.enabled():
            with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
                cache.write_sealed(_inventory_path(), marshal.dumps(entries))
    found = []
    for name, shape in entries:
        function = _Deferred(f"{__name__}.{name}", _ENTRY[shape])
        found.append(Emitter(name, project=function) if shape == "project" else Emitter(name, kernel=function))
    return found
