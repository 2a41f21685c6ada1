"""The resolver's input tables: everything a spec decides, as one typed record.

The engine imports no table. Whoever runs it passes a :class:`Tables` to
:class:`~.lookup.Catalog`: the plan stage of ttlgen builds one from its model
(``ttlgen.plan.tables``), and the generated ``ttl_kernel_config`` package renders one as
literals (its ``vocabulary``, ``ops_table`` and ``targets`` modules) beside a verbatim
copy of the engine modules.

Names a spec declares (element types, primitives, strategies, full-fp32 kinds,
architectures) are typed ``str`` throughout the engine, and both producers of tables
fill them with members of ``enum.StrEnum`` classes (``ElementType``, ``Primitive``,
``Strategy``, ``FullFp32Kind``, ``Architecture``). The generated package renders those
classes as source, so its users import ``ElementType.F32`` and type checkers see every
member; the plan stage creates the same classes from the model with the functional API.
A ``StrEnum`` member *is* a ``str`` (equal to its value, with the same hash), so:

- the engine is written once against ``str`` and never constructs a vocabulary value:
  what it hands back (a plan's strategies, ``architecture_from_runtime_name``) is the
  tables' own object, i.e. the caller's enum member;
- a kernel description may name an element type by member or by plain string, and
  tables written by hand (tests) may use plain strings;
- dictionary lookups in the search stay on ``str.__hash__`` (``Enum.__hash__`` runs
  Python code on every lookup).

Typing the engine against per-vocabulary protocols would need a type parameter per
vocabulary on every record and function to hand back the caller's types; building the
enums inside the engine would hide the generated package's members from type checkers.

Runtime enum values (``UnpackToDestMode``, ``MathFidelity``) are ``enum.IntEnum``
classes in the tables; the runtime translation returns their members.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import NamedTuple

from .semantics import (
    UNNAMED_GENERATION,
    ArchitectureInfo,
    DstCapacity,
    ElementInfo,
    FullFp32KindInfo,
    FullFp32Support,
    Generation,
    OpSemantics,
    RuntimeApi,
    StrategyInfo,
    UnpackRule,
    WidthRule,
)


class WidthTable(NamedTuple):
    """Destination-width rules, first match wins. ``origin``: the target itself, or the
    ``<relation set>.<table>`` it shares with a ``review`` note saying why."""

    origin: str
    review: str | None
    rules: tuple[WidthRule, ...]


class UnpackTable(NamedTuple):
    """Rules for one use of a dataflow buffer, first match wins (see ``WidthTable``)."""

    origin: str
    review: str | None
    rules: tuple[UnpackRule, ...]


class TargetTable(NamedTuple):
    """One architecture under one runtime configuration API. ``architecture`` None: the
    compiler-testing environment without an architecture."""

    name: str
    summary: str
    architecture: str | None
    default_for_architecture: bool
    runtime_api: RuntimeApi | None
    dfb_capacity: int
    dest_width: WidthTable
    dfb_unpack: UnpackTable
    # How an explicit ttl.unpack_to_dest_fp32 set is checked: entries narrow uses of
    # buffers of these element types; entries for other types need 32-bit DST (or are
    # inert); entries for buffers the kernel does not bind are rejected (or accepted).
    unpack_effective_for: frozenset[str]
    unpack_other_entries_need_32bit_dest: bool
    unpack_unbound_entries_rejected: bool
    full_fp32: Mapping[str, FullFp32Support]  # full-fp32 kind -> support
    generation: Generation = UNNAMED_GENERATION  # the resolver generation the target follows
    # The DST register (None: unknown; a generation that checks residency needs it).
    dst_capacity: DstCapacity | None = None
    # What range diagnostics say the capacity is ("for <description>"); None: they give the
    # range alone (the generation names no capacity).
    dfb_capacity_description: str | None = None


class RejectedTarget(NamedTuple):
    """A recognized target that cannot be compiled for, with the reason. It keeps its
    architecture's DFB capacity, which TT-Lang sizes buffer indices by before it rejects
    the architecture."""

    name: str
    architecture: str | None
    default_for_architecture: bool
    reason: str
    dfb_capacity: int


class RuntimeEnums(NamedTuple):
    unpack_to_dest_mode: type[enum.IntEnum]  # has members UnpackToDestFp32 and Default
    math_fidelity: type[enum.IntEnum]


class Tables(NamedTuple):
    """Every spec-derived fact the resolver uses."""

    elements: tuple[ElementInfo, ...]
    primitives: tuple[str, ...]
    strategies: tuple[StrategyInfo, ...]  # the order the resolver tries them in
    full_fp32_kinds: tuple[FullFp32KindInfo, ...]
    architectures: tuple[ArchitectureInfo, ...]
    ops: Mapping[str, OpSemantics]
    runtime_apis: tuple[RuntimeApi, ...]
    runtime_enums: RuntimeEnums
    targets: tuple[TargetTable, ...]
    rejected: tuple[RejectedTarget, ...]
    no_target: str | None  # the target used when a kernel names neither target nor device
    generations: tuple[Generation, ...] = ()
    dst_capacity: DstCapacity | None = None
