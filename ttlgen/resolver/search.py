"""The kernel-wide domains and the joint search over ops with strategy alternatives.

The search is the one the design specifies: each step takes the unresolved op with the
fewest compatible options (ties: earliest in walk order) and tries its options in
strategy order on a copy of the domains, backtracking on failure. It is implemented
with propagation instead of recounting every op at every step, and returns the same
answer:

- An op with one compatible option would be picked next anyway, and applying forced
  options commutes, so forced ops are applied as soon as they have one option; an op
  with none is the conflict the plain search would hit. The next decision is then the
  earliest unresolved op, exactly as the fewest-first rule picks it.
- Every domain has two values (16/32 bits; default/unpack-to-DST), every relation is a
  product of allowed widths and modes, and every op has at most two options (the op
  vocabulary allows at most two strategies), so the problem is 2-SAT. When an option's
  propagation ends without conflict, the rest is satisfiable exactly when it was before
  the decision; the plain search would therefore never come back to take the other
  option with success. A decision whose first option conflicts takes the second; if
  that conflicts too, no plan exists.
- An op is rechecked only when a variable it depends on narrows to a value that rules
  out one of its options, so each op is looked at a constant number of times.
"""

from __future__ import annotations

from collections import deque

from .diagnostics import Conflict, ConflictKind
from .requirements import WIDTH, Req, RequirementTemplate, SearchOp, requirement
from .semantics import ALL_MODES, ALL_WIDTHS


def conflict(kind: ConflictKind, req: Req, by: Req | None) -> Conflict:
    found = requirement(req)
    assert found is not None
    return Conflict(kind, found, requirement(by))


class Domains:
    """Kernel-wide domains as bit masks, with the requirement that last narrowed each,
    and an undo trail: for each narrowing, the variable (``WIDTH`` or a buffer index),
    its mask before and the requirement that had narrowed it before (three lists rather
    than a record per entry: entries are made on the search's hottest path)."""

    __slots__ = ("m", "m_by", "trail", "trail_evidence", "trail_masks", "w", "w_by")

    def __init__(self) -> None:
        self.w = ALL_WIDTHS
        self.w_by: Req | None = None
        self.m: dict[int, int] = {}  # dfb -> unpack modes; absent: all
        self.m_by: dict[int, Req] = {}
        self.trail: list[int] = []  # the variables narrowed, in order
        self.trail_masks: list[int] = []
        self.trail_evidence: list[Req | None] = []

    def apply(self, req: Req) -> Conflict | None:
        """Narrow the domains by one requirement; the conflict if one becomes empty."""
        return self.narrow(req.template, req.op, req.dfb, req)

    def apply_option(self, op: SearchOp, option: int) -> None:
        """Apply an option that is compatible with the domains (so nothing conflicts)."""
        dfbs, op_id = op.dfbs, op.op
        for t in op.options[option].requirements:
            self.narrow(t, op_id, dfbs[t.position] if t.position is not None else None, None)

    def narrow(self, t: RequirementTemplate, op: str | None, dfb: int | None, req: Req | None) -> Conflict | None:
        """``apply`` for a template with its op and buffer; ``req`` (that requirement as
        a record) is built here only if it becomes evidence."""
        widths = t.widths
        if widths != ALL_WIDTHS:
            narrowed = self.w & widths
            if not narrowed:
                return conflict(ConflictKind.DEST_WIDTH, req or Req(t, op, dfb), self.w_by)
            if narrowed != self.w:
                req = req or Req(t, op, dfb)
                self.trail.append(WIDTH)
                self.trail_masks.append(self.w)
                self.trail_evidence.append(self.w_by)
                self.w = narrowed
                self.w_by = req
        modes = t.modes
        if dfb is not None and modes != ALL_MODES:
            current = self.m.get(dfb, ALL_MODES)
            narrowed = current & modes
            if not narrowed:
                return conflict(ConflictKind.UNPACK_MODE, req or Req(t, op, dfb), self.m_by.get(dfb))
            if narrowed != current:
                self.trail.append(dfb)
                self.trail_masks.append(current)
                self.trail_evidence.append(self.m_by.get(dfb))
                self.m[dfb] = narrowed
                self.m_by[dfb] = req or Req(t, op, dfb)
        return None

    def first_conflict(self, op: SearchOp, option: int) -> Conflict:
        for req in op.requirements(option):
            if not self.w & req.template.widths:
                return conflict(ConflictKind.DEST_WIDTH, req, self.w_by)
            dfb = req.dfb
            if dfb is not None and not self.m.get(dfb, ALL_MODES) & req.template.modes:
                return conflict(ConflictKind.UNPACK_MODE, req, self.m_by.get(dfb))
        raise AssertionError("option is compatible")

    def undo(self, mark: int) -> None:
        trail, masks, evidence = self.trail, self.trail_masks, self.trail_evidence
        while len(trail) > mark:
            var, mask, by = trail.pop(), masks.pop(), evidence.pop()
            if var == WIDTH:
                self.w, self.w_by = mask, by
            else:
                self.m[var] = mask
                if by is None:
                    self.m_by.pop(var, None)
                else:
                    self.m_by[var] = by


