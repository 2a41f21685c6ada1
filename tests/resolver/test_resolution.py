"""Joint resolution: strategies, DST width, unpack set, sync, preferences."""

from __future__ import annotations

from tests.resolver.kit import dfb, engine, failure_of, kernel, plan_of, resolve, strategies, val


def test_fixed_sfpu_consumer_forces_sfpu_on_binary_sharing_its_f32_buffer() -> None:
    k = kernel({0: "f32", 1: "f32"}, ("sum", "tile_add", [dfb(0), dfb(1)]), ("e", "tile_exp", [dfb(0)]))
    for target in (None, "wormhole_b0", "blackhole"):
        plan = plan_of(resolve(k, target))
        assert strategies(plan) == {"sum": "sfpu"}
        assert plan.unpack_to_dest_fp32 == (0, 1)
        assert plan.fp32_dest_acc_en


def test_eligible_binary_prefers_fpu() -> None:
    plan = plan_of(resolve(kernel({0: "bf16", 1: "bf16"}, ("s", "tile_mul", [dfb(0), dfb(1)]))))
    assert strategies(plan) == {"s": "fpu"}
    assert not plan.fp32_dest_acc_en
    assert plan.unpack_to_dest_fp32 == ()


def test_f32_fpu_binary_reads_default_unpack_with_32bit_dest() -> None:
    plan = plan_of(resolve(kernel({0: "f32", 1: "f32"}, ("s", "tile_sub", [dfb(0), dfb(1)]))))
    assert strategies(plan) == {"s": "fpu"}
    assert plan.fp32_dest_acc_en
    assert plan.unpack_to_dest_fp32 == ()


def test_fpu_needs_same_tile_coordinates() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("s", "tile_add", [dfb(0, (0, 0)), dfb(1, (0, 1))]))
    assert strategies(plan_of(resolve(k))) == {"s": "sfpu"}


def test_fpu_needs_both_operands_from_dataflow_buffers() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]), ("s", "tile_add", [val("c"), dfb(0)]))
    assert strategies(plan_of(resolve(k))) == {"s": "sfpu"}


def test_fpu_needs_a_float_result() -> None:
    k = kernel({0: "si32", 1: "si32"}, ("s", "tile_add", [dfb(0), dfb(1)]))
    plan = plan_of(resolve(k))
    assert strategies(plan) == {"s": "sfpu"}
    assert plan.fp32_dest_acc_en, "32-bit integer results need 32-bit DST"


def test_plan_lists_strategy_for_ops_with_alternatives_even_if_one_is_legal() -> None:
    k = kernel(
        {0: "bf16", 1: "bf16"},
        ("a", "tile_add", [dfb(0), dfb(1, (1, 0))]),
        ("m", "tile_max", [dfb(0), dfb(1)]),
        ("e", "tile_exp", [val("a")]),
    )
    assert strategies(plan_of(resolve(k))) == {"a": "sfpu"}


def test_disabled_fpu_binary_option_selects_sfpu() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("s", "tile_add", [dfb(0), dfb(1)]))
    assert strategies(plan_of(resolve(k, options={"enable-fpu-binary-ops": False}))) == {"s": "sfpu"}


def test_fpu_binary_attribute_overrides_option() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("s", "tile_add", [dfb(0), dfb(1)]))
    result = resolve(k, options={"enable-fpu-binary-ops": True}, attributes={"ttl.enable_fpu_binary_ops": False})
    assert strategies(plan_of(result)) == {"s": "sfpu"}


def test_explicit_sfpu_strategy_is_kept() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("s", "tile_add", [dfb(0), dfb(1)], {"strategy": "sfpu"}))
    assert strategies(plan_of(resolve(k))) == {"s": "sfpu"}


def test_explicit_fpu_strategy_can_make_kernel_unresolvable() -> None:
    k = kernel({0: "f32", 1: "f32"}, ("s", "tile_add", [dfb(0), dfb(1)], {"strategy": "fpu"}), ("e", "tile_exp", [dfb(0)]))
    failure = failure_of(resolve(k))
    assert failure.errors[0].message == "dataflow buffer 0 requires incompatible unpack modes in one kernel"


def test_ops_with_alternatives_are_decided_together_through_shared_buffers() -> None:
    # b shares f32 buffer 1 with a; the exp on buffer 2 forces c to SFPU, which forces
    # unpack-to-DST on buffer 1 and so SFPU for a and b as well.
    k = kernel(
        {0: "f32", 1: "f32", 2: "f32", 3: "bf16", 4: "bf16"},
        ("a", "tile_add", [dfb(0), dfb(1)]),
        ("b", "tile_mul", [dfb(1), dfb(3)]),
        ("c", "tile_sub", [dfb(1), dfb(2)]),
        ("d", "tile_add", [dfb(3), dfb(4)]),
        ("e", "tile_exp", [dfb(2)]),
    )
    plan = plan_of(resolve(k))
    assert strategies(plan) == {"a": "sfpu", "b": "sfpu", "c": "sfpu", "d": "fpu"}
    assert plan.unpack_to_dest_fp32 == (0, 1, 2)


