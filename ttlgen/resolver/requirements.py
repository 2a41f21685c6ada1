"""Requirements as the collection and the search hold them.

Everything that is the same for every op with the same name, operand element types
and operand shape is built once per target as a template (:class:`OptionTemplate`,
made of :class:`RequirementTemplate`); a kernel op only pairs a shared template with
its id and its dataflow buffers. Domains are bit masks (``semantics.WIDTH_BIT`` and
``MODE_BIT``).

Records the collection and the search read in their inner loops are slotted dataclasses
(reading a slot costs about half of reading a NamedTuple field); the others, like the
table records, are NamedTuples, which are several times cheaper to define at import,
a cost every ttlgen command pays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .diagnostics import Requirement, Source
from .semantics import LegalityCondition, OpSemantics, Route, StrategySemantics

# The search's variables: the kernel-wide DST width, and one unpack mode per dataflow
# buffer, named by the buffer's index.
WIDTH = -1

# (dfb, allowed unpack-mode mask) for every buffer an option restricts.
DfbModes = tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class RequirementTemplate:
    """One requirement of an op shape. ``position``: the kernel operand whose dataflow
    buffer it restricts (None: it restricts only the DST width)."""

    source: Source
    op_name: str | None
    operand: int | None  # the operand number in the op's spec (None: the result)
    primitive: str | None
    element: str | None
    route: Route | None
    widths: int
    modes: int
    position: int | None


# Built for every fixed requirement of a kernel and for each narrowing: a slotted
# dataclass is the cheapest record to build (a NamedTuple's __new__ is slower still).
@dataclass(slots=True)
class Req:
    """A requirement of one op (or of the policy): a template with the op's id and the
    buffer it restricts. The domains keep the one that last narrowed each variable as
    the evidence of a conflict."""

    template: RequirementTemplate
    op: str | None
    dfb: int | None


@dataclass(frozen=True, slots=True)
class OptionTemplate:
    """One strategy of an op shape: its requirements, the DST widths they all allow,
    and the unpack modes they allow per kernel operand position."""

    strategy: str | None
    requirements: tuple[RequirementTemplate, ...]
    widths: int
    modes: tuple[tuple[int, int], ...]  # (position, allowed mode mask)


class Watch(NamedTuple):
    """Narrowing the buffer of kernel operand ``position`` (``WIDTH``: the DST width) to
    the single value ``value`` (a mask bit) rules out one of an op's options, so the op
    must be rechecked."""

    position: int
    value: int


@dataclass(frozen=True, slots=True)
class OpShape:
    """The legal options of every op of one shape, and what to watch for them."""

    alternatives: bool  # the op's spec declares more than one strategy
    options: tuple[OptionTemplate, ...]
    watches: tuple[Watch, ...]


# One per op the search decides, so built as cheaply as a record can be: a frozen
# dataclass's __init__ costs several times more (it sets each field through object).
@dataclass(slots=True)
class SearchOp:
    """An op whose strategy the search decides: its id, the buffer of each kernel operand
    (None: a DST value), its options, each option's unpack modes for its buffers, and
    what to watch (by kernel operand position, as in its shape)."""

    op: str
    dfbs: tuple[int | None, ...]
    options: tuple[OptionTemplate, ...]
    modes: tuple[DfbModes, ...]  # per option
    watches: tuple[Watch, ...]

    def requirements(self, option: int) -> list[Req]:
        dfbs = self.dfbs
        return [
            Req(t, self.op, dfbs[t.position] if t.position is not None else None)
            for t in self.options[option].requirements
        ]


class Candidate(NamedTuple):
    """What the collection needs from one strategy of an op."""

    strategy: str | None
    gated: bool  # removed when the FPU binary policy is disabled
    needs_same_tile: bool
    needs_float: bool
    routes: tuple[tuple[int, Route], ...]  # (operand number, route) per kernel operand
    # The kernel operand (by position) routed by its producer: DFB when it is read from a
    # dataflow buffer, its strategy's route (DST) when a tile op computes it.
    by_producer: int | None = None

    @classmethod
    def of(cls, sem: StrategySemantics, data: tuple[int, ...], gated: frozenset[str], op: OpSemantics | None = None) -> Candidate:
        operands = op.operands if op is not None else ()
        return cls(
            strategy=sem.strategy,
            gated=sem.strategy in gated,
            needs_same_tile=LegalityCondition.OPERANDS_FROM_DFB_SAME_TILE in sem.legal_when,
            needs_float=LegalityCondition.FLOAT_RESULT in sem.legal_when,
            routes=tuple((number, sem.routes[number]) for number in data),
            by_producer=next((k for k, number in enumerate(data) if number < len(operands) and operands[number].by_producer), None),
        )

    def produced(self, from_dfb: bool) -> Candidate:
        """This candidate with its producer-routed operand read from a dataflow buffer
        (``from_dfb``) or from DST."""
        k = self.by_producer
        if k is None or not from_dfb:
            return self
        routes = list(self.routes)
        routes[k] = (routes[k][0], Route.DFB)
        return self._replace(routes=tuple(routes))


@dataclass(frozen=True, slots=True)
class OpInfo:
    """What the collection needs from an op's semantics, prepared once per op name."""

    sem: OpSemantics
    data: tuple[int, ...]  # operand numbers a kernel lists
    min_operands: int
    fixed_primitive: str | None  # None: selected by an attribute
    candidates: tuple[Candidate, ...]

    @classmethod
    def of(cls, sem: OpSemantics, gated: frozenset[str]) -> OpInfo:
        data = sem.data_operands
        return cls(
            sem=sem,
            data=data,
            min_operands=sum(1 for i in data if not sem.operands[i].optional),
            fixed_primitive=sem.primitive.fixed if sem.primitive.attribute is None else None,
            candidates=tuple(Candidate.of(s, data, gated, sem) for s in sem.strategies),
        )


def requirement(req: Req | None) -> Requirement | None:
    """The public form of a requirement, for conflict evidence."""
    if req is None:
        return None
    t = req.template
    return Requirement(
        t.source, req.op, t.op_name, t.operand, t.primitive, t.element, t.route, req.dfb, t.widths, t.modes
    )