def search(dom: Domains, ops: list[SearchOp]) -> tuple[list[int], Conflict | None]:
    """Choose an option for every op; returns (option index per op, conflict or None)."""
    n = len(ops)
    choice = [-1] * n
    chosen_trail: list[int] = []
    # watchers[(variable, value)]: ops to recheck when the variable (WIDTH or a buffer)
    # narrows to that single value (mask bit 1 or 2). An op is listed only if the value
    # rules out one of its options, so narrowing that leaves every option compatible
    # costs nothing.
    watchers: dict[tuple[int, int], list[int]] = {}
    for i, op in enumerate(ops):
        dfbs = op.dfbs
        for position, value in op.watches:
            variable = WIDTH if position == WIDTH else dfbs[position]
            assert variable is not None
            key = (variable, value)
            found = watchers.get(key)
            if found is None:
                watchers[key] = [i]
            else:
                found.append(i)
    m = dom.m

    def settle(i: int) -> Conflict | None:
        op = ops[i]
        found = -1
        w = dom.w
        for k, option in enumerate(op.options):
            if not w & option.widths:
                continue
            for dfb, modes in op.modes[k]:
                if not m.get(dfb, ALL_MODES) & modes:
                    break
            else:
                if found >= 0:
                    return None  # still two compatible options
                found = k
        if found < 0:
            return dom.first_conflict(op, len(op.options) - 1)
        choice[i] = found
        chosen_trail.append(i)
        if narrows(op, found):
            dom.apply_option(op, found)
        return None

    def narrows(op: SearchOp, k: int) -> bool:
        w = dom.w
        if w & op.options[k].widths != w:
            return True
        for dfb, modes in op.modes[k]:
            current = m.get(dfb, ALL_MODES)
            if current & modes != current:
                return True
        return False

    def propagate(pos: int, pending: deque[int]) -> Conflict | None:
        trail = dom.trail
        while True:
            while pos < len(trail):
                var = trail[pos]
                value = dom.w if var == WIDTH else m[var]
                for j in watchers.get((var, value), ()):
                    if choice[j] < 0:
                        pending.append(j)
                pos += 1
            if not pending:
                return None
            j = pending.popleft()
            if choice[j] < 0:
                found = settle(j)
                if found is not None:
                    return found

    def undo(mark: int, chosen_mark: int) -> None:
        dom.undo(mark)
        while len(chosen_trail) > chosen_mark:
            choice[chosen_trail.pop()] = -1

    failed = propagate(len(dom.trail), deque(range(n)))
    if failed is not None:
        return choice, failed
    pending: deque[int] = deque()
    for i in range(n):
        if choice[i] >= 0:
            continue
        op = ops[i]
        mark, chosen_mark = len(dom.trail), len(chosen_trail)
        for k in range(len(op.options)):
            choice[i] = k
            chosen_trail.append(i)
            if not narrows(op, k):
                failed = None  # nothing changes, so nothing can conflict
                break
            dom.apply_option(op, k)  # after propagation, every undecided op has two compatible options
            failed = propagate(mark, pending)
            if failed is None:
                break
            pending.clear()
            undo(mark, chosen_mark)
        if failed is not None:
            return choice, failed
    return choice, None
