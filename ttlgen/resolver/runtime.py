"""Compiler-to-runtime translation of a plan, per runtime configuration API.

Runtime enum values are members of the tables' ``UnpackToDestMode`` and ``MathFidelity``
classes; the member names used here are the runtime's own (``UnpackToDestFp32``,
``Default``), which the runtime API spec must declare.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Mapping
from typing import NamedTuple

from .diagnostics import TranslationError
from .resolver import Plan
from .semantics import RuntimeApi, Translation

FidelityArg = str | enum.IntEnum | None


class ComputeConfigDescriptorFields(NamedTuple):
    """The fields of ttnn.ComputeConfigDescriptor, as plain data."""

    math_fidelity: enum.IntEnum
    fp32_dest_acc_en: bool
    dst_full_sync_en: bool
    unpack_to_dest_mode: tuple[enum.IntEnum, ...]  # empty, or NUM_CIRCULAR_BUFFERS entries
    bfp8_pack_precise: bool = False
    math_approx_mode: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "math_fidelity": self.math_fidelity.name,
            "fp32_dest_acc_en": self.fp32_dest_acc_en,
            "dst_full_sync_en": self.dst_full_sync_en,
            "unpack_to_dest_mode": [m.name for m in self.unpack_to_dest_mode],
            "bfp8_pack_precise": self.bfp8_pack_precise,
            "math_approx_mode": self.math_approx_mode,
        }


class ComputeGen1ConfigFields(NamedTuple):
    """The fields of the Metal 2.0 ComputeGen1Config, as plain data."""

    fpu_math_fidelity: enum.IntEnum
    enable_32_bit_dest: bool
    double_buffer_dest: bool
    sfpu_precision_mode: bool
    unpack_modes: tuple[tuple[str, enum.IntEnum], ...]  # DFB name -> mode, sorted by name

    def to_json(self) -> dict[str, object]:
        return {
            "fpu_math_fidelity": self.fpu_math_fidelity.name,
            "enable_32_bit_dest": self.enable_32_bit_dest,
            "double_buffer_dest": self.double_buffer_dest,
            "sfpu_precision_mode": self.sfpu_precision_mode,
            "unpack_modes": {name: mode.name for name, mode in self.unpack_modes},
        }


def _api(plan: Plan, translation: Translation) -> RuntimeApi:
    api = plan.environment.runtime_api
    if api is None:
        raise TranslationError(f"target {plan.target!r} has no runtime configuration API")
    if api.translation is not translation:
        raise TranslationError(f"target {plan.target!r} is launched through {api.name}, not this API")
    return api


def _fidelity(plan: Plan, api: RuntimeApi, math_fidelity: FidelityArg) -> enum.IntEnum:
    members = plan.environment.prepared.runtime_enums.math_fidelity
    name = math_fidelity.name if isinstance(math_fidelity, enum.IntEnum) else math_fidelity or api.default_math_fidelity
    for member in members:
        if member.name.lower() == name.lower():
            return member
    known = ", ".join(m.name for m in members)
    raise TranslationError(f"unknown math_fidelity {name!r}; expected one of {known}")


def _unpack_modes(plan: Plan) -> tuple[enum.IntEnum, enum.IntEnum]:
    """The runtime's (UnpackToDestFp32, Default) members."""
    members = plan.environment.prepared.runtime_enums.unpack_to_dest_mode
    return members["UnpackToDestFp32"], members["Default"]


def runtime_translation(plan: Plan) -> Translation | None:
    """Which translation the plan's target uses, or None for a target without a runtime."""
    api = plan.environment.runtime_api
    return api.translation if api is not None else None


def to_compute_config_descriptor(
    plan: Plan, math_fidelity: FidelityArg = None, runtime_version: str | None = None
) -> ComputeConfigDescriptorFields:
    """Plan (+ the op-level math fidelity, default from the API spec) -> descriptor fields.

    ``unpack_to_dest_mode`` is empty when every DFB is default, otherwise indexed by DFB
    with exactly NUM_CIRCULAR_BUFFERS entries for the (pinned) runtime version.
    """
    api = _api(plan, Translation.COMPUTE_CONFIG_DESCRIPTOR)
    count = api.num_circular_buffers(runtime_version)
    modes: tuple[enum.IntEnum, ...] = ()
    if plan.unpack_to_dest_fp32:
        if plan.unpack_to_dest_fp32[-1] >= count:
            raise TranslationError(
                f"dataflow buffer {plan.unpack_to_dest_fp32[-1]} does not fit the {count} circular buffers of runtime {runtime_version or api.pinned_version!r}"
            )
        listed = set(plan.unpack_to_dest_fp32)
        unpack, default = _unpack_modes(plan)
        modes = tuple(unpack if i in listed else default for i in range(count))
    return ComputeConfigDescriptorFields(
        math_fidelity=_fidelity(plan, api, math_fidelity),
        fp32_dest_acc_en=plan.fp32_dest_acc_en,
        dst_full_sync_en=plan.dst_full_sync_en,
        unpack_to_dest_mode=modes,
    )


