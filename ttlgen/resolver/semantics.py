"""The resolver's fixed vocabulary and the records its tables are made of.

Fixed here, the same for every spec: operand routes, destination widths, unpack modes,
synchronization, tri-state policy selections, full-fp32 preferences and strategy
legality conditions. Names a spec declares (element types, primitives, strategies,
full-fp32 kinds, architectures) are ``str`` in these records: see ``tables`` for why.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import NamedTuple


class Route(enum.Enum):
    """How a primitive physically reads an operand."""

    NONE = "none"
    DFB = "dfb"
    DST = "dst"


class DestWidth(enum.IntEnum):
    """Kernel-wide DST element width, in bits."""

    BITS16 = 16
    BITS32 = 32


class UnpackMode(enum.Enum):
    """Per-dataflow-buffer unpack setting for the whole kernel."""

    DEFAULT = "default"
    UNPACK_TO_DEST = "unpack_to_dest"


class SyncMode(enum.Enum):
    FULL = "full"
    DOUBLE_BUFFERED = "double_buffered"


class Selection(enum.Enum):
    """A three-state kernel-wide policy selection."""

    AUTO = "auto"
    ENABLED = "enabled"
    DISABLED = "disabled"


class Preference(enum.Enum):
    """Pass options that prefer full-fp32 lowering."""

    REDUCE_FULL_FP32 = "reduce-full-fp32"
    MATMUL_FULL_FP32 = "matmul-full-fp32"


class LegalityCondition(enum.Enum):
    """What a strategy needs from an op's operands and result to be legal."""

    OPERANDS_FROM_DFB_SAME_TILE = "operands_from_dfb_same_tile"
    FLOAT_RESULT = "float_result"


# The search keeps each domain as a set of values in an int: a bit per value.
WIDTH_BIT = {DestWidth.BITS16: 1, DestWidth.BITS32: 2}
MODE_BIT = {UnpackMode.DEFAULT: 1, UnpackMode.UNPACK_TO_DEST: 2}
ALL_WIDTHS = 3
ALL_MODES = 3


def width_mask(widths: frozenset[DestWidth]) -> int:
    mask = 0
    for width in widths:
        mask |= WIDTH_BIT[width]
    return mask


def mode_mask(modes: frozenset[UnpackMode]) -> int:
    mask = 0
    for mode in modes:
        mask |= MODE_BIT[mode]
    return mask


def widths_of(mask: int) -> frozenset[DestWidth]:
    return frozenset(w for w, bit in WIDTH_BIT.items() if mask & bit)


def modes_of(mask: int) -> frozenset[UnpackMode]:
    return frozenset(m for m, bit in MODE_BIT.items() if mask & bit)


# ----------------------------------------------------------------------- generations


class AutoSync(enum.Enum):
    """How a generation's resolver picks DST synchronization when the policy says auto."""

    DOUBLE_BUFFERED = "double_buffered"  # always; no op's DST residency is checked
    BY_CAPACITY = "by_capacity"  # double-buffered when every residency fits it, else full


class PolicyValues(enum.Enum):
    """How a generation reads policy attribute values."""

    COERCED = "coerced"  # as the pass options are read: 'true' and 1 are true
    TYPED = "typed"  # a boolean attribute must be a boolean, the unpack set a list of indices


class Generation(NamedTuple):
    """A generation of TT-Lang's resolver: the rules in which generations differ."""

    name: str
    summary: str
    auto_sync: AutoSync
    policy_values: PolicyValues


# The generation of tables that name none (written by hand): the resolver as it was before
# generations were data, which the seed generation's switches also describe.
UNNAMED_GENERATION = Generation("", "tables that name no generation", AutoSync.DOUBLE_BUFFERED, PolicyValues.COERCED)


class DstCapacity(NamedTuple):
    """The DST register: ``physical_tiles`` 32x32 tiles, halved under each sync mode in
    ``halved_for_sync`` and again for each width in ``halved_for_width``."""

    physical_tiles: int
    halved_for_sync: frozenset[SyncMode]
    halved_for_width: frozenset[DestWidth]

    def tiles(self, width: DestWidth, sync: SyncMode) -> int:
        tiles = self.physical_tiles
        if sync in self.halved_for_sync:
            tiles //= 2
        if width in self.halved_for_width:
            tiles //= 2
        return tiles


# ------------------------------------------------------------------------ vocabulary


class ElementInfo(NamedTuple):
    """A tile element type: ``bits`` of storage per element, and whether it is a float."""

    name: str
    bits: int
    is_float: bool


def undeclared_element(bits: int, is_float: bool) -> ElementInfo:
    """An integer or float type the tables do not declare, as relation rules see it.

    TT-Lang's resolver decides "32-bit element" by the type's bit count, so the type is a
    32-bit element when it has 32 bits and a 16-bit one otherwise. It has no name: a rule
    that names element types (e.g. the unpack rule about f32) never matches it.
    """
    return ElementInfo("", DestWidth.BITS32 if bits == DestWidth.BITS32 else DestWidth.BITS16, is_float)


