"""Target environments: every query difference, lookup, rejection, architecture discovery."""

from __future__ import annotations

import pytest

from tests.conftest import real_project
from tests.resolver.kit import catalog, dfb, engine, failure_of, kernel, plan_of, resolve, tables


def test_dest_width_query_broadcast_difference() -> None:
    bf16, f32 = tables().element_type.BF16, tables().element_type.F32
    only16, both, only32 = frozenset({engine.DestWidth.BITS16}), frozenset(engine.DestWidth), frozenset({engine.DestWidth.BITS32})
    for name in ("wormhole_b0", "blackhole", "blackhole_gen1_config"):
        env = catalog().get_target(name)
        for bcast in (tables().primitive.BroadcastColumn, tables().primitive.BroadcastRow, tables().primitive.BroadcastScalar):
            assert env.dest_widths(bcast, bf16) == only16
            assert env.dest_widths(bcast, f32) == only32
        assert env.dest_widths(tables().primitive.ElementwiseUnary, bf16) == both
    env = catalog().get_target(None)
    assert env.dest_widths(tables().primitive.BroadcastColumn, bf16) == both
    assert env.dest_widths(tables().primitive.Copy, tables().element_type.SI32) == only32


def test_dfb_relation_shared_by_gen1_targets() -> None:
    unpack32 = frozenset({(engine.DestWidth.BITS32, engine.UnpackMode.UNPACK_TO_DEST)})
    default = frozenset({(engine.DestWidth.BITS16, engine.UnpackMode.DEFAULT), (engine.DestWidth.BITS32, engine.UnpackMode.DEFAULT)})
    for name in (None, "wormhole_b0", "blackhole"):
        env = catalog().get_target(name)
        f32 = tables().element_type.F32
        assert env.dfb_configurations(tables().primitive.ElementwiseUnary, f32, engine.Route.DST) == unpack32
        assert env.dfb_configurations(tables().primitive.Copy, f32, engine.Route.DFB) == unpack32
        assert env.dfb_configurations(tables().primitive.ElementwiseBinary, f32, engine.Route.DFB) == default
        assert env.dfb_configurations(tables().primitive.ElementwiseUnary, tables().element_type.BF16, engine.Route.DST) == default


def test_full_fp32_support_per_target() -> None:
    kinds = tables().full_fp32_kind
    wh, bh, none = catalog().get_target("wormhole_b0"), catalog().get_target("blackhole"), catalog().get_target(None)
    assert [wh.full_fp32(k).supported for k in kinds] == [k is kinds.MATMUL for k in kinds]
    assert all(wh.full_fp32(k).warning is None for k in kinds)
    assert [bh.full_fp32(k).supported for k in kinds] == [k is not kinds.REDUCE_ROW for k in kinds]
    assert "Blackhole" in (bh.full_fp32(kinds.REDUCE_ROW).warning or "")
    assert all(none.full_fp32(k).supported for k in kinds)


def test_wormhole_reduce_preference_is_silently_unsupported() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("r", "tile_reduce", [dfb(0), dfb(1)], {"reduce_dim": "col"}))
    plan = plan_of(resolve(k, "wormhole_b0"))
    assert not plan.fp32_dest_acc_en and plan.warnings == ()


def test_blackhole_row_reduce_preference_warns() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("r", "tile_reduce", [dfb(0), dfb(1)], {"reduce_dim": "row"}))
    plan = plan_of(resolve(k, "blackhole"))
    assert not plan.fp32_dest_acc_en
    assert [w.op for w in plan.warnings] == ["r"]
    assert plan_of(resolve(k, None)).fp32_dest_acc_en, "the test environment supports every kind"


def test_no_target_has_no_broadcast_restriction() -> None:
    k = kernel({0: "bf16", 1: "f32"}, ("b", "tile_bcast", [dfb(0)], {"bcast": "col"}), ("e", "tile_exp", [dfb(1)]))
    assert plan_of(resolve(k)).fp32_dest_acc_en
    failure_of(resolve(k, "wormhole_b0"))
    failure_of(resolve(k, "blackhole"))


def test_dfb_capacity_per_target() -> None:
    assert [catalog().get_target(n).dfb_capacity for n in (None, "wormhole_b0", "blackhole")] == [32, 32, 64]


def test_a_rejected_architecture_has_a_dfb_capacity() -> None:
    assert catalog().dfb_capacity("quasar") == catalog().dfb_capacity("QUASAR") == 32


def test_quasar_is_recognized_and_rejected_with_reason() -> None:
    with pytest.raises(engine.TargetError, match="Gen2 configuration and launch APIs"):
        catalog().get_target("quasar")
    assert catalog().architecture_from_runtime_name("QUASAR") is tables().architecture.QUASAR


def test_selecting_a_rejected_architecture_fails_with_its_reason_alone() -> None:
    # TT-Lang's KernelTargetEnvironment::get prints the reason as it is.
    (reason,) = (r.reason for r in tables().tables.rejected if r.architecture == "quasar")
    result = resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)])), device_arch="quasar")
    assert failure_of(result).errors[0].message == reason


def test_selecting_an_unknown_architecture_fails_with_tt_langs_text() -> None:
    with pytest.raises(engine.TargetError) as raised:
        catalog().select_target(None, "grayskull")
    assert raised.value.message == "compute-kernel configuration is not implemented for target architecture grayskull"


