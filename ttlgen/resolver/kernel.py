"""Input types: the tile operations of one compute function, in walk order.

Element types are names the tables declare (``ElementType.F32`` or ``"f32"``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

# Kernels can hold tens of thousands of these: tuples keep them small, which keeps the
# resolver's walk over them in cache.
_MAP = re.compile(r"\s*\(([^()]*)\)\s*->\s*\((.*)\)\s*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESULT = re.compile(r"[A-Za-z0-9_+\-*\s]+")


def canonical_map(text: str) -> str:
    """An affine indexing map as TT-Lang writes it (``(row, col) -> (row, 0)``) with its
    dimensions renamed by position (``(d0, d1) -> (d0, 0)``) and spacing dropped, so two
    maps that address the same tile coordinates compare equal. Raises ValueError for text
    that is no such map (symbols, ``floordiv`` and ``mod`` are not taken)."""
    found = _MAP.fullmatch(text)
    if found is None:
        raise ValueError(f"{text!r} is not an indexing map of the form '(d0, d1) -> (d0, d1)'")
    dims = [d.strip() for d in found.group(1).split(",")] if found.group(1).strip() else []
    if any(not _NAME.fullmatch(d) for d in dims) or len(set(dims)) != len(dims):
        raise ValueError(f"{text!r}: the dimensions must be distinct names")
    rename = {d: f"d{i}" for i, d in enumerate(dims)}
    results = [r.strip() for r in found.group(2).split(",")]
    out = []
    for result in results:
        if not result or not _RESULT.fullmatch(result):
            raise ValueError(f"{text!r}: result {result!r} is not an affine expression of the dimensions")
        for name in _NAME.findall(result):
            if name not in rename and not name.isdigit():
                raise ValueError(f"{text!r}: {name!r} is not a dimension of the map")
        out.append(_NAME.sub(lambda m: rename.get(m.group(0), m.group(0)), "".join(result.split())))
    return f"({', '.join(rename.values())}) -> ({', '.join(out)})"


@dataclass(frozen=True, slots=True)
class DfbOperand:
    """A tile read from dataflow buffer ``dfb`` (its finalized index) at ``tile``, or at
    the coordinates of its indexing ``map`` (as TT-Lang's ttl.compute states it; kept in
    ``canonical_map`` form). Two operands address the same tile coordinates when their
    maps are equal, or, without maps, their tiles are."""

    dfb: int
    tile: tuple[int, int] = (0, 0)
    map: str | None = None

    def __post_init__(self) -> None:
        if self.map is not None:
            object.__setattr__(self, "map", canonical_map(self.map))

    @property
    def coordinates(self) -> object:
        """What the same-tile-coordinates rule compares."""
        return self.tile if self.map is None else ("map", self.map)


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