class StrategyInfo(NamedTuple):
    """An execution strategy; ``gated_by_fpu_binary_policy``: enable-fpu-binary-ops
    false (or ttl.enable_fpu_binary_ops false) removes it."""

    name: str
    gated_by_fpu_binary_policy: bool


class FullFp32KindInfo(NamedTuple):
    """An accumulation category with a configurable full-fp32 lowering, and the pass
    option that prefers it."""

    name: str
    preference: Preference


class ArchitectureInfo(NamedTuple):
    """A typed device architecture and its runtime device-discovery name (None: the
    runtime does not report it)."""

    name: str
    runtime_name: str | None


# --------------------------------------------------------------------- op semantics


class Selected(NamedTuple):
    """A fixed name, or a name chosen by an op attribute (e.g. tile_bcast's ``bcast``)."""

    attribute: str | None
    fixed: str | None
    values: tuple[tuple[str, str], ...] = ()  # (attribute value, name), in spec order

    def select(self, attrs: Mapping[str, str]) -> str | None:
        """The selected name, or None when the selecting attribute is missing or unknown."""
        if self.attribute is None:
            return self.fixed
        chosen = attrs.get(self.attribute)
        return next((v for key, v in self.values if key == chosen), None)

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.values)


class OperandSemantics(NamedTuple):
    name: str
    optional: bool
    initialized_by_op: bool
    # Routed DFB when the kernel reads it from a dataflow buffer, DST when a tile op computes
    # it (TT-Lang's tile_accumulate contribution); its strategies' route is DST.
    by_producer: bool = False


class StrategySemantics(NamedTuple):
    """One way to execute an op; ``strategy`` is None for fixed execution semantics."""

    strategy: str | None
    legal_when: tuple[LegalityCondition, ...]
    routes: tuple[Route, ...]  # one per operand
    accumulates: bool


class OpSemantics(NamedTuple):
    """Target-independent execution semantics of one tile operation."""

    name: str
    family: str
    primitive: Selected
    operands: tuple[OperandSemantics, ...]
    result_in_dst: bool
    has_result: bool
    full_fp32: Selected | None
    strategies: tuple[StrategySemantics, ...]  # resolver order
    # The integer op attribute giving the DST slots the op holds at once (TT-Lang's
    # requiredDstSlots); None: one slot.
    dst_slots_attribute: str | None = None
    # The op attribute whose value is the result's element type (a typecast's); None: the
    # result has its first operand's type unless the kernel description gives one.
    result_element_attribute: str | None = None

    @property
    def has_alternatives(self) -> bool:
        return len(self.strategies) > 1

    @property
    def data_operands(self) -> tuple[int, ...]:
        """Operand numbers that carry tile data in some strategy (listed in kernels)."""
        return tuple(
            i for i in range(len(self.operands))
            if any(s.routes[i] is not Route.NONE for s in self.strategies)
        )

    @property
    def initialized_operands(self) -> tuple[int, ...]:
        return tuple(i for i, o in enumerate(self.operands) if o.initialized_by_op)


# -------------------------------------------------------------------- relation rules


class Match(NamedTuple):
    """The condition of a relation rule; an empty set matches anything."""

    primitives: frozenset[str] = frozenset()
    elements: frozenset[str] = frozenset()
    element_bits: frozenset[int] = frozenset()
    element_float: bool | None = None
    routes: frozenset[Route] = frozenset()

    def matches(self, primitive: str, element: ElementInfo, route: Route | None) -> bool:
        return (
            (not self.primitives or primitive in self.primitives)
            and (not self.elements or element.name in self.elements)
            and (not self.element_bits or element.bits in self.element_bits)
            and (self.element_float is None or element.is_float == self.element_float)
            and (not self.routes or (route is not None and route in self.routes))
        )


class WidthRule(NamedTuple):
    when: Match
    widths: frozenset[DestWidth]


class UnpackRule(NamedTuple):
    """Allows every pairing of ``widths`` and ``modes``."""

    when: Match
    widths: frozenset[DestWidth]
    modes: frozenset[UnpackMode]


class FullFp32Support(NamedTuple):
    supported: bool
    warning: str | None = None


# ---------------------------------------------------------------------- runtime APIs


class Translation(enum.Enum):
    """Which compiler-to-runtime field mapping a runtime API uses."""

    COMPUTE_CONFIG_DESCRIPTOR = "compute_config_descriptor"
    COMPUTE_GEN1_CONFIG = "compute_gen1_config"


class RuntimeVersion(NamedTuple):
    name: str
    num_circular_buffers: int


class RuntimeApi(NamedTuple):
    """A runtime configuration API and what its translation needs."""

    name: str
    translation: Translation
    default_math_fidelity: str
    versions: tuple[RuntimeVersion, ...]
    pinned_version: str

    def num_circular_buffers(self, version: str | None = None) -> int:
        wanted = version or self.pinned_version
        for entry in self.versions:
            if entry.name == wanted:
                return entry.num_circular_buffers
        known = ", ".join(v.name for v in self.versions)
        raise ValueError(f"unknown {self.name} runtime version {wanted!r}; known: {known}")
