"""The target-environment interface: typed capability queries answered from tables.

A generated subclass per target (see ``targets.py``) fills in the class attributes;
the queries below only read them. Queries consume primitives, element types and
operand routes, never op names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from .semantics import (
    DestWidth,
    FullFp32Support,
    Match,
    Route,
    RuntimeApi,
    UnpackMode,
    UnpackRule,
    WidthRule,
    mode_mask,
    modes_of,
    width_mask,
    widths_of,
)
from .vocabulary import Architecture, ElementType, FullFp32Kind, Primitive


class TargetEnvironment:
    """Capabilities of one architecture under one runtime configuration API."""

    NAME: ClassVar[str]
    SUMMARY: ClassVar[str]
    ARCHITECTURE: ClassVar[Architecture | None]  # None: no architecture (compiler tests)
    RUNTIME_API: ClassVar[RuntimeApi | None]
    RUNTIME_ARCHITECTURE_NAME: ClassVar[str | None]
    DFB_CAPACITY: ClassVar[int]
    DEST_WIDTH_RULES: ClassVar[tuple[WidthRule, ...]]
    DEST_WIDTH_ORIGIN: ClassVar[str]
    DFB_UNPACK_RULES: ClassVar[tuple[UnpackRule, ...]]
    DFB_UNPACK_ORIGIN: ClassVar[str]
    UNPACK_EFFECTIVE_FOR: ClassVar[frozenset[ElementType]]
    UNPACK_OTHER_ENTRIES_NEED_32BIT_DEST: ClassVar[bool]
    UNPACK_UNBOUND_ENTRIES_REJECTED: ClassVar[bool]
    FULL_FP32: ClassVar[Mapping[FullFp32Kind, FullFp32Support]]

    def __init__(self) -> None:
        # Keyed by member values: str hashes are cached, enum hashes are not.
        self._width_cache: dict[tuple[str, str], int] = {}
        self._unpack_cache: dict[tuple[str, str, str], tuple[int, int]] = {}

    @property
    def name(self) -> str:
        return self.NAME

    @property
    def architecture(self) -> Architecture | None:
        return self.ARCHITECTURE

    @property
    def runtime_api(self) -> RuntimeApi | None:
        return self.RUNTIME_API

    @property
    def dfb_capacity(self) -> int:
        return self.DFB_CAPACITY

    def dest_width_mask(self, primitive: Primitive, element: ElementType) -> int:
        """Allowed DST widths (bit mask) for a primitive producing ``element`` in DST."""
        key = (primitive._value_, element._value_)
        found = self._width_cache.get(key)
        if found is None:
            found = 0
            for rule in self.DEST_WIDTH_RULES:
                if rule.when.matches(primitive, element, None):
                    found = width_mask(rule.widths)
                    break
            self._width_cache[key] = found
        return found

    def dfb_unpack_mask(self, primitive: Primitive, element: ElementType, route: Route) -> tuple[int, int]:
        """Allowed (DST widths, unpack modes) bit masks for one use of a dataflow buffer."""
        key = (primitive._value_, element._value_, route._value_)
        found = self._unpack_cache.get(key)
        if found is None:
            found = (0, 0)
            for rule in self.DFB_UNPACK_RULES:
                if rule.when.matches(primitive, element, route):
                    found = (width_mask(rule.widths), mode_mask(rule.modes))
                    break
            self._unpack_cache[key] = found
        return found

    def dest_widths(self, primitive: Primitive, element: ElementType) -> frozenset[DestWidth]:
        """Allowed DST element widths for a primitive with ``element`` in DST."""
        return widths_of(self.dest_width_mask(primitive, element))

    def dfb_configurations(
        self, primitive: Primitive, element: ElementType, route: Route
    ) -> frozenset[tuple[DestWidth, UnpackMode]]:
        """Allowed (DST width, unpack mode) combinations for one use of a DFB."""
        widths, modes = self.dfb_unpack_mask(primitive, element, route)
        return frozenset((w, m) for w in widths_of(widths) for m in modes_of(modes))

    def full_fp32(self, kind: FullFp32Kind) -> FullFp32Support:
        return self.FULL_FP32[kind]

    def __repr__(self) -> str:
        return f"<TargetEnvironment {self.NAME}>"


__all__ = ["Match", "TargetEnvironment"]
