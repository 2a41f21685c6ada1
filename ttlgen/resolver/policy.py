"""Policy: pass options and function attributes, normalized.

Function attributes are hard constraints and override the options; full-fp32
preferences are preferences; math_fidelity is not policy (the runtime translation
forwards it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from .diagnostics import Diagnostic, ResolveFailure
from .semantics import Generation, PolicyValues, Preference, Selection

OPTION_NAMES = (
    "fp32-dest-acc-en",
    "dst-full-sync-en",
    "reduce-full-fp32",
    "matmul-full-fp32",
    "enable-fpu-binary-ops",
)
ATTRIBUTE_NAMES = (
    "fp32_dest_acc_en",
    "dst_full_sync_en",
    "ttl.enable_fpu_binary_ops",
    "ttl.unpack_to_dest_fp32",
)
# The op attribute that holds an explicit strategy, and that plan application writes.
STRATEGY_ATTRIBUTE = "ttl.tile_execution_strategy"

_TRI_STATE = {
    "auto": Selection.AUTO,
    "enabled": Selection.ENABLED,
    "disabled": Selection.DISABLED,
    "true": Selection.ENABLED,
    "1": Selection.ENABLED,
    "false": Selection.DISABLED,
    "0": Selection.DISABLED,
}
_BOOLS = {"true": True, "1": True, "false": False, "0": False}


class KernelConfigPolicy(NamedTuple):
    """Normalized pass options and function attributes. Attributes are hard constraints."""

    fp32_dest_acc: Selection = Selection.AUTO
    dst_full_sync: Selection = Selection.AUTO
    preferences: frozenset[Preference] = frozenset(Preference)
    fpu_binary_ops: bool = True
    unpack_to_dest_fp32: tuple[int, ...] | None = None  # sorted, de-duplicated


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _tri_state(name: str, value: object, errors: list[Diagnostic]) -> Selection:
    found = _TRI_STATE.get(_text(value).lower()) if isinstance(value, str | bool | int) else None
    if found is None:
        errors.append(Diagnostic(None, None, f"invalid {name} value '{_text(value)}'; expected auto, enabled, or disabled"))
        return Selection.AUTO
    return found


def _bool(name: str, value: object, errors: list[Diagnostic], what: str = "value") -> bool:
    found = _BOOLS.get(_text(value).lower()) if isinstance(value, str | bool | int) else None
    if found is None:
        errors.append(Diagnostic(None, None, f"invalid {name} {what} '{_text(value)}'; expected true or false"))
        return False
    return found


def _typed(attributes: Mapping[str, object], errors: list[Diagnostic]) -> None:
    """A generation with typed policy values takes an attribute only with its type, as
    TT-Lang's main line does (``fp32_dest_acc_en = "true"`` is not a boolean)."""
    for name in ("fp32_dest_acc_en", "dst_full_sync_en", "ttl.enable_fpu_binary_ops"):
        if name in attributes and not isinstance(attributes[name], bool):
            errors.append(Diagnostic(None, None, f"{name} must be a boolean attribute"))
    raw = attributes.get("ttl.unpack_to_dest_fp32", [])
    if not isinstance(raw, list | tuple) or any(isinstance(e, bool) or not isinstance(e, int) for e in raw):
        errors.append(Diagnostic(None, None, "ttl.unpack_to_dest_fp32 must be a dense i32 array attribute"))


def normalize_policy(
    options: Mapping[str, object] | None = None,
    attributes: Mapping[str, object] | None = None,
    generation: Generation | None = None,
) -> KernelConfigPolicy | ResolveFailure:
    """Pass options (``fp32-dest-acc-en: auto``...) and function attributes -> policy.

    ``generation`` (the target's) decides how attribute values are read: typed (each must
    have its type) or coerced (read like pass options); None: coerced."""
    options = options or {}
    attributes = attributes or {}
    errors: list[Diagnostic] = []
    if generation is not None and generation.policy_values is PolicyValues.TYPED:
        _typed(attributes, errors)
        if errors:
            return ResolveFailure(tuple(errors))
    for key in options:
        if key not in OPTION_NAMES:
            errors.append(Diagnostic(None, None, f"unknown pass option {key!r}; known: {', '.join(OPTION_NAMES)}"))
    for key in attributes:
        if key not in ATTRIBUTE_NAMES:
            errors.append(Diagnostic(None, None, f"unknown function attribute {key!r}; known: {', '.join(ATTRIBUTE_NAMES)}"))
    fp32 = _tri_state("fp32-dest-acc-en", options.get("fp32-dest-acc-en", "auto"), errors)
    sync = _tri_state("dst-full-sync-en", options.get("dst-full-sync-en", "auto"), errors)
    preferences = {
        pref for pref in Preference if _bool(pref.value, options.get(pref.value, True), errors)
    }
    fpu = _bool("enable-fpu-binary-ops", options.get("enable-fpu-binary-ops", True), errors)
    if "fp32_dest_acc_en" in attributes:
        fp32 = Selection.ENABLED if _bool("fp32_dest_acc_en", attributes["fp32_dest_acc_en"], errors, "attribute value") else Selection.DISABLED
    if "dst_full_sync_en" in attributes:
        sync = Selection.ENABLED if _bool("dst_full_sync_en", attributes["dst_full_sync_en"], errors, "attribute value") else Selection.DISABLED
    if "ttl.enable_fpu_binary_ops" in attributes:
        fpu = _bool("ttl.enable_fpu_binary_ops", attributes["ttl.enable_fpu_binary_ops"], errors, "attribute value")
    unpack: tuple[int, ...] | None = None
    if "ttl.unpack_to_dest_fp32" in attributes:
        raw = attributes["ttl.unpack_to_dest_fp32"]
        entries: list[int] = []
        if not isinstance(raw, list | tuple):
            errors.append(Diagnostic(None, None, f"invalid ttl.unpack_to_dest_fp32 value '{_text(raw)}'; expected a list of dataflow buffer indices"))
        else:
            for entry in raw:
                if isinstance(entry, bool) or not isinstance(entry, int):
                    errors.append(Diagnostic(None, None, f"invalid ttl.unpack_to_dest_fp32 entry '{_text(entry)}'; expected a dataflow buffer index"))
                else:
                    entries.append(entry)
        unpack = tuple(sorted(set(entries)))
    if errors:
        return ResolveFailure(tuple(errors))
    return KernelConfigPolicy(fp32, sync, frozenset(preferences), fpu, unpack)