def to_compute_gen1_config(
    plan: Plan,
    math_fidelity: FidelityArg = None,
    dfb_names: Mapping[int, str] | None = None,
    math_approx_mode: bool = False,
) -> ComputeGen1ConfigFields:
    """Plan -> Metal 2.0 ComputeGen1Config fields, with that API's stricter validation.

    Every consumed DFB whose unpack setting is effective gets an explicit entry when DST
    is 32-bit; an unpack-to-DST entry with 16-bit DST and an entry for a DFB the kernel
    does not bind are errors. DFBs are named ``dfb<N>`` unless ``dfb_names`` says otherwise.
    """
    api = _api(plan, Translation.COMPUTE_GEN1_CONFIG)
    effective = plan.environment.table.unpack_effective_for
    unpack, default = _unpack_modes(plan)
    names = dict(dfb_names or {})
    bound: dict[int, str] = dict(plan.dfb_elements)
    listed = set(plan.unpack_to_dest_fp32)
    entries: dict[int, enum.IntEnum] = {}
    if plan.fp32_dest_acc_en:
        for dfb in plan.consumed_dfbs:
            if bound[dfb] in effective:
                entries[dfb] = unpack if dfb in listed else default
    for dfb in sorted(listed):
        if dfb not in bound:
            raise TranslationError(f"{api.name} rejects an unpack entry for dataflow buffer {dfb}, which the kernel does not bind")
        if not plan.fp32_dest_acc_en:
            raise TranslationError(f"{api.name} rejects unpack-to-DST for dataflow buffer {dfb} with 16-bit destination elements")
        entries[dfb] = unpack
    named = sorted((names.get(dfb, f"dfb{dfb}"), mode) for dfb, mode in entries.items())
    return ComputeGen1ConfigFields(
        fpu_math_fidelity=_fidelity(plan, api, math_fidelity),
        enable_32_bit_dest=plan.fp32_dest_acc_en,
        double_buffer_dest=not plan.dst_full_sync_en,
        sfpu_precision_mode=math_approx_mode,
        unpack_modes=tuple(named),
    )


def runtime_fields(
    plan: Plan, math_fidelity: FidelityArg = None
) -> ComputeConfigDescriptorFields | ComputeGen1ConfigFields | None:
    """The runtime configuration of the plan's target API, or None without a runtime."""
    translation = runtime_translation(plan)
    if translation is Translation.COMPUTE_CONFIG_DESCRIPTOR:
        return to_compute_config_descriptor(plan, math_fidelity)
    if translation is Translation.COMPUTE_GEN1_CONFIG:
        return to_compute_gen1_config(plan, math_fidelity)
    return None


def to_ttnn_compute_config(fields: ComputeConfigDescriptorFields) -> object:
    """A real ttnn.ComputeConfigDescriptor when ttnn is importable, else ``fields``.

    Lists are assigned whole: element assignment through the binding may not stick.
    """
    try:
        ttnn = importlib.import_module("ttnn")
    except ImportError:
        return fields
    descriptor = ttnn.ComputeConfigDescriptor()
    descriptor.math_fidelity = getattr(ttnn.MathFidelity, fields.math_fidelity.name)
    descriptor.fp32_dest_acc_en = fields.fp32_dest_acc_en
    descriptor.dst_full_sync_en = fields.dst_full_sync_en
    descriptor.bfp8_pack_precise = fields.bfp8_pack_precise
    descriptor.math_approx_mode = fields.math_approx_mode
    descriptor.unpack_to_dest_mode = [getattr(ttnn.UnpackToDestMode, m.name) for m in fields.unpack_to_dest_mode]
    return descriptor
