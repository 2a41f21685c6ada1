"""TT-Lang's compute-kernel configuration resolver, as a library that takes its tables.

Standard library only, and importing nothing of ttlgen outside this package: the same
modules ship verbatim in the generated ``ttl_kernel_config`` package (with relative
imports, so they work in both places), beside the tables rendered from the specs.
What a spec decides comes in as one typed :class:`Tables` record (see ``tables`` for
how spec-declared names are typed); the engine (policy normalization, requirement
collection, the joint search, diagnostics, plan and runtime translation) is the same
for every spec.

Public API
----------
Tables and targets
    ``Catalog(tables)``: ``get_target(name)`` -> ``TargetEnvironment`` (None: the
    compiler-testing environment); ``select_target(target, device_arch)`` applies the
    target/device agreement rule; ``architecture_from_runtime_name(name)`` maps
    WORMHOLE_B0 / BLACKHOLE / QUASAR (or their lower case) to an architecture;
    ``parse_architecture(name)`` also takes the typed name (``blackhole``), other
    spellings are unknown; ``dfb_capacity(architecture)`` is TargetInfo.h's capacity (a
    rejected architecture's too); ``target_names()``; ``resolve_kernel(...)`` (below).
    Unknown or rejected targets and unknown architectures raise ``TargetError``
    (``.message``).
Capability queries
    ``TargetEnvironment.dest_widths(primitive, element)``, ``dfb_configurations(primitive,
    element, route)``, ``full_fp32(kind)``; ``dest_widths_of`` and
    ``dfb_configurations_of`` take an element by its facts, e.g.
    ``undeclared_element(bits, is_float)`` for a type the tables do not declare (known by
    its bit width, as TT-Lang's compiler knows any ``mlir::Type``).
Inputs
    ``KernelDescription(dfbs={index: element type}, ops=(TileOp, ...))`` with
    ``TileOp(id, op, operands=(DfbOperand(dfb, tile, map=None) | ValueOperand(value), ...),
    result=element type | None, attrs={...}, strategy=None | "fpu" | "sfpu")``.
    A ``DfbOperand`` may give its indexing ``map`` (TT-Lang's affine form, kept as
    ``canonical_map`` makes it): operands address the same tile coordinates when their maps
    are equal. An op whose semantics name a ``dst_slots_attribute`` holds that many DST
    slots at once (``attrs={"num_tiles": "5"}``).
Generations
    Each ``TargetTable`` follows a ``Generation`` of TT-Lang's resolver (``Tables.generations``):
    ``auto_sync`` (``AutoSync.DOUBLE_BUFFERED``, or ``BY_CAPACITY``: ops' DST residency is
    checked against ``TargetTable.dst_capacity`` and picks the sync), ``policy_values``
    (``PolicyValues.COERCED`` or ``TYPED``), and ``TargetTable.dfb_capacity_description``,
    the capacity range diagnostics name (None: the range alone).
Policy
    ``normalize_policy(options, attributes, generation=None)`` -> ``KernelConfigPolicy |
    ResolveFailure`` (option names in ``OPTION_NAMES``, attribute names in
    ``ATTRIBUTE_NAMES``; the generation decides whether attribute values must be typed).
Resolution
    ``resolve(kernel, target_env, policy)`` -> ``Plan | ResolveFailure``;
    ``Catalog.resolve_kernel(kernel, target=, device_arch=, options=, attributes=)`` does
    all three steps; ``resolve_all([...])`` returns every plan or the first failure.
    ``Plan``: ``strategies`` ((op id, strategy) for every op whose spec declares more
    than one strategy), ``dest_width``, ``sync``, ``unpack_to_dest_fp32``, ``warnings``,
    ``fp32_dest_acc_en``, ``dst_full_sync_en``, ``op_attributes()``,
    ``function_attributes(existing)``, ``to_json()``. Only the resolver constructs one.
    ``ResolveFailure.errors``: ``Diagnostic(op, operand, message, notes)``;
    ``ResolveFailure.conflict``: typed ``Conflict`` evidence (both requirements).
Runtime translation
    ``to_compute_config_descriptor(plan, math_fidelity=None, runtime_version=None)`` ->
    ``ComputeConfigDescriptorFields``; ``to_ttnn_compute_config(fields)`` builds a real
    ``ttnn.ComputeConfigDescriptor`` when ttnn is importable;
    ``to_compute_gen1_config(plan, math_fidelity=None, dfb_names=None)`` ->
    ``ComputeGen1ConfigFields``; ``runtime_fields(plan, math_fidelity)`` picks the
    translation of the plan's target (None for a target without a runtime).
    Translation problems raise ``TranslationError``.
"""

