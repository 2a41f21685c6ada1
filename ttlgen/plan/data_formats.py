"""The data formats SrcA, SrcB and the packer hold, followed through a compute program.

A call that configures a data format (the start-up, a reconfiguration, a full init)
loads a register with the format of the CB one of its arguments names; the API spec says
which argument (a form's ``formats``, swapped by its ``swap_sources`` argument, as a
matmul's reverse source order loads in0 into SrcB and in1 into SrcA). The state is followed
through the program as it runs: a loop's body starts from what is known both before the
loop and after an iteration, a condition's end keeps what both branches agree on. Two CBs
are alike to a register when their data formats are (upstream's 2-argument reconfigs skip
the same test); a CB whose format is unknown is alike only to itself.

* :func:`drop_redundant` removes a reconfiguration whose register already holds its CB's
  format, so a reconfiguration is emitted only where the state differs.
* :func:`check` finds every op, copy and pack whose registers do not hold the formats of
  the CBs it reads (``Call.format_needs``), and a start-up whose CBs are not the first op's
  and the first pack's (upstream's start-up header: "the CB ids must match the next op's
  init"), as it loads them by the API spec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ttlgen.errors import Mark
from ttlgen.model.tt_metal_api import FORMAT_STATES, State
from ttlgen.plan import kernel_ir as ir

# The CB each data-format register a call loads is loaded from (None: not known).
Loads = Callable[[ir.Call], Mapping[State, ir.Expr | None]]
# The data format of the CB an expression names (None: not known).
FormatOf = Callable[[ir.Expr], str | None]

FORMAT_REGISTERS = {State.SRCA_FORMAT: "SrcA", State.SRCB_FORMAT: "SrcB", State.PACK_FORMAT: "the packer"}
SOURCES = frozenset([State.SRCA_FORMAT, State.SRCB_FORMAT])


@dataclass(frozen=True)
class Held:
    """The CB a data-format register was loaded from, and the call that loaded it."""

    cb: ir.Expr  # the CB whose format the register was loaded with
    by: ir.Call  # the call that loaded it


Formats = dict[State, Held]  # absent: not known


@dataclass(frozen=True)
class FormatProblem:
    """A call whose register holds another CB's format."""

    mark: Mark | None
    message: str


def cb_text(expr: ir.Expr) -> str:
    if isinstance(expr, ir.Var):
        return expr.name
    if isinstance(expr, ir.Const):
        return f"CB {expr.value}"
    return "a computed CB"


class _Walk:
    """Follows the registers through a body; ``visit`` sees each call with the state it
    runs in and says whether to keep it."""

    def __init__(self, loads: Loads, format_of: FormatOf, visit: Callable[[ir.Call, Formats], bool]) -> None:
        self.loads = loads
        self.format_of = format_of
        self.visit = visit

    def alike(self, a: ir.Expr, b: ir.Expr) -> bool:
        fa, fb = self.format_of(a), self.format_of(b)
        return fa == fb if fa is not None and fb is not None else a == b

    def after(self, call: ir.Call, state: Formats) -> Formats:
        loaded = self.loads(call)
        if not loaded:
            return state
        out = dict(state)
        for register, cb in loaded.items():
            if cb is None:
                out.pop(register, None)
            else:
                out[register] = Held(cb, call)
        return out

    def agreed(self, a: Formats, b: Formats) -> Formats:
        return {r: held for r, held in a.items() if r in b and self.alike(held.cb, b[r].cb)}

    def ends(self, body: Sequence[ir.Stmt], state: Formats) -> Formats:
        """The state after ``body`` (visiting nothing): what :meth:`body` ends with when it
        keeps every call, without building the statements or walking a loop's body again
        once its entry state is known (the state after a loop is its entry state)."""
        for stmt in body:
            if isinstance(stmt, ir.Call):
                state = self.after(stmt, state)
            elif isinstance(stmt, ir.For):
                state = self.loop_entry(stmt, state)
            elif isinstance(stmt, ir.If):
                state = self.agreed(self.ends(stmt.then, state), self.ends(stmt.orelse, state))
        return state

    def loop_entry(self, loop: ir.For, state: Formats) -> Formats:
        entry = state
        while True:
            again = self.agreed(entry, self.ends(loop.body, entry))
            if again.keys() == entry.keys():
                return entry
            entry = again

    def body(self, body: Sequence[ir.Stmt], state: Formats) -> tuple[list[ir.Stmt], Formats]:
        out: list[ir.Stmt] = []
        for stmt in body:
            if isinstance(stmt, ir.Call):
                if self.visit(stmt, state):
                    out.append(stmt)
                    state = self.after(stmt, state)
            elif isinstance(stmt, ir.For):
                entry = self.loop_entry(stmt, state)
                inner, _ = self.body(stmt.body, entry)
                out.append(ir.For(stmt.var, stmt.count, tuple(inner), stmt.generated))
                state = entry
            elif isinstance(stmt, ir.If):
                then, after_then = self.body(stmt.then, state)
                orelse, after_else = self.body(stmt.orelse, state)
                out.append(ir.If(stmt.condition, tuple(then), tuple(orelse)))
                state = self.agreed(after_then, after_else)
            else:
                out.append(stmt)
        return out, state


