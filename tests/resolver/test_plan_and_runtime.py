"""Plan construction and application, and runtime translation for both APIs."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from tests.resolver.kit import dfb, failure_of, generated, kernel, plan_of, resolve


def test_only_the_resolver_constructs_a_plan() -> None:
    kc = generated()
    with pytest.raises(TypeError, match="only by the resolver"):
        kc.Plan("blackhole", (), kc.DestWidth.BITS16, kc.SyncMode.FULL, ())


def test_plan_application_writes_attributes_and_removes_fpu_policy() -> None:
    k = kernel({0: "f32", 1: "f32"}, ("s", "tile_add", [dfb(0), dfb(1)]), ("e", "tile_exp", [dfb(0)]))
    plan = plan_of(resolve(k, attributes={"ttl.enable_fpu_binary_ops": True}))
    existing = {"ttl.enable_fpu_binary_ops": True, "sym_name": "compute"}
    assert plan.function_attributes(existing) == {
        "sym_name": "compute",
        "fp32_dest_acc_en": True,
        "dst_full_sync_en": False,
        "ttl.unpack_to_dest_fp32": [0, 1],
    }
    assert existing == {"ttl.enable_fpu_binary_ops": True, "sym_name": "compute"}, "application does not mutate its input"
    assert plan.op_attributes() == {"s": {"ttl.tile_execution_strategy": "sfpu"}}


def test_all_plans_are_built_before_any_is_applied() -> None:
    kc = generated()
    good = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    bad = kernel({0: "f32"}, ("c", "copy_tile", [dfb(0)]))
    env = kc.get_target("blackhole")
    disabled = kc.normalize_policy({"fp32-dest-acc-en": "disabled"}, {})
    result = kc.resolve_all([(good, env, kc.KernelConfigPolicy()), (bad, env, disabled)])
    assert isinstance(result, kc.ResolveFailure)
    plans = kc.resolve_all([(good, env, kc.KernelConfigPolicy()), (good, env, disabled)])
    assert isinstance(plans, tuple) and len(plans) == 2


def test_compute_config_descriptor_with_all_default_unpack_is_empty() -> None:
    kc = generated()
    plan = plan_of(resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)])), "blackhole"))
    fields = kc.to_compute_config_descriptor(plan)
    assert fields == kc.ComputeConfigDescriptorFields(kc.MathFidelity.HiFi4, False, False, ())
    assert (fields.bfp8_pack_precise, fields.math_approx_mode) == (False, False)


def test_compute_config_descriptor_unpack_list_has_num_circular_buffers_entries() -> None:
    kc = generated()
    plan = plan_of(resolve(kernel({0: "f32", 5: "f32"}, ("c", "copy_tile", [dfb(5)])), "wormhole_b0"))
    fields = kc.to_compute_config_descriptor(plan, "HiFi2")
    assert len(fields.unpack_to_dest_mode) == 64
    assert [i for i, m in enumerate(fields.unpack_to_dest_mode) if m is kc.UnpackToDestMode.UnpackToDestFp32] == [5]
    assert fields.fp32_dest_acc_en and fields.math_fidelity is kc.MathFidelity.HiFi2
    assert len(kc.to_compute_config_descriptor(plan, runtime_version="legacy").unpack_to_dest_mode) == 32


def test_runtime_enum_values() -> None:
    kc = generated()
    assert {m.name: int(m) for m in kc.UnpackToDestMode} == {"UnpackToDestFp32": 0, "Default": 1}
    assert {m.name: int(m) for m in kc.MathFidelity} == {"LoFi": 0, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}


def test_unknown_math_fidelity_is_a_translation_error() -> None:
    kc = generated()
    plan = plan_of(resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)])), "blackhole"))
    with pytest.raises(kc.TranslationError, match="HiFi5"):
        kc.to_compute_config_descriptor(plan, "HiFi5")


def test_ttnn_descriptor_assigns_whole_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    kc = generated()

    class Descriptor:
        def __init__(self) -> None:
            self.assigned: dict[str, Any] = {}

        def __setattr__(self, name: str, value: Any) -> None:
            if name != "assigned":
                self.assigned[name] = value
            object.__setattr__(self, name, value)

    fake = types.SimpleNamespace(
        ComputeConfigDescriptor=Descriptor,
        MathFidelity=types.SimpleNamespace(LoFi="lofi", HiFi2="hifi2", HiFi3="hifi3", HiFi4="hifi4"),
        UnpackToDestMode=types.SimpleNamespace(UnpackToDestFp32="fp32", Default="default"),
    )
    plan = plan_of(resolve(kernel({1: "f32"}, ("c", "copy_tile", [dfb(1)])), "blackhole"))
    fields = kc.to_compute_config_descriptor(plan)
    assert kc.to_ttnn_compute_config(fields) is fields or "ttnn" in sys.modules
    monkeypatch.setitem(sys.modules, "ttnn", fake)
    descriptor = kc.to_ttnn_compute_config(fields)
    assert isinstance(descriptor.assigned["unpack_to_dest_mode"], list)
    assert descriptor.assigned["unpack_to_dest_mode"][:3] == ["default", "fp32", "default"]
    assert descriptor.assigned["math_fidelity"] == "hifi4"
    assert descriptor.assigned["fp32_dest_acc_en"] is True


def test_compute_gen1_config_fields() -> None:
    kc = generated()
    k = kernel({0: "f32", 1: "f32", 2: "bf16"}, ("s", "tile_add", [dfb(0), dfb(1)]), ("c", "copy_tile", [dfb(2)]))
    plan = plan_of(resolve(k, "blackhole_gen1_config", options={"dst-full-sync-en": "enabled"}))
    fields = kc.to_compute_gen1_config(plan, "LoFi", dfb_names={0: "in0"})
    assert fields.enable_32_bit_dest is True
    assert fields.double_buffer_dest is False
    assert fields.fpu_math_fidelity is kc.MathFidelity.LoFi
    assert fields.unpack_modes == (("dfb1", kc.UnpackToDestMode.Default), ("in0", kc.UnpackToDestMode.Default))
    assert kc.runtime_fields(plan) == kc.to_compute_gen1_config(plan)


def test_compute_gen1_config_translation_rejects_the_other_api() -> None:
    kc = generated()
    plan = plan_of(resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)])), "blackhole"))
    with pytest.raises(kc.TranslationError, match="ComputeConfigDescriptor"):
        kc.to_compute_gen1_config(plan)


def test_no_target_has_no_runtime_translation() -> None:
    kc = generated()
    plan = plan_of(resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))))
    assert kc.runtime_fields(plan) is None
    with pytest.raises(kc.TranslationError):
        kc.to_compute_config_descriptor(plan)


def test_failure_is_not_a_plan() -> None:
    kc = generated()
    failure = failure_of(resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(9)]))))
    assert not isinstance(failure, kc.Plan)
