"""Helpers shared by the ABI tests: build the ABI outputs from a copy of the ABI specs.

The tree is built with the layout and program models and the ABI emitters directly, so
these tests exercise exactly the ABI generators on exactly ``specs/abi`` and
``specs/programs``, whatever other spec kinds the repository holds.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ttlgen.emit import abi_c, abi_cpp, abi_docs, abi_python
from ttlgen.emit import programs as programs_emit
from ttlgen.emit._base import EmitContext, Templates
from ttlgen.emit._header import finalize
from ttlgen.errors import DiagnosticSink, SpecErrors
from ttlgen.model import layout as layout_model
from ttlgen.model import namespaces
from ttlgen.model import programs as programs_model
from ttlgen.pipeline import validate_specs

REPO = Path(__file__).resolve().parents[2]
SPEC_DIRS = ("abi", "programs")
WARNINGS = ["-Wall", "-Wextra", "-Werror", "-Wpadded", "-pedantic"]
C_STANDARDS = ("c99", "c11", "c17")
CXX_STANDARDS = ("c++11", "c++14", "c++17", "c++20")


def copy_specs(target: Path) -> Path:
    """A specs tree holding only the ABI's spec directories."""
    specs = target / "specs"
    for name in SPEC_DIRS:
        if (REPO / "specs" / name).is_dir():
            shutil.copytree(REPO / "specs" / name, specs / name)
    return specs


def build_abi(specs: Path, out: Path) -> None:
    """Validate, model and emit the ABI outputs of ``specs`` into ``out``; raises SpecErrors."""
    documents = validate_specs(specs)
    sink = DiagnosticSink()
    layouts = layout_model.build(documents, sink)
    programs = programs_model.build(documents, sink, layouts)
    namespaces.check(layouts, programs, sink)
    sink.raise_if_any()
    ctx = EmitContext(Templates(REPO / "templates"))
    files = [
        *abi_c.emit_layouts(layouts, ctx),
        *abi_cpp.emit_layouts(layouts, ctx),
        *abi_python.emit_layouts(layouts, ctx),
        *abi_docs.emit_layouts(layouts, ctx),
        *programs_emit.emit_programs(programs, ctx),
    ]
    for file in files:
        path = out / file.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(finalize(file))


def spec_errors(specs: Path) -> list[str]:
    """The formatted diagnostics of building ``specs`` (empty when it builds)."""
    try:
        build_abi(specs, specs.parent / "out")
    except SpecErrors as exc:
        return [d.format() for d in exc.diagnostics]
    return []
