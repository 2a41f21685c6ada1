"""Plan construction and application, and runtime translation for both APIs."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from tests.resolver.kit import catalog, dfb, engine, failure_of, kernel, plan_of, resolve, tables


def test_only_the_resolver_constructs_a_plan() -> None:
    with pytest.raises(TypeError, match="only by the resolver"):
        engine.Plan("blackhole", (), engine.DestWidth.BITS16, engine.SyncMode.FULL, (), catalog().get_target("blackhole"))


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
    good = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    bad = kernel({0: "f32"}, ("c", "copy_tile", [dfb(0)]))
    env = catalog().get_target("blackhole")
    disabled = engine.normalize_policy({"fp32-dest-acc-en": "disabled"}, {})
    result = engine.resolve_all([(good, env, engine.KernelConfigPolicy()), (bad, env, disabled)])
    assert isinstance(result, engine.ResolveFailure)
    plans = engine.resolve_all([(good, env, engine.KernelConfigPolicy()), (good, env, disabled)])
    assert isinstance(plans, tuple) and len(plans) == 2


def test_compute_config_descriptor_with_all_default_unpack_is_empty() -> None:
    plan = plan_of(resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)])), "blackhole"))
    fields = engine.to_compute_config_descriptor(plan)
    assert fields == engine.ComputeConfigDescriptorFields(tables().tables.runtime_enums.math_fidelity.HiFi4, False, False, ())
    assert (fields.bfp8_pack_precise, fields.math_approx_mode) == (False, False)


def test_compute_config_descriptor_unpack_list_has_num_circular_buffers_entries() -> None:
    plan = plan_of(resolve(kernel({0: "f32", 5: "f32"}, ("c", "copy_tile", [dfb(5)])), "wormhole_b0"))
    fields = engine.to_compute_config_descriptor(plan, "HiFi2")
    assert len(fields.unpack_to_dest_mode) == 64
    assert [i for i, m in enumerate(fields.unpack_to_dest_mode) if m is tables().tables.runtime_enums.unpack_to_dest_mode.UnpackToDestFp32] == [5]
    assert fields.fp32_dest_acc_en and fields.math_fidelity is tables().tables.runtime_enums.math_fidelity.HiFi2
    assert len(engine.to_compute_config_descriptor(plan, runtime_version="legacy").unpack_to_dest_mode) == 32


def test_runtime_enum_values() -> None:
    assert {m.name: int(m) for m in tables().tables.runtime_enums.unpack_to_dest_mode} == {"UnpackToDestFp32": 0, "Default": 1}
    assert {m.name: int(m) for m in tables().tables.runtime_enums.math_fidelity} == {"LoFi": 0, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}


def test_unknown_math_fidelity_is_a_translation_error() -> None:
    plan = plan_of(resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)])), "blackhole"))
    with pytest.raises(engine.TranslationError, match="HiFi5"):
        engine.to_compute_config_descriptor(plan, "HiFi5")


def test_ttnn_descriptor_assigns_whole_lists(monkeypatch: pytest.MonkeyPatch) -> None:

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
    fields = engine.to_compute_config_descriptor(plan)
    assert engine.to_ttnn_compute_config(fields) is fields or "ttnn" in sys.modules
    monkeypatch.setitem(sys.modules, "ttnn", fake)
    descriptor = engine.to_ttnn_compute_config(fields)
    assert isinstance(descriptor.assigned["unpack_to_dest_mode"], list)
    assert descriptor.assigned["unpack_to_dest_mode"][:3] == ["default", "fp32", "default"]
    assert descriptor.assigned["math_fidelity"] == "hifi4"
    assert descriptor.assigned["fp32_dest_acc_en"] is True


def test_compute_gen1_config_fields() -> None:
    k = kernel({0: "f32", 1: "f32", 2: "bf16"}, ("s", "tile_add", [dfb(0), dfb(1)]), ("c", "copy_tile", [dfb(2)]))
    plan = plan_of(resolve(k, "blackhole_gen1_config", options={"dst-full-sync-en": "enabled"}))
    fields = engine.to_compute_gen1_config(plan, "LoFi", dfb_names={0: "in0"})
    assert fields.enable_32_bit_dest is True
    assert fields.double_buffer_dest is False
    assert fields.fpu_math_fidelity is tables().tables.runtime_enums.math_fidelity.LoFi
    assert fields.unpack_modes == (("dfb1", tables().tables.runtime_enums.unpack_to_dest_mode.Default), ("in0", tables().tables.runtime_enums.unpack_to_dest_mode.Default))
    assert engine.runtime_fields(plan) == engine.to_compute_gen1_config(plan)


def test_compute_gen1_config_translation_rejects_the_other_api() -> None:
    plan = plan_of(resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)])), "blackhole"))
    with pytest.raises(engine.TranslationError, match="ComputeConfigDescriptor"):
        engine.to_compute_gen1_config(plan)


def test_no_target_has_no_runtime_translation() -> None:
    plan = plan_of(resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))))
    assert engine.runtime_fields(plan) is None
    with pytest.raises(engine.TranslationError):
        engine.to_compute_config_descriptor(plan)


def test_failure_is_not_a_plan() -> None:
    failure = failure_of(resolve(kernel({0: "bf16"}, ("c", "copy_tile", [dfb(9)]))))
    assert not isinstance(failure, engine.Plan)