def test_an_architecture_is_selected_by_upstreams_spellings_only() -> None:
    # TTCore's name (blackhole) and tt-metal's runtime name (BLACKHOLE); no other case.
    assert catalog().select_target(None, "blackhole").name == catalog().select_target(None, "BLACKHOLE").name == "blackhole"
    with pytest.raises(engine.TargetError, match=r"not implemented for target architecture Blackhole$"):
        catalog().select_target(None, "Blackhole")


def test_unknown_target_is_an_error_naming_it() -> None:
    with pytest.raises(engine.TargetError, match="compute-kernel configuration is not implemented for target architecture 'grayskull'"):
        catalog().get_target("grayskull")


def test_target_and_device_must_agree() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    result = resolve(k, "blackhole", device_arch="wormhole_b0")
    assert failure_of(result).errors[0].message == "ttl.target_arch does not match the selected device arch (target architecture 'blackhole', device architecture 'wormhole_b0')"
    assert failure_of(result).errors[0].op is None
    assert plan_of(resolve(k, "blackhole", device_arch="BLACKHOLE")).target == "blackhole"
    assert plan_of(resolve(k, "blackhole_gen1_config", device_arch="blackhole")).target == "blackhole_gen1_config"


def test_device_alone_selects_the_architecture_default_target() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    assert plan_of(resolve(k, device_arch="wormhole_b0")).target == "wormhole_b0"
    assert plan_of(resolve(k)).target == "no_target"


def test_runtime_architecture_names_map_as_the_runtime_spells_them() -> None:
    # tt-metal's enumerator, and the lower-case device name TT-Lang's runtime maps.
    assert catalog().architecture_from_runtime_name("WORMHOLE_B0") is tables().architecture.WORMHOLE_B0
    assert catalog().architecture_from_runtime_name("blackhole") is tables().architecture.BLACKHOLE


def test_a_runtime_name_in_another_case_is_unknown() -> None:
    with pytest.raises(engine.TargetError, match="unknown runtime architecture 'Blackhole'"):
        catalog().architecture_from_runtime_name("Blackhole")


def test_unknown_runtime_architecture_fails() -> None:
    with pytest.raises(engine.TargetError, match="unknown runtime architecture 'GRAYSKULL'"):
        catalog().architecture_from_runtime_name("GRAYSKULL")


def test_gen1_config_target_rejects_inert_entries_with_16bit_dest() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("s", "tile_add", [dfb(0), dfb(1)]))
    assert plan_of(resolve(k, "blackhole", attributes={"ttl.unpack_to_dest_fp32": [1]})).unpack_to_dest_fp32 == (1,)
    plan = plan_of(resolve(k, "blackhole_gen1_config", attributes={"ttl.unpack_to_dest_fp32": [1]}))
    assert plan.fp32_dest_acc_en, "the entry needs 32-bit DST under ComputeGen1Config"
    result = resolve(k, "blackhole_gen1_config", attributes={"ttl.unpack_to_dest_fp32": [1], "fp32_dest_acc_en": False})
    assert "explicitly disabled" in failure_of(result).errors[0].message


def test_gen1_config_target_rejects_unbound_entries() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    assert plan_of(resolve(k, "blackhole", attributes={"ttl.unpack_to_dest_fp32": [7]})).unpack_to_dest_fp32 == (7,)
    result = resolve(k, "blackhole_gen1_config", attributes={"ttl.unpack_to_dest_fp32": [7]})
    assert "does not bind" in failure_of(result).errors[0].message


def test_target_lookup_is_the_registry() -> None:
    # The generated registry holds every target of the specs, the rejected ones too.
    declared = real_project().targets.targets
    assert catalog().target_names() == tuple(sorted(t.name for t in declared))
    for target in declared:
        if target.rejected is None:
            assert catalog().get_target(target.name).table is next(t for t in tables().tables.targets if t.name == target.name)


def test_each_target_answers_from_its_own_table_only() -> None:
    # wormhole_b0 and blackhole share the Gen1 relation tables by review, but each
    # target keeps its own answers: their full-fp32 support differs.
    wh, bh = catalog().get_target("wormhole_b0"), catalog().get_target("blackhole")
    assert wh.table.dest_width.origin == bh.table.dest_width.origin == "gen1_llk.dest_width"
    assert wh.table.dest_width.review != bh.table.dest_width.review
    assert wh.full_fp32("reduce_column").supported is False
    assert bh.full_fp32("reduce_column").supported is True


def test_an_undeclared_type_is_an_element_of_its_bit_width() -> None:
    blackhole = catalog().get_target("blackhole")
    i32, ui8 = engine.undeclared_element(32, False), engine.undeclared_element(8, False)
    assert blackhole.dest_widths_of("ElementwiseUnary", i32) == {engine.DestWidth.BITS32}
    assert blackhole.dest_widths_of("BroadcastRow", ui8) == {engine.DestWidth.BITS16}


def test_an_undeclared_32_bit_type_does_not_unpack_to_dst_as_f32_does() -> None:
    blackhole = catalog().get_target("blackhole")
    modes = {m for _, m in blackhole.dfb_configurations_of("ElementwiseUnary", engine.undeclared_element(32, True), engine.Route.DST)}
    assert modes == {engine.UnpackMode.DEFAULT}
