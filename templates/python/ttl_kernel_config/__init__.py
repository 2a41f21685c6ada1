"""TT-Lang compute-kernel configuration resolver, generated from ttlgen's op and target specs.

Standard library only. The spec-dependent parts are tables (``vocabulary``, ``ops_table``,
``targets``); the engine (policy normalization, requirement collection, the joint
search, diagnostics, plan and runtime translation) is the same for every spec.

Public API
----------
Targets
    ``get_target(name)`` -> ``TargetEnvironment`` (None: the compiler-testing environment);
    ``select_target(target, device_arch)`` applies the target/device agreement rule;
    ``architecture_from_runtime_name(name)`` maps WORMHOLE_B0 / BLACKHOLE / QUASAR (any
    case) to ``Architecture``; ``target_names()``. Unknown or rejected targets and
    unknown runtime names raise ``TargetError`` (``.message``).
Inputs
    ``KernelDescription(dfbs={index: ElementType}, ops=(TileOp, ...))`` with
    ``TileOp(id, op, operands=(DfbOperand(dfb, tile) | ValueOperand(value), ...),
    result=ElementType | None, attrs={...}, strategy=None | "fpu" | "sfpu")``.
    ``OPS`` is the op semantics table (``OpSemantics``).
Policy
    ``normalize_policy(options, attributes)`` -> ``KernelConfigPolicy | ResolveFailure``
    (option names in ``OPTION_NAMES``, attribute names in ``ATTRIBUTE_NAMES``).
Resolution
    ``resolve(kernel, target_env, policy)`` -> ``Plan | ResolveFailure``;
    ``resolve_kernel(kernel, target=, device_arch=, options=, attributes=)`` does all three
    steps; ``resolve_all([...])`` returns every plan or the first failure.
    ``Plan``: ``strategies`` ((op id, Strategy) for every op whose spec declares more than
    one strategy), ``dest_width``, ``sync``, ``unpack_to_dest_fp32``, ``warnings``,
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
from .kernel import DfbOperand, KernelDescription, Operand, TileOp, ValueOperand
from .lookup import (
    architecture_from_runtime_name,
    get_target,
    parse_architecture,
    select_target,
    target_names,
)
from .ops_table import OPS
from .resolver import (
    ATTRIBUTE_NAMES,
    OPTION_NAMES,
    STRATEGY_ATTRIBUTE,
    KernelConfigPolicy,
    Plan,
    diagnose,
    normalize_policy,
    resolve,
    resolve_all,
    resolve_kernel,
)
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
    DestWidth,
    OpSemantics,
    Preference,
    Route,
    Selection,
    SyncMode,
    UnpackMode,
)
from .vocabulary import (
    Architecture,
    ElementType,
    FullFp32Kind,
    MathFidelity,
    Primitive,
    Strategy,
    UnpackToDestMode,
)

__all__ = [
    "ATTRIBUTE_NAMES",
    "OPS",
    "OPTION_NAMES",
    "STRATEGY_ATTRIBUTE",
    "Architecture",
    "ComputeConfigDescriptorFields",
    "ComputeGen1ConfigFields",
    "Conflict",
    "ConflictKind",
    "DestWidth",
    "DfbOperand",
    "Diagnostic",
    "ElementType",
    "FullFp32Kind",
    "KernelConfigPolicy",
    "KernelDescription",
    "MathFidelity",
    "Note",
    "OpSemantics",
    "Operand",
    "Plan",
    "Preference",
    "Primitive",
    "Requirement",
    "ResolveFailure",
    "ResolveWarning",
    "Route",
    "Selection",
    "Source",
    "Strategy",
    "SyncMode",
    "TargetEnvironment",
    "TargetError",
    "TileOp",
    "TranslationError",
    "UnpackMode",
    "UnpackToDestMode",
    "ValueOperand",
    "architecture_from_runtime_name",
    "diagnose",
    "get_target",
    "normalize_policy",
    "parse_architecture",
    "resolve",
    "resolve_all",
    "resolve_kernel",
    "runtime_fields",
    "runtime_translation",
    "select_target",
    "target_names",
    "to_compute_config_descriptor",
    "to_compute_gen1_config",
    "to_ttnn_compute_config",
]
