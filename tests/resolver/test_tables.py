"""The engine takes its tables as data: hand-written tables with plain strings, the plan
stage's tables with their enum members, and the located errors of building them."""

from __future__ import annotations

import enum
from pathlib import Path
from types import MappingProxyType

from tests.conftest import real_project, run_cli
from tests.resolver.kit import catalog, dfb, engine, failure_of, kernel, plan_of, resolve, tables
from ttlgen.plan.project import plan_project
from ttlgen.plan.resolution import Resolver
from ttlgen.resolver import (
    DestWidth,
    ElementInfo,
    FullFp32Support,
    LegalityCondition,
    Match,
    OperandSemantics,
    OpSemantics,
    Route,
    RuntimeEnums,
    Selected,
    StrategyInfo,
    StrategySemantics,
    Tables,
    TargetTable,
    UnpackMode,
    UnpackRule,
    UnpackTable,
    WidthRule,
    WidthTable,
)

BOTH = frozenset(DestWidth)


def tiny_tables() -> Tables:
    """Two element types, a binary op with FPU and SFPU strategies and a unary SFPU op,
    one target: every name a plain string."""
    binary = OpSemantics(
        name="add",
        family="binary",
        primitive=Selected(None, "Binary"),
        operands=(OperandSemantics("lhs", False, False), OperandSemantics("rhs", False, False)),
        result_in_dst=True,
        has_result=True,
        full_fp32=None,
        strategies=(
            StrategySemantics("fpu", (LegalityCondition.OPERANDS_FROM_DFB_SAME_TILE,), (Route.DFB, Route.DFB), True),
            StrategySemantics("sfpu", (), (Route.DST, Route.DST), False),
        ),
    )
    unary = OpSemantics(
        name="neg",
        family="unary",
        primitive=Selected(None, "Unary"),
        operands=(OperandSemantics("x", False, False),),
        result_in_dst=True,
        has_result=True,
        full_fp32=None,
        strategies=(StrategySemantics("sfpu", (), (Route.DST,), False),),
    )
    target = TargetTable(
        name="toy",
        summary="A toy target.",
        architecture=None,
        default_for_architecture=False,
        runtime_api=None,
        dfb_capacity=8,
        dest_width=WidthTable("toy", None, (
            WidthRule(Match(element_bits=frozenset({32})), frozenset({DestWidth.BITS32})),
            WidthRule(Match(), BOTH),
        )),
        dfb_unpack=UnpackTable("toy", None, (
            UnpackRule(Match(elements=frozenset({"wide"}), routes=frozenset({Route.DST})), frozenset({DestWidth.BITS32}), frozenset({UnpackMode.UNPACK_TO_DEST})),
            UnpackRule(Match(), BOTH, frozenset({UnpackMode.DEFAULT})),
        )),
        unpack_effective_for=frozenset({"wide"}),
        unpack_other_entries_need_32bit_dest=False,
        unpack_unbound_entries_rejected=False,
        full_fp32=MappingProxyType({}),
    )
    return Tables(
        elements=(ElementInfo("wide", 32, True), ElementInfo("narrow", 16, True)),
        primitives=("Binary", "Unary"),
        strategies=(StrategyInfo("fpu", True), StrategyInfo("sfpu", False)),
        full_fp32_kinds=(),
        architectures=(),
        ops=MappingProxyType({"add": binary, "neg": unary}),
        runtime_apis=(),
        runtime_enums=RuntimeEnums(
            enum.IntEnum("UnpackToDestMode", [("UnpackToDestFp32", 0), ("Default", 1)]),
            enum.IntEnum("MathFidelity", [("HiFi4", 4)]),
        ),
        targets=(target,),
        rejected=(),
        no_target="toy",
    )


def test_hand_written_tables_with_plain_strings_drive_the_joint_search() -> None:
    toy = engine.Catalog(tiny_tables())
    k = engine.KernelDescription(
        {0: "wide", 1: "wide"},
        (
            engine.TileOp("s", "add", (engine.DfbOperand(0), engine.DfbOperand(1))),
            engine.TileOp("n", "neg", (engine.DfbOperand(0),)),
        ),
    )
    plan = plan_of(toy.resolve_kernel(k))
    # The SFPU consumer of buffer 0 forces unpack-to-DST, so the add cannot use FPU.
    assert plan.strategies == (("s", "sfpu"),)
    assert (plan.fp32_dest_acc_en, plan.unpack_to_dest_fp32) == (True, (0, 1))
    narrow = engine.KernelDescription({0: "narrow", 1: "narrow"}, (engine.TileOp("s", "add", (engine.DfbOperand(0), engine.DfbOperand(1))),))
    assert plan_of(toy.resolve_kernel(narrow)).strategies == (("s", "fpu"),)


def test_the_plan_hands_back_the_tables_own_strategy_members() -> None:
    k = kernel({0: "f32", 1: "f32"}, ("s", "tile_add", [dfb(0), dfb(1)]), ("e", "tile_exp", [dfb(0)]))
    ((op_id, strategy),) = plan_of(resolve(k, "blackhole")).strategies
    assert op_id == "s"
    assert strategy is tables().strategy.SFPU and strategy.value == "sfpu"


def test_an_element_type_the_tables_do_not_declare_is_a_diagnostic() -> None:
    k = kernel({0: "f99", 1: "bf16"}, ("c", "copy_tile", [dfb(0)]), ("d", "copy_tile", [dfb(1)], {"result": "f64"}))
    messages = [e.message for e in failure_of(resolve(k)).errors]
    known = ", ".join(e.name for e in catalog().tables.elements)
    assert messages == [
        f"dataflow buffer 0 has an unknown element type 'f99'; known: {known}",
        f"has an unknown result element type 'f64'; known: {known}",
    ]


def test_names_that_would_share_a_python_identifier_are_a_located_error(spec_copy: Path) -> None:
    vocabulary = spec_copy / "ops" / "vocabulary.yaml"
    text = vocabulary.read_text()
    assert "  f32: {bits: 32, float: true}\n" in text
    text = text.replace("  f32: {bits: 32, float: true}\n", "  f32: {bits: 32, float: true}\n  f32_: {bits: 32, float: true}\n")
    vocabulary.write_text(text.replace("    f32: isF32()\n", "    f32: isF32()\n    f32_: isF32()\n"))
    result = run_cli("validate", "--specs", spec_copy)
    assert result.exit_code == 2
    assert "specs/ops/vocabulary.yaml:" in result.stderr
    assert "element type 'f32_' and 'f32'" in result.stderr and "would both be ElementType.F32 in Python" in result.stderr


def test_a_primitive_that_is_a_python_keyword_is_a_located_error(spec_copy: Path) -> None:
    vocabulary = spec_copy / "ops" / "vocabulary.yaml"
    text = vocabulary.read_text()
    vocabulary.write_text(text.replace("  - DstIndex\n", "  - DstIndex\n  - None\n"))
    result = run_cli("validate", "--specs", spec_copy)
    assert result.exit_code == 2
    assert "primitive 'None' would be Primitive.None in Python, which is not an identifier" in result.stderr


def test_target_tables_keep_full_fp32_support_per_kind() -> None:
    table = catalog().get_target("blackhole").table
    assert table.full_fp32[tables().full_fp32_kind.MATMUL] == FullFp32Support(True)


def test_the_emitter_prints_the_tables_the_plan_stage_resolved_with() -> None:
    # Within one planning: the tables are shared by object, not rebuilt alike.
    project = real_project()
    plan = plan_project(project)
    assert plan.tables is not None
    assert Resolver(project.ops, project.targets).catalog.tables is plan.tables.tables
