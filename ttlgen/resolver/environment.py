"""The target-environment interface: typed capability queries answered from one target's
table.

Queries consume primitives, element types and operand routes, never op names. Each
environment answers only from its own ``TargetTable``: nothing is inherited from
another target.
"""

from __future__ import annotations

from collections.abc import Mapping

from .requirements import OpInfo, OpShape
from .semantics import (
    DestWidth,
    ElementInfo,
    FullFp32Support,
    Preference,
    Route,
    RuntimeApi,
    UnpackMode,
    mode_mask,
    modes_of,
    width_mask,
    widths_of,
)
from .tables import RuntimeEnums, Tables, TargetTable


class Prepared:
    """The tables prepared for lookups, shared by every environment of one catalog."""

    __slots__ = ("elements", "float_elements", "ops", "preferences", "runtime_enums")

    def __init__(self, tables: Tables) -> None:
        self.elements: Mapping[str, ElementInfo] = {e.name: e for e in tables.elements}
        self.float_elements = frozenset(e.name for e in tables.elements if e.is_float)
        gated = frozenset(s.name for s in tables.strategies if s.gated_by_fpu_binary_policy)
        self.ops: Mapping[str, OpInfo] = {name: OpInfo.of(sem, gated) for name, sem in tables.ops.items()}
        self.preferences: Mapping[str, Preference] = {k.name: k.preference for k in tables.full_fp32_kinds}
        self.runtime_enums: RuntimeEnums = tables.runtime_enums


class TargetEnvironment:
    """Capabilities of one architecture under one runtime configuration API."""

    def __init__(self, table: TargetTable, prepared: Prepared) -> None:
        self.table = table
        self.prepared = prepared
        self._width_cache: dict[tuple[str, str], int] = {}
        self._unpack_cache: dict[tuple[str, str, Route], tuple[int, int]] = {}
        # Op shapes built for this target (see ``collect``), keyed by op name, primitive,
        # operand element types, result type, tile agreement, FPU policy and strategy.
        self.shapes: dict[tuple[object, ...], OpShape] = {}

    @property
    def name(self) -> str:
        return self.table.name

    @property
    def architecture(self) -> str | None:
        """None: no architecture (compiler tests)."""
        return self.table.architecture

    @property
    def runtime_api(self) -> RuntimeApi | None:
        return self.table.runtime_api

    @property
    def dfb_capacity(self) -> int:
        return self.table.dfb_capacity

    def dest_width_mask(self, primitive: str, element: str) -> int:
        """Allowed DST widths (bit mask) for a primitive producing ``element`` in DST."""
        key = (primitive, element)
        found = self._width_cache.get(key)
        if found is None:
            found = self._width_mask(primitive, self.prepared.elements[element])
            self._width_cache[key] = found
        return found

    def dfb_unpack_mask(self, primitive: str, element: str, route: Route) -> tuple[int, int]:
        """Allowed (DST widths, unpack modes) bit masks for one use of a dataflow buffer."""
        key = (primitive, element, route)
        found = self._unpack_cache.get(key)
        if found is None:
            found = self._unpack_mask(primitive, self.prepared.elements[element], route)
            self._unpack_cache[key] = found
        return found

    def _width_mask(self, primitive: str, info: ElementInfo) -> int:
        for rule in self.table.dest_width.rules:
            if rule.when.matches(primitive, info, None):
                return width_mask(rule.widths)
        return 0

    def _unpack_mask(self, primitive: str, info: ElementInfo, route: Route) -> tuple[int, int]:
        for rule in self.table.dfb_unpack.rules:
            if rule.when.matches(primitive, info, route):
                return (width_mask(rule.widths), mode_mask(rule.modes))
        return (0, 0)

    def dest_widths(self, primitive: str, element: str) -> frozenset[DestWidth]:
        """Allowed DST element widths for a primitive with ``element`` in DST."""
        return widths_of(self.dest_width_mask(primitive, element))

    def dfb_configurations(
        self, primitive: str, element: str, route: Route
    ) -> frozenset[tuple[DestWidth, UnpackMode]]:
        """Allowed (DST width, unpack mode) combinations for one use of a DFB."""
        return _configurations(self.dfb_unpack_mask(primitive, element, route))

    def dest_widths_of(self, primitive: str, element: ElementInfo) -> frozenset[DestWidth]:
        """``dest_widths`` for an element given by its facts, e.g. an element type the
        tables do not declare (``semantics.undeclared_element``), as TT-Lang's compiler
        passes any ``mlir::Type``."""
        return widths_of(self._width_mask(primitive, element))

    def dfb_configurations_of(
        self, primitive: str, element: ElementInfo, route: Route
    ) -> frozenset[tuple[DestWidth, UnpackMode]]:
        """``dfb_configurations`` for an element given by its facts (see ``dest_widths_of``)."""
        return _configurations(self._unpack_mask(primitive, element, route))

    def full_fp32(self, kind: str) -> FullFp32Support:
        return self.table.full_fp32[kind]

    def __repr__(self) -> str:
        return f"<TargetEnvironment {self.table.name}>"


def _configurations(masks: tuple[int, int]) -> frozenset[tuple[DestWidth, UnpackMode]]:
    widths, modes = masks
    return frozenset((w, m) for w in widths_of(widths) for m in modes_of(modes))
