"""The generated ttl_kernel_config package: the library's engine modules copied verbatim,
its tables rendered from the tables the plan stage resolves with, and the same answers."""

from __future__ import annotations

import ast
import importlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GENERATED, REPO
from tests.resolver.kit import catalog, dfb, engine, kernel, tables
from ttlgen.emit.kernel_config import ENGINE_MODULES, literal

SHIPPED = GENERATED / "python" / "ttl_kernel_config"
LIBRARY = REPO / "ttlgen" / "resolver"
RENDERED = ("__init__.py", "ops_table.py", "runtime_constants.py", "targets.py", "vocabulary.py")


def body(path: Path) -> str:
    """A generated file without its header (the header ends at the first blank line)."""
    return path.read_text(encoding="utf-8").split("\n\n", 1)[1]


def test_every_shipped_engine_module_is_its_library_source_verbatim() -> None:
    assert ENGINE_MODULES, "the library has engine modules"
    for name in ENGINE_MODULES:
        source = (LIBRARY / name).read_text(encoding="utf-8")
        assert body(SHIPPED / name) == source, f"{name} differs from ttlgen/resolver/{name}; run ttlgen build"
        assert f"#   ttlgen/resolver/{name}\n" in (SHIPPED / name).read_text(encoding="utf-8")


def test_the_package_is_the_engine_modules_plus_the_rendered_tables() -> None:
    library = {p.name for p in LIBRARY.glob("*.py")} - {"__init__.py"}
    shipped = {p.name for p in SHIPPED.glob("*.py")}
    assert set(ENGINE_MODULES) == library
    assert shipped == library | set(RENDERED)


def test_the_package_exports_the_whole_library_api() -> None:
    tree = ast.parse((SHIPPED / "__init__.py").read_text(encoding="utf-8"))
    exported = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    )
    assert set(engine.__all__) <= set(exported)


@pytest.fixture(scope="module")
def kc() -> Iterator[types.ModuleType]:
    """The committed generated package, imported from generated/python (writing no bytecode
    there: a __pycache__ would be an orphan of the committed tree)."""
    sys.path.insert(0, str(GENERATED / "python"))
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        yield importlib.import_module("ttl_kernel_config")
    finally:
        sys.dont_write_bytecode = writes_bytecode
        sys.path.remove(str(GENERATED / "python"))


def test_the_rendered_enums_are_the_plan_stage_enums(kc: types.ModuleType) -> None:
    t = tables()
    pairs = [
        (kc.ElementType, t.element_type),
        (kc.Primitive, t.primitive),
        (kc.Strategy, t.strategy),
        (kc.FullFp32Kind, t.full_fp32_kind),
        (kc.Architecture, t.architecture),
        (kc.UnpackToDestMode, t.tables.runtime_enums.unpack_to_dest_mode),
        (kc.MathFidelity, t.tables.runtime_enums.math_fidelity),
    ]
    for rendered, built in pairs:
        assert rendered.__name__ == built.__name__
        assert [(m.name, m.value) for m in rendered] == [(m.name, m.value) for m in built]


def test_the_rendered_tables_are_the_plan_stage_tables(kc: types.ModuleType) -> None:
    # The two packages' record classes differ, so compare them as Python source.
    built = tables().tables
    for field in engine.Tables._fields:
        if field != "runtime_enums":  # classes: compared member by member above
            assert literal(getattr(kc.TABLES, field)) == literal(getattr(built, field)), field


def in_package(kc: types.ModuleType, k: engine.KernelDescription) -> object:
    """The same kernel description, built from the generated package's own classes."""
    def operand(o: engine.Operand) -> object:
        return kc.DfbOperand(o.dfb, o.tile) if isinstance(o, engine.DfbOperand) else kc.ValueOperand(o.value)
    ops = tuple(kc.TileOp(op.id, op.op, tuple(operand(o) for o in op.operands), op.result, op.attrs, op.strategy) for op in k.ops)
    return kc.KernelDescription(dict(k.dfbs), ops)


def test_the_package_resolves_like_the_library(kc: types.ModuleType) -> None:
    kernels = [
        kernel({0: "f32", 1: "f32"}, ("s", "tile_add", [dfb(0), dfb(1)]), ("e", "tile_exp", [dfb(0)])),
        kernel({0: "bf16", 1: "bf16"}, ("m", "tile_mul", [dfb(0), dfb(1)]), ("r", "tile_reduce", [dfb(0), dfb(1)], {"reduce_dim": "row"})),
        kernel({0: "f32", 1: "bf16"}, ("b", "tile_bcast", [dfb(1)], {"bcast": "col"}), ("e", "tile_exp", [dfb(0)])),
    ]
    for k in kernels:
        for target in ("blackhole", "wormhole_b0", None):
            ours = catalog().resolve_kernel(k, target=target)
            theirs = kc.resolve_kernel(in_package(kc, k), target=target)
            if isinstance(ours, engine.ResolveFailure):
                assert [e.message for e in theirs.errors] == [e.message for e in ours.errors]
            else:
                assert theirs.to_json() == ours.to_json()
                assert [w.to_json() for w in theirs.warnings] == [w.to_json() for w in ours.warnings]


def test_the_package_hands_back_its_own_enum_members(kc: types.ModuleType) -> None:
    k = kernel({0: "f32", 1: "f32"}, ("s", "tile_add", [dfb(0), dfb(1)]), ("e", "tile_exp", [dfb(0)]))
    plan = kc.resolve_kernel(in_package(kc, k), target="blackhole")
    assert plan.strategies == (("s", kc.Strategy.SFPU),)
    assert plan.strategies[0][1] is kc.Strategy.SFPU
    assert kc.to_compute_config_descriptor(plan).math_fidelity is kc.MathFidelity.HiFi4
    assert kc.architecture_from_runtime_name("BLACKHOLE") is kc.Architecture.BLACKHOLE


def test_the_library_imports_only_the_standard_library_and_itself() -> None:
    for path in sorted(LIBRARY.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.partition(".")[0] in sys.stdlib_module_names, f"{path.name} imports {name}"
