"""Input types: the tile operations of one compute function, in walk order.

Element types are names the tables declare (``ElementType.F32`` or ``"f32"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple


# Kernels can hold tens of thousands of these: tuples keep them small, which keeps the
# resolver's walk over them in cache.
@dataclass(frozen=True, slots=True)
class DfbOperand:
    """A tile read from dataflow buffer ``dfb`` (its finalized index) at ``tile``."""

    dfb: int
    tile: tuple[int, int] = (0, 0)


@dataclass(frozen=True, slots=True)
class ValueOperand:
    """The DST-resident result of an earlier op, by that op's id."""

    value: str


Operand = DfbOperand | ValueOperand


_NO_ATTRS: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class TileOp:
    """One tile operation. ``operands`` lists only tile-data operands, in spec order.

    ``result`` (an element type) defaults to the first operand's element type. ``attrs``
    holds op attributes such as ``bcast`` or ``reduce_dim``; ``strategy`` is an explicit
    ttl.tile_execution_strategy.
    """

    id: str
    op: str
    operands: tuple[Operand, ...] = ()
    result: str | None = None
    attrs: Mapping[str, str] = field(default_factory=lambda: _NO_ATTRS)
    strategy: str | None = None


class KernelDescription(NamedTuple):
    """One compute function: its finalized dataflow buffers (index -> element type) and
    its tile operations."""

    dfbs: Mapping[int, str]
    ops: tuple[TileOp, ...]
    name: str = "kernel"
