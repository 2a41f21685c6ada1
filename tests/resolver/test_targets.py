"""Target environments: every query difference, lookup, rejection, architecture discovery."""

from __future__ import annotations

import pytest

from tests.resolver.kit import dfb, failure_of, generated, kernel, plan_of, resolve


def test_dest_width_query_broadcast_difference() -> None:
    kc = generated()
    bf16, f32 = kc.ElementType.BF16, kc.ElementType.F32
    only16, both, only32 = frozenset({kc.DestWidth.BITS16}), frozenset(kc.DestWidth), frozenset({kc.DestWidth.BITS32})
    for name in ("wormhole_b0", "blackhole", "blackhole_gen1_config"):
        env = kc.get_target(name)
        for bcast in (kc.Primitive.BroadcastColumn, kc.Primitive.BroadcastRow, kc.Primitive.BroadcastScalar):
            assert env.dest_widths(bcast, bf16) == only16
            assert env.dest_widths(bcast, f32) == only32
        assert env.dest_widths(kc.Primitive.ElementwiseUnary, bf16) == both
    env = kc.get_target(None)
    assert env.dest_widths(kc.Primitive.BroadcastColumn, bf16) == both
    assert env.dest_widths(kc.Primitive.Copy, kc.ElementType.SI32) == only32


def test_dfb_relation_shared_by_gen1_targets() -> None:
    kc = generated()
    unpack32 = frozenset({(kc.DestWidth.BITS32, kc.UnpackMode.UNPACK_TO_DEST)})
    default = frozenset({(kc.DestWidth.BITS16, kc.UnpackMode.DEFAULT), (kc.DestWidth.BITS32, kc.UnpackMode.DEFAULT)})
    for name in (None, "wormhole_b0", "blackhole"):
        env = kc.get_target(name)
        f32 = kc.ElementType.F32
        assert env.dfb_configurations(kc.Primitive.ElementwiseUnary, f32, kc.Route.DST) == unpack32
        assert env.dfb_configurations(kc.Primitive.Copy, f32, kc.Route.DFB) == unpack32
        assert env.dfb_configurations(kc.Primitive.ElementwiseBinary, f32, kc.Route.DFB) == default
        assert env.dfb_configurations(kc.Primitive.ElementwiseUnary, kc.ElementType.BF16, kc.Route.DST) == default


def test_full_fp32_support_per_target() -> None:
    kc = generated()
    kinds = kc.FullFp32Kind
    wh, bh, none = kc.get_target("wormhole_b0"), kc.get_target("blackhole"), kc.get_target(None)
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
    kc = generated()
    assert [kc.get_target(n).dfb_capacity for n in (None, "wormhole_b0", "blackhole")] == [32, 32, 64]


def test_quasar_is_recognized_and_rejected_with_reason() -> None:
    kc = generated()
    with pytest.raises(kc.TargetError, match="Gen2 configuration descriptor"):
        kc.get_target("quasar")
    assert kc.architecture_from_runtime_name("QUASAR") is kc.Architecture.QUASAR
    result = resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)])), device_arch="quasar")
    assert "not supported" in failure_of(result).errors[0].message


def test_unknown_target_is_an_error_naming_it() -> None:
    kc = generated()
    with pytest.raises(kc.TargetError, match="unknown target architecture 'grayskull'"):
        kc.get_target("grayskull")


def test_target_and_device_must_agree() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    result = resolve(k, "blackhole", device_arch="wormhole_b0")
    assert failure_of(result).errors[0].message == "target architecture 'blackhole' disagrees with the device architecture 'wormhole_b0'"
    assert failure_of(result).errors[0].op is None
    assert plan_of(resolve(k, "blackhole", device_arch="BLACKHOLE")).target == "blackhole"
    assert plan_of(resolve(k, "blackhole_gen1_config", device_arch="blackhole")).target == "blackhole_gen1_config"


def test_device_alone_selects_the_architecture_default_target() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    assert plan_of(resolve(k, device_arch="wormhole_b0")).target == "wormhole_b0"
    assert plan_of(resolve(k)).target == "no_target"


def test_runtime_architecture_names_map_in_any_case() -> None:
    kc = generated()
    assert kc.architecture_from_runtime_name("WORMHOLE_B0") is kc.Architecture.WORMHOLE_B0
    assert kc.architecture_from_runtime_name("blackhole") is kc.Architecture.BLACKHOLE
    assert kc.architecture_from_runtime_name("Blackhole") is kc.Architecture.BLACKHOLE


def test_unknown_runtime_architecture_fails() -> None:
    kc = generated()
    with pytest.raises(kc.TargetError, match="unknown runtime architecture 'GRAYSKULL'"):
        kc.architecture_from_runtime_name("GRAYSKULL")


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
    kc = generated()
    assert kc.target_names() == (
        "blackhole", "blackhole_gen1_config", "no_target", "quasar", "wormhole_b0", "wormhole_b0_gen1_config",
    )
    assert type(kc.get_target("wormhole_b0")) is not type(kc.get_target("blackhole"))