def test_width_is_16_unless_required_or_preferred() -> None:
    assert not plan_of(resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)])))).fp32_dest_acc_en
    assert plan_of(resolve(kernel({0: "f32"}, ("c", "copy_tile", [dfb(0)])))).fp32_dest_acc_en


def test_fp32_dest_acc_enabled_selects_32bit() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    assert plan_of(resolve(k, options={"fp32-dest-acc-en": "enabled"})).fp32_dest_acc_en
    assert plan_of(resolve(k, attributes={"fp32_dest_acc_en": True})).fp32_dest_acc_en
    assert not plan_of(resolve(k, options={"fp32-dest-acc-en": "enabled"}, attributes={"fp32_dest_acc_en": False})).fp32_dest_acc_en


def test_tri_state_accepts_true_false_one_zero() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    for value in (True, "true", 1, "1", "enabled", "ENABLED"):
        assert plan_of(resolve(k, options={"fp32-dest-acc-en": value})).fp32_dest_acc_en, value
    for value in (False, "false", 0, "0", "disabled", "auto"):
        assert not plan_of(resolve(k, options={"fp32-dest-acc-en": value})).fp32_dest_acc_en, value


def test_sync_is_full_only_when_enabled() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    assert plan_of(resolve(k, options={"dst-full-sync-en": "enabled"})).dst_full_sync_en
    assert not plan_of(resolve(k, options={"dst-full-sync-en": "auto"})).dst_full_sync_en
    assert not plan_of(resolve(k, options={"dst-full-sync-en": "disabled"})).dst_full_sync_en
    assert plan_of(resolve(k, attributes={"dst_full_sync_en": True})).dst_full_sync_en
    assert plan_of(resolve(k)).sync is engine.SyncMode.DOUBLE_BUFFERED


def test_explicit_unpack_set_is_sorted_and_deduplicated() -> None:
    k = kernel({0: "f32", 3: "f32"}, ("a", "copy_tile", [dfb(0)]), ("b", "copy_tile", [dfb(3)]))
    plan = plan_of(resolve(k, attributes={"ttl.unpack_to_dest_fp32": [3, 0, 3]}))
    assert plan.unpack_to_dest_fp32 == (0, 3)


def test_explicit_unpack_entries_for_non_f32_buffers_are_inert_and_kept() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("s", "tile_add", [dfb(0), dfb(1)]))
    plan = plan_of(resolve(k, target="blackhole", attributes={"ttl.unpack_to_dest_fp32": [1]}))
    assert plan.unpack_to_dest_fp32 == (1,)
    assert strategies(plan) == {"s": "fpu"}
    assert not plan.fp32_dest_acc_en


def test_explicit_unpack_set_steers_the_binary_strategy() -> None:
    k = kernel({0: "f32", 1: "f32"}, ("s", "tile_add", [dfb(0), dfb(1)]))
    assert strategies(plan_of(resolve(k, attributes={"ttl.unpack_to_dest_fp32": [0, 1]}))) == {"s": "sfpu"}
    assert strategies(plan_of(resolve(k, attributes={"ttl.unpack_to_dest_fp32": []}))) == {"s": "fpu"}


def test_reduce_preference_selects_32bit_when_supported() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("r", "tile_reduce", [dfb(0), dfb(1)], {"reduce_dim": "col"}))
    plan = plan_of(resolve(k, "blackhole"))
    assert plan.fp32_dest_acc_en and plan.warnings == ()
    assert not plan_of(resolve(k, "blackhole", options={"reduce-full-fp32": False})).fp32_dest_acc_en


def test_matmul_preference_selects_32bit_on_wormhole() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("m", "tile_matmul_block", [dfb(0), dfb(1)]))
    assert plan_of(resolve(k, "wormhole_b0")).fp32_dest_acc_en
    assert not plan_of(resolve(k, "wormhole_b0", options={"matmul-full-fp32": "false"})).fp32_dest_acc_en


def test_preference_never_empties_a_domain_and_warns() -> None:
    k = kernel(
        {0: "bf16", 1: "bf16"},
        ("m", "tile_matmul_block", [dfb(0), dfb(1)]),
        ("b", "tile_bcast", [dfb(0)], {"bcast": "row"}),
    )
    plan = plan_of(resolve(k, "blackhole"))
    assert not plan.fp32_dest_acc_en
    assert [(w.op, w.message) for w in plan.warnings] == [
        ("m", "preferred full-fp32 accumulation is unavailable in the resolved kernel configuration; using non-full-fp32 lowering")
    ]


def test_unmet_preference_does_not_warn_when_fp32_is_explicitly_disabled() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("m", "tile_matmul_block", [dfb(0), dfb(1)]))
    plan = plan_of(resolve(k, "blackhole", options={"fp32-dest-acc-en": "disabled"}))
    assert not plan.fp32_dest_acc_en and plan.warnings == ()


def test_resolution_is_independent_of_tile_coordinates_for_fixed_ops() -> None:
    a = kernel({0: "f32"}, ("c", "copy_tile", [dfb(0, (0, 0))]))
    b = kernel({0: "f32"}, ("c", "copy_tile", [dfb(0, (3, 7))]))
    assert plan_of(resolve(a)).to_json() == plan_of(resolve(b)).to_json()
