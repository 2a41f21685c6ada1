"""Move inits and data-format reconfigurations out of loops that do not change their state.

An op init, the copy init, an uninit or a reconfiguration (by its :class:`~ttlgen.plan.
kernel_ir.Step`) sets some hardware state (what the API spec says its form ``configures``).
Inside a loop it is moved before the loop when nothing in the loop sets any of that state
differently: every call in the loop's body that touches it is this same call, unconditional
at the loop's top level, with arguments that do not depend on the loop (its variable or
anything declared inside). Then every iteration finds the state as the first one left it,
so one call before the loop is the same program. An init whose op leaves state to undo
(reduce's packer masks) is moved likewise with its uninit after the loop, when the two are
the loop's only calls touching that state. Loops are treated innermost first, so a call
can leave several loops. Nothing moves out of a condition.

Then a call that would set state to what the same call already set, with nothing between
changing it, is dropped (:func:`drop_repeated`): a hoisted init that repeats the init of
the computation before the loop, for instance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ttlgen.model.tt_metal_api import State
from ttlgen.plan import kernel_ir as ir

Effects = Callable[[ir.Call], frozenset[State]]

HOISTABLE = frozenset(
    [ir.Step.OP_INIT, ir.Step.OP_UNINIT, ir.Step.COPY_INIT, ir.Step.RECONFIG_SRCA, ir.Step.RECONFIG_SRCB, ir.Step.RECONFIG_PACK]
)


def hoist(body: tuple[ir.Stmt, ...], effects: Effects) -> tuple[ir.Stmt, ...]:
    """``body`` with inits and reconfigurations out of the loops that leave them alone."""
    # Each call object is looked at many times (once per loop it is in, then again when
    # repeats are dropped); by identity, as hashing a call walks all its arguments.
    known: dict[int, tuple[ir.Call, frozenset[State]]] = {}

    def remembered(call: ir.Call) -> frozenset[State]:
        found = known.get(id(call))
        if found is None:
            found = known[id(call)] = (call, effects(call))  # the call kept: its id stays its own
        return found[1]

    return drop_repeated(tuple(_body(body, remembered)), remembered)


Known = dict[State, ir.Call]  # the call that last set each state, where it is known


def drop_repeated(body: tuple[ir.Stmt, ...], effects: Effects) -> tuple[ir.Stmt, ...]:
    """``body`` without the init and reconfiguration calls that repeat the state they set."""
    kept, _ = _drop(body, {}, effects)
    return tuple(kept)


def _drop(body: Sequence[ir.Stmt], known: Known, effects: Effects) -> tuple[list[ir.Stmt], Known]:
    out: list[ir.Stmt] = []
    known = dict(known)
    for stmt in body:
        if isinstance(stmt, ir.Call):
            state = effects(stmt)
            if state and stmt.step in HOISTABLE and all(known.get(s) == stmt for s in state):
                continue
            for s in state:
                known[s] = stmt
            out.append(stmt)
        elif isinstance(stmt, ir.For):
            touched = {s for c in ir.calls(stmt.body) for s in effects(c)}
            # Each iteration starts from what the previous one left: known only if untouched.
            entry = {s: c for s, c in known.items() if s not in touched}
            inner, _ = _drop(stmt.body, entry, effects)
            out.append(ir.For(stmt.var, stmt.count, tuple(inner), stmt.generated))
            known = entry
        elif isinstance(stmt, ir.If):
            then, after_then = _drop(stmt.then, known, effects)
            orelse, after_else = _drop(stmt.orelse, known, effects)
            out.append(ir.If(stmt.condition, tuple(then), tuple(orelse)))
            known = {s: c for s, c in after_then.items() if after_else.get(s) == c}
        else:
            out.append(stmt)
    return out, known


def _body(stmts: Sequence[ir.Stmt], effects: Effects) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for stmt in stmts:
        if isinstance(stmt, ir.For):
            inner = _body(stmt.body, effects)
            before, inner, after = _loop(stmt.var, inner, effects)
            out.extend(before)
            out.append(ir.For(stmt.var, stmt.count, tuple(inner), stmt.generated))
            out.extend(after)
        elif isinstance(stmt, ir.If):
            out.append(ir.If(stmt.condition, tuple(_body(stmt.then, effects)), tuple(_body(stmt.orelse, effects))))
        else:
            out.append(stmt)
    return out


def _bound(var: str, body: Sequence[ir.Stmt]) -> set[str]:
    """The names that change from one iteration to the next: the loop's and the body's own."""
    names = {var}
    for stmt in ir.walk(body):
        if isinstance(stmt, ir.For):
            names.add(stmt.var)
        elif isinstance(stmt, ir.Declare):
            names.add(stmt.name)
    return names


def _invariant(call: ir.Call, bound: set[str]) -> bool:
    return not any(ir.uses((call,), name) for name in bound)


def _loop(var: str, body: list[ir.Stmt], effects: Effects) -> tuple[list[ir.Stmt], list[ir.Stmt], list[ir.Stmt]]:
    bound = _bound(var, body)
    # Which calls of the loop touch each state, in program order, each with its index in the
    # body when it is a top-level statement: looked up, not searched, so a body of thousands
    # of calls stays linear. Calls are compared, never hashed (hashing one walks its arguments).
    touching_state: dict[State, list[Touching]] = {}
    order = 0
    for index, stmt in enumerate(body):
        nested = ir.calls((stmt,))
        for call in nested:
            for s in effects(call):
                touching_state.setdefault(s, []).append(Touching(order, call, index if call is stmt else None))
            order += 1
    # The states every call touching them sets alike: all equal to the first (equality is
    # transitive, so one pass per state decides it).
    uniform = {s: all(t.call is calls[0].call or t.call == calls[0].call for t in calls) for s, calls in touching_state.items()}
    before: list[ir.Stmt] = []
    after: list[ir.Stmt] = []
    removed: set[int] = set()
    top = [(i, s) for i, s in enumerate(body) if isinstance(s, ir.Call) and s.step in HOISTABLE]
    for index, call in top:
        if index in removed:
            continue
        state = effects(call)
        if not state or not _invariant(call, bound):
            continue
        if all(uniform[s] for s in state):
            # Every call touching its state is this one (it is one of them): each top-level copy goes.
            before.append(call)
            removed.update(t.index for s in state for t in touching_state[s] if t.index is not None)
            continue
        if any(len(touching_state[s]) > 2 for s in state):
            continue  # moved with its uninit only when the two are all that touch the state
        touching = sorted({t.order: t for s in state for t in touching_state[s]}.values(), key=lambda t: t.order)
        pair = _init_and_uninit(call, index, touching, bound, effects)
        if pair is not None:
            before.append(call)
            after.append(body[pair])
            removed.update((index, pair))
    kept = [s for i, s in enumerate(body) if i not in removed]
    return before, kept, after


@dataclass(frozen=True)
class Touching:
    """A call of a loop's body that touches a state: its place among the body's calls, and
    its index in the body when it is a top-level statement (None: nested)."""

    order: int
    call: ir.Call
    index: int | None


def _init_and_uninit(init: ir.Call, start: int, touching: list[Touching], bound: set[str], effects: Effects) -> int | None:
    """The body index of ``init``'s uninit when the two are the only calls touching their
    state, each once, the uninit after the init (at ``start``), both unconditional and
    loop-invariant."""
    if init.step is not ir.Step.OP_INIT or len(touching) != 2 or touching[0].call != init:
        return None
    uninit = touching[1]
    if uninit.call.step is not ir.Step.OP_UNINIT or effects(uninit.call) != effects(init) or not _invariant(uninit.call, bound):
        return None
    return uninit.index if uninit.index is not None and uninit.index > start else None