from .diagnostics import (
    Conflict,
    ConflictKind,
    Diagnostic,
    Note,
    Requirement,
    ResolveFailure,
    ResolveWarning,
    Source,
    TargetError,
    TranslationError,
)
from .environment import TargetEnvironment
from .kernel import DfbOperand, KernelDescription, Operand, TileOp, ValueOperand, canonical_map
from .lookup import Catalog
from .policy import (
    ATTRIBUTE_NAMES,
    OPTION_NAMES,
    STRATEGY_ATTRIBUTE,
    KernelConfigPolicy,
    normalize_policy,
)
from .resolver import Plan, diagnose, resolve, resolve_all
from .runtime import (
    ComputeConfigDescriptorFields,
    ComputeGen1ConfigFields,
    runtime_fields,
    runtime_translation,
    to_compute_config_descriptor,
    to_compute_gen1_config,
    to_ttnn_compute_config,
)
from .semantics import (
    ArchitectureInfo,
    AutoSync,
    DestWidth,
    DstCapacity,
    ElementInfo,
    FullFp32KindInfo,
    FullFp32Support,
    Generation,
    LegalityCondition,
    Match,
    OperandSemantics,
    OpSemantics,
    PolicyValues,
    Preference,
    Route,
    RuntimeApi,
    RuntimeVersion,
    Selected,
    Selection,
    StrategyInfo,
    StrategySemantics,
    SyncMode,
    Translation,
    UnpackMode,
    UnpackRule,
    WidthRule,
    undeclared_element,
)
from .tables import (
    RejectedTarget,
    RuntimeEnums,
    Tables,
    TargetTable,
    UnpackTable,
    WidthTable,
)

__all__ = [
    "ATTRIBUTE_NAMES",
    "OPTION_NAMES",
    "STRATEGY_ATTRIBUTE",
    "ArchitectureInfo",
    "AutoSync",
    "Catalog",
    "ComputeConfigDescriptorFields",
    "ComputeGen1ConfigFields",
    "Conflict",
    "ConflictKind",
    "DestWidth",
    "DfbOperand",
    "Diagnostic",
    "DstCapacity",
    "ElementInfo",
    "FullFp32KindInfo",
    "FullFp32Support",
    "Generation",
    "KernelConfigPolicy",
    "KernelDescription",
    "LegalityCondition",
    "Match",
    "Note",
    "OpSemantics",
    "Operand",
    "OperandSemantics",
    "Plan",
    "PolicyValues",
    "Preference",
    "RejectedTarget",
    "Requirement",
    "ResolveFailure",
    "ResolveWarning",
    "Route",
    "RuntimeApi",
    "RuntimeEnums",
    "RuntimeVersion",
    "Selected",
    "Selection",
    "Source",
    "StrategyInfo",
    "StrategySemantics",
    "SyncMode",
    "Tables",
    "TargetEnvironment",
    "TargetError",
    "TargetTable",
    "TileOp",
    "Translation",
    "TranslationError",
    "UnpackMode",
    "UnpackRule",
    "UnpackTable",
    "ValueOperand",
    "WidthRule",
    "WidthTable",
    "canonical_map",
    "diagnose",
    "normalize_policy",
    "resolve",
    "resolve_all",
    "runtime_fields",
    "runtime_translation",
    "to_compute_config_descriptor",
    "to_compute_gen1_config",
    "to_ttnn_compute_config",
    "undeclared_element",
]