def drop_redundant(body: tuple[ir.Stmt, ...], loads: Loads, format_of: FormatOf) -> tuple[ir.Stmt, ...]:
    """``body`` without the reconfigurations that load a format their register holds."""
    walk: _Walk

    def keep(call: ir.Call, state: Formats) -> bool:
        if call.step not in ir.RECONFIGS:
            return True
        loaded = walk.loads(call)
        return not loaded or not all(
            cb is not None and register in state and walk.alike(state[register].cb, cb) for register, cb in loaded.items()
        )

    walk = _Walk(loads, format_of, keep)
    kept, _ = walk.body(body, {})
    return tuple(kept)


def _described(cb: ir.Expr, format_of: FormatOf) -> str:
    fmt = format_of(cb)
    return f"{cb_text(cb)} ({fmt})" if fmt is not None else cb_text(cb)


def check(body: tuple[ir.Stmt, ...], loads: Loads, format_of: FormatOf, kernel: str) -> list[FormatProblem]:
    """Every call of ``kernel``'s ``body`` reading a register that does not hold its CB's
    format, and a start-up that does not load the first op's and the first pack's CBs."""
    problems: list[FormatProblem] = []
    walk: _Walk

    def visit(call: ir.Call, state: Formats) -> bool:
        for register, cb in call.format_needs:
            held = state.get(register)
            name = FORMAT_REGISTERS[register]
            wanted = f"{call.function} in kernel {kernel!r} needs {name} to hold the format of {_described(cb, format_of)}"
            if held is None:
                problems.append(FormatProblem(call.origin, f"{wanted}, but no call before it loads {name} on every path"))
            elif not walk.alike(held.cb, cb):
                problems.append(FormatProblem(
                    call.origin,
                    f"{wanted}, but {name} holds that of {_described(held.cb, format_of)}, loaded by {held.by.function} "
                    f"({held.by.origin}); reconfigure {name} before the op's init",
                ))
        return True

    walk = _Walk(loads, format_of, visit)
    walk.body(body, {})
    problems.extend(_startup_problems(body, loads, kernel))
    return problems


def _startup_problems(body: tuple[ir.Stmt, ...], loads: Loads, kernel: str) -> list[FormatProblem]:
    calls = ir.calls(body)
    startup = next((c for c in calls if c.step is ir.Step.HW_INIT), None)
    if startup is None:
        return []
    loaded = loads(startup)
    after = calls[calls.index(startup) + 1 :]
    first_op = next((c for c in after if any(r in SOURCES for r, _ in c.format_needs)), None)
    first_pack = next((c for c in after if any(r is State.PACK_FORMAT for r, _ in c.format_needs)), None)
    problems = []
    for first, what in ((first_op, "op"), (first_pack, "pack")):
        if first is None:
            continue
        for register, cb in first.format_needs:
            if register not in FORMAT_STATES or loaded.get(register) == cb:
                continue
            name = FORMAT_REGISTERS[register]
            source = loaded.get(register)
            from_text = cb_text(source) if source is not None else "no known CB"
            problems.append(FormatProblem(
                startup.origin,
                f"{startup.function} in kernel {kernel!r} loads {name} from {from_text}, but the kernel's first {what}, "
                f"{first.function} ({first.origin}), reads {cb_text(cb)} through {name}: the start-up takes the CBs of "
                "the first op and its output (upstream: the CB ids must match the next op's init)",
            ))
    return problems
