"""Resolver generations are spec data: a target follows the seed design (PR #798) or TT-Lang's
main line as its spec says, and each main-line fact of the resolver reference (§2.1-2.7) is a
spec fact the engine reads: DST residency checked against the vocabulary's DST register with
upstream's diagnostic, auto sync chosen by capacity, typed policy attributes, capacity-named
range diagnostics. The targets each test uses come from the loaded specs, or from a spec copy
that states what the test needs."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SPECS, run_cli
from tests.resolver.kit import tables, tables_of
from ttlgen import resolver as engine

# A test-only op that holds several DST slots at once, as TT-Lang's main-line
# ttl.tile_row_normalization_block does (primitive Reduce, requiredDstSlots = num_tiles).
RESIDENCY_OPS = """\
spec: ttlgen.ops/v1
families:
  fixed_block:
    summary: A fixed-block op holding num_tiles DST slots at once (test only).
    names: [tile_test_residency]
    primitive: Reduce
    operands:
      - {name: input, route: dfb}
    result: dst
    dst_slots: {by_attribute: num_tiles}
"""


def _copy(root: Path, generation: str, edits: dict[str, tuple[str, str]] | None = None) -> Path:
    """A spec copy whose every target follows ``generation``, with the residency op."""
    import shutil

    specs = root / "specs"
    shutil.copytree(SPECS, specs)
    for path in (specs / "targets").glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        if text.startswith("# yaml-language-server") and "spec: ttlgen.target/v1" in text:
            lines = [line for line in text.splitlines(keepends=True) if not line.startswith("generation:")]
            at = next(i for i, line in enumerate(lines) if line.startswith("runtime_api:")) + 1
            lines.insert(at, f"generation: {generation}\n")
            path.write_text("".join(lines), encoding="utf-8")
    (specs / "ops" / "test_residency.yaml").write_text(RESIDENCY_OPS, encoding="utf-8")
    for file, (old, new) in (edits or {}).items():
        path = specs / file
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{file}: the edit no longer applies"
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return specs


@pytest.fixture(scope="module")
def main_catalog(tmp_path_factory: pytest.TempPathFactory) -> engine.Catalog:
    return engine.Catalog(tables_of(_copy(tmp_path_factory.mktemp("main"), "main")).tables)


@pytest.fixture(scope="module")
def seed_catalog(tmp_path_factory: pytest.TempPathFactory) -> engine.Catalog:
    return engine.Catalog(tables_of(_copy(tmp_path_factory.mktemp("seed"), "seed")).tables)


def block(slots: int, element: str = "bf16", dfb: int = 0) -> engine.KernelDescription:
    op = engine.TileOp("norm", "tile_test_residency", (engine.DfbOperand(dfb),), attrs={"num_tiles": str(slots)})
    return engine.KernelDescription({dfb: element}, (op,))


def plan_of(result: engine.Plan | engine.ResolveFailure) -> engine.Plan:
    assert isinstance(result, engine.Plan), result.format()
    return result


def message_of(result: engine.Plan | engine.ResolveFailure) -> str:
    assert isinstance(result, engine.ResolveFailure), result
    return "\n".join(e.message for e in result.errors)


def _targets(catalog: engine.Catalog) -> Iterator[engine.TargetEnvironment]:
    for name in catalog.target_names():
        try:
            yield catalog.get_target(name)
        except engine.TargetError:
            continue  # rejected


# ----------------------------------------------------------------- generations as data


def test_every_target_follows_a_generation_the_vocabulary_declares() -> None:
    declared = {g.name: g for g in tables().tables.generations}
    assert declared, "the vocabulary declares resolver generations"
    for target in _targets(engine.Catalog(tables().tables)):
        assert declared[target.table.generation.name] == target.table.generation, target.name


def test_the_shipped_specs_generate_both_generations() -> None:
    followed = {t.table.generation.policy_values for t in _targets(engine.Catalog(tables().tables))}
    assert followed == set(engine.PolicyValues), "a shipped target follows each generation"


@pytest.mark.parametrize("generation", ["seed", "main"])
def test_a_generation_is_switched_by_editing_a_target_spec(tmp_path: Path, generation: str) -> None:
    catalog = engine.Catalog(tables_of(_copy(tmp_path, generation)).tables)
    for target in _targets(catalog):
        assert target.table.generation.name == generation


def test_a_target_naming_an_unknown_generation_is_a_located_error(spec_copy: Path) -> None:
    path = spec_copy / "targets" / "blackhole.yaml"
    path.write_text(path.read_text().replace("generation: seed", "generation: mian"))
    result = run_cli("validate", "--specs", spec_copy)
    assert result.exit_code == 2
    assert "specs/targets/blackhole.yaml:" in result.stderr and "unknown resolver generation 'mian'" in result.stderr
    assert "did you mean 'main'?" in result.stderr


def test_a_generation_naming_architectures_needs_their_display_name(tmp_path: Path) -> None:
    specs = _copy(tmp_path, "main", {"targets/architectures/blackhole.yaml": ("display_name: Blackhole\n", "")})
    result = run_cli("validate", "--specs", specs)
    assert result.exit_code == 2, result.stderr
    assert "states no display_name" in result.stderr and "specs/targets/blackhole.yaml:" in result.stderr


# ----------------------------------------------------------------------- typed policy


def test_a_string_boolean_attribute_is_an_error_only_where_policy_values_are_typed() -> None:
    catalog = engine.Catalog(tables().tables)
    k = engine.KernelDescription({0: "bf16"}, (engine.TileOp("c", "copy_tile", (engine.DfbOperand(0),)),))
    for target in _targets(catalog):
        result = catalog.resolve_kernel(k, target=target.name, attributes={"fp32_dest_acc_en": "true"})
        if target.table.generation.policy_values is engine.PolicyValues.TYPED:
            # policy_options_invalid.mlir@610d7b5e: the attribute must have its type.
            assert message_of(result) == "fp32_dest_acc_en must be a boolean attribute", target.name
        else:
            assert plan_of(result).fp32_dest_acc_en, target.name  # coerced, as the seed design reads it


def test_typed_policy_checks_every_attribute(main_catalog: engine.Catalog) -> None:
    k = engine.KernelDescription({0: "bf16"}, (engine.TileOp("c", "copy_tile", (engine.DfbOperand(0),)),))
    for name in ("dst_full_sync_en", "ttl.enable_fpu_binary_ops"):
        result = main_catalog.resolve_kernel(k, target="blackhole", attributes={name: 1})
        assert message_of(result) == f"{name} must be a boolean attribute"
    result = main_catalog.resolve_kernel(k, target="blackhole", attributes={"ttl.unpack_to_dest_fp32": "0"})
    assert message_of(result) == "ttl.unpack_to_dest_fp32 must be a dense i32 array attribute"
    assert plan_of(main_catalog.resolve_kernel(k, target="blackhole", attributes={"fp32_dest_acc_en": True})).fp32_dest_acc_en


# ---------------------------------------------------------- capacity-named range texts


@pytest.mark.parametrize(
    ("target", "text"),
    [
        # set_compute_kernel_config_invalid.mlir@f106b81b and TargetInfo.h (#893).
        ("blackhole", "[0, 63] for the 64-DFB-index Blackhole target capacity"),
        ("wormhole_b0", "[0, 31] for the 32-DFB-index Wormhole B0 target capacity"),
        (None, "[0, 31] for the conservative 32-DFB-index capacity used when target metadata is absent"),
    ],
)
def test_main_line_range_diagnostics_name_the_capacity(main_catalog: engine.Catalog, target: str | None, text: str) -> None:
    capacity = main_catalog.get_target(target).dfb_capacity
    k = engine.KernelDescription({capacity: "bf16"}, (engine.TileOp("c", "copy_tile", (engine.DfbOperand(capacity),)),))
    assert message_of(main_catalog.resolve_kernel(k, target=target)) == f"uses dataflow buffer index {capacity} outside the supported range {text}"
    ok = engine.KernelDescription({0: "bf16"}, (engine.TileOp("c", "copy_tile", (engine.DfbOperand(0),)),))
    result = main_catalog.resolve_kernel(ok, target=target, attributes={"ttl.unpack_to_dest_fp32": [capacity + 5]})
    assert message_of(result) == f"ttl.unpack_to_dest_fp32 must contain dataflow buffer indices in range {text}"


def test_seed_range_diagnostics_give_the_range_alone(seed_catalog: engine.Catalog) -> None:
    for target in _targets(seed_catalog):
        capacity = target.dfb_capacity
        k = engine.KernelDescription({capacity: "bf16"}, (engine.TileOp("c", "copy_tile", (engine.DfbOperand(capacity),)),))
        assert message_of(engine.resolve(k, target)) == f"uses dataflow buffer index {capacity} outside the supported range [0, {capacity - 1}]"


def test_the_capacity_description_comes_from_the_generation_spec(tmp_path: Path) -> None:
    specs = _copy(tmp_path, "main", {"ops/vocabulary.yaml": ("the {capacity}-DFB-index {target} target capacity", "{target}'s {capacity} indices")})
    catalog = engine.Catalog(tables_of(specs).tables)
    assert catalog.get_target("blackhole").table.dfb_capacity_description == "Blackhole's 64 indices"


# ------------------------------------------------------------------- DST residency


def test_residency_that_fits_double_buffering_keeps_it(main_catalog: engine.Catalog) -> None:
    dst = main_catalog.tables.dst_capacity
    assert dst is not None
    fits = dst.tiles(engine.DestWidth.BITS16, engine.SyncMode.DOUBLE_BUFFERED)
    plan = plan_of(main_catalog.resolve_kernel(block(fits), target="blackhole"))
    assert plan.sync is engine.SyncMode.DOUBLE_BUFFERED and plan.dest_width is engine.DestWidth.BITS16


def test_residency_beyond_double_buffering_selects_full_sync(main_catalog: engine.Catalog) -> None:
    dst = main_catalog.tables.dst_capacity
    assert dst is not None
    slots = dst.tiles(engine.DestWidth.BITS16, engine.SyncMode.DOUBLE_BUFFERED) + 1
    assert plan_of(main_catalog.resolve_kernel(block(slots), target="blackhole")).sync is engine.SyncMode.FULL


def test_five_f32_dst_slots_force_full_sync(main_catalog: engine.Catalog) -> None:
    # row_normalization_capacity.mlir@742fa970.
    plan = plan_of(main_catalog.resolve_kernel(block(5, "f32"), target="blackhole"))
    assert plan.dest_width is engine.DestWidth.BITS32 and plan.dst_full_sync_en


def test_no_sync_mode_holding_the_residency_is_upstreams_capacity_error(main_catalog: engine.Catalog) -> None:
    # row_normalization_capacity_invalid.mlir@29909181: fp32 enabled, sync disabled, 5 slots.
    result = main_catalog.resolve_kernel(
        block(5),
        target="blackhole",
        options={"fp32-dest-acc-en": "enabled", "dst-full-sync-en": "disabled"},
    )
    assert isinstance(result, engine.ResolveFailure)
    assert result.errors[0].op == "norm"
    assert result.errors[0].message == "requires 5 simultaneous DST slots, but at most 4 are available under the kernel configuration"
    # Typed evidence: the residency, against the policy that fixed the width.
    assert result.conflict is not None
    assert result.conflict.requirement.source is engine.Source.DST_RESIDENCY
    assert result.conflict.established_by is not None and result.conflict.established_by.source is engine.Source.DEST_POLICY


def test_the_capacity_error_names_the_most_any_configuration_holds(main_catalog: engine.Catalog) -> None:
    dst = main_catalog.tables.dst_capacity
    assert dst is not None
    most = dst.tiles(engine.DestWidth.BITS16, engine.SyncMode.FULL)
    assert message_of(main_catalog.resolve_kernel(block(most + 1), target="blackhole")) == (
        f"requires {most + 1} simultaneous DST slots, but at most {most} are available under the kernel configuration"
    )
    double = dst.tiles(engine.DestWidth.BITS16, engine.SyncMode.DOUBLE_BUFFERED)
    result = main_catalog.resolve_kernel(block(double + 1), target="blackhole", options={"dst-full-sync-en": "disabled"})
    assert message_of(result) == f"requires {double + 1} simultaneous DST slots, but at most {double} are available under the kernel configuration"


def test_a_zero_slot_residency_is_upstreams_error(main_catalog: engine.Catalog) -> None:
    assert message_of(main_catalog.resolve_kernel(block(0), target="blackhole")) == "defines a zero-slot DST residency requirement"


def test_a_slot_count_that_is_no_integer_is_an_error(main_catalog: engine.Catalog) -> None:
    op = engine.TileOp("norm", "tile_test_residency", (engine.DfbOperand(0),), attrs={"num_tiles": "many"})
    assert "must be the number of DST slots" in message_of(main_catalog.resolve_kernel(engine.KernelDescription({0: "bf16"}, (op,)), target="blackhole"))


def test_the_seed_generation_does_not_check_residency(seed_catalog: engine.Catalog) -> None:
    plan = plan_of(seed_catalog.resolve_kernel(block(40), target="blackhole"))
    assert plan.sync is engine.SyncMode.DOUBLE_BUFFERED


def test_the_dst_register_is_the_vocabularys(tmp_path: Path) -> None:
    specs = _copy(tmp_path, "main", {"ops/vocabulary.yaml": ("physical_tiles: 16", "physical_tiles: 32")})
    catalog = engine.Catalog(tables_of(specs).tables)
    # 16 bf16 tiles now fit double buffering (32 halved once).
    assert plan_of(catalog.resolve_kernel(block(16), target="blackhole")).sync is engine.SyncMode.DOUBLE_BUFFERED


def test_the_halving_rules_are_the_vocabularys() -> None:
    dst = tables().tables.dst_capacity
    assert dst is not None
    # §2.3: 16 physical tiles, halved for double buffering, halved again for 32-bit elements.
    w16, w32 = engine.DestWidth.BITS16, engine.DestWidth.BITS32
    full, double = engine.SyncMode.FULL, engine.SyncMode.DOUBLE_BUFFERED
    assert (dst.tiles(w16, full), dst.tiles(w16, double), dst.tiles(w32, full), dst.tiles(w32, double)) == (16, 8, 8, 4)


# --------------------------------------------------------------- capacities agree


def test_an_architecture_with_more_indices_than_its_runtime_holds_is_a_located_error(spec_copy: Path, tmp_path: Path) -> None:
    path = spec_copy / "targets" / "architectures" / "blackhole.yaml"
    path.write_text(path.read_text().replace("dfb_capacity: 64", "dfb_capacity: 128"))
    for command in ("validate", "build"):
        args = ("--out", tmp_path / "out") if command == "build" else ()
        result = run_cli(command, "--specs", spec_copy, *args)
        assert result.exit_code == 2, result.stderr
        assert "specs/targets/architectures/blackhole.yaml:" in result.stderr
        assert "128 dataflow-buffer indices" in result.stderr and "64 circular buffers" in result.stderr
    description = tmp_path / "k.yaml"
    description.write_text("target: blackhole\ndfbs: {100: f32}\nops:\n  - {id: e, op: tile_exp, operands: [{dfb: 100}]}\n")
    assert run_cli("resolve", description, "--specs", spec_copy).exit_code == 2


# ----------------------------------------------------------------- indexing maps


@functools.cache
def _catalog() -> engine.Catalog:
    return engine.Catalog(tables().tables)


def _add(lhs: str, rhs: str) -> engine.Plan:
    op = engine.TileOp("s", "tile_add", (engine.DfbOperand(0, map=lhs), engine.DfbOperand(1, map=rhs)))
    return plan_of(_catalog().resolve_kernel(engine.KernelDescription({0: "bf16", 1: "bf16"}, (op,))))


def test_operands_with_equal_maps_address_the_same_tile_and_may_use_the_fpu() -> None:
    assert _add("(row, col) -> (row, col)", "(d0, d1) -> (d0, d1)").strategies == (("s", "fpu"),)


def test_operands_with_different_maps_do_not_and_use_the_sfpu() -> None:
    assert _add("(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0, 0)").strategies == (("s", "sfpu"),)


def test_maps_compare_up_to_dimension_names_and_spacing() -> None:
    assert engine.canonical_map("(row,col)->(row, col + 1)") == "(d0, d1) -> (d0, d1+1)"
    with pytest.raises(ValueError, match="not a dimension"):
        engine.canonical_map("(d0, d1) -> (d2, d0)")


def test_a_description_states_operand_maps(tmp_path: Path) -> None:
    path = tmp_path / "k.yaml"
    path.write_text(
        "target: wormhole_b0\ndfbs: {0: bf16, 1: bf16}\nops:\n"
        "  - {id: s, op: tile_add, operands: [{dfb: 0, map: '(i, j) -> (i, j)'}, {dfb: 1, map: '(i, j) -> (0, j)'}]}\n"
    )
    result = run_cli("resolve", path, "--specs", SPECS)
    assert result.exit_code == 0, result.stderr
    assert "op 's': ttl.tile_execution_strategy = sfpu" in result.stdout
    path.write_text("dfbs: {0: bf16}\nops:\n  - {id: s, op: tile_exp, operands: [{dfb: 0, map: '(i) -> (k)'}]}\n")
    result = run_cli("resolve", path, "--specs", SPECS)
    assert result.exit_code == 2 and "k.yaml:3:52: ops[0].operands[0].map:" in result.stderr and "not a dimension" in result.stderr


def test_a_description_gives_an_ops_dst_slots_as_an_integer_attribute(tmp_path: Path) -> None:
    specs = _copy(tmp_path, "main")
    path = tmp_path / "k.yaml"
    path.write_text("target: blackhole\ndfbs: {0: bf16}\nops:\n  - {id: n, op: tile_test_residency, operands: [{dfb: 0}], attrs: {num_tiles: 9}}\n")
    result = run_cli("resolve", path, "--specs", specs)
    assert result.exit_code == 0, result.stderr
    assert "dst_full_sync_en = true" in result.stdout
    path.write_text("target: blackhole\ndfbs: {0: bf16}\nops:\n  - {id: n, op: tile_test_residency, operands: [{dfb: 0}], attrs: {num_tiles: 17}}\n")
    result = run_cli("resolve", path, "--specs", specs)
    assert result.exit_code == 1
    assert result.stderr == "k.yaml:4:5: op 'n': error: requires 17 simultaneous DST slots, but at most 16 are available under the kernel configuration\n"


def test_the_main_line_keeps_the_16_bit_broadcast_restriction(main_catalog: engine.Catalog) -> None:
    # broadcast_dst_mode_invalid.mlir@610d7b5e: only a branch of TT-Lang lifts it.
    for target in _targets(main_catalog):
        if target.architecture is None:
            continue
        for primitive in ("BroadcastColumn", "BroadcastRow", "BroadcastScalar"):
            assert target.dest_widths(primitive, "bf16") == {engine.DestWidth.BITS16}, (target.name, primitive)
