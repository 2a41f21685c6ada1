"""Accumulation scopes of packer L1 accumulation (``+=`` in a kernel body).

The placement follows TT-Lang's own rules (``ttl-annotate-l1-acc-loops`` and
``ttkernel-insert-l1-accumulation``, PR #490 and the main line after it; the reference
``l1-accumulation-upstream.md`` lists the cases):

* ``accumulate`` (``+=``) into a reserved block adds to what the block holds; the first
  write into a fresh reservation overwrites it. The packer's L1-accumulation flag is
  global to the packer, so it is managed per *scope*, not per store.
* A scope is the loops at the level of the target's reservation that carry its ``+=``
  (nested loops inside one of them belong to the same accumulation), and consecutive
  sibling loops that accumulate into the same targets. The flag is disabled before the
  scope's first loop and enabled once every target has had its first pack: at the end of
  iteration 0 of the *innermost* loop that first packs them all (upstream's
  ``nested_l1_acc_loops``: enabling at the outer loop would let the inner loop's later
  iterations of outer iteration 0 overwrite). It is re-enabled before each later loop of
  the scope, and disabled again once the scope's targets are pushed (after the last push,
  as upstream places it), or after the last loop when no push follows.
* A scope whose targets were certainly written in this reservation (a store before the
  ``+=`` loop) accumulates from its first pack: the flag is enabled before the loop
  (upstream's ``accumulate_existing``). A store inside a conditional or inside a loop that
  may run zero times is no such prior value: upstream treats it as a boundary and keeps
  the standard pattern, whose first pack overwrites.
* Every pack inside a scope's loops accumulates, so a plain ``store`` there is an error;
  so is ``+=`` inside a conditional (upstream #504), a ``+=`` into a block reserved inside
  another accumulation (nested independent scopes, upstream #648), and ``+=`` into a
  buffer whose data format the packer cannot accumulate in (a block-float output; the
  spelling spec's ``l1_accumulation`` per format), each with upstream's wording.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model.kernels import If, Kernel, Loop, Statement, Store, Sync, walk_statements
from ttlgen.plan import kernel_ir as ir


@dataclass(frozen=True)
class AccScope:
    """Consecutive sibling loops that accumulate into the same DFBs through the packer."""

    loops: tuple[Mark, ...]  # marks of the consecutive sibling loops, in order
    stores: tuple[Mark, ...]  # the accumulate statements of the scope
    continues: bool  # the targets already hold a value: accumulate from the first pack
    # Standard pattern: the statement after which iteration 0 of ``enable_loop`` enables
    # accumulation (every target has had its first pack by then).
    enable_after: Mark | None = None
    enable_loop: Mark | None = None
    # The push of the targets after which the final disable goes (None: after the last loop).
    disable_after: Mark | None = None

    @property
    def first(self) -> Mark:
        return self.loops[0]

    @property
    def last(self) -> Mark:
        return self.loops[-1]


@dataclass(frozen=True)
class AccAnalysis:
    """Where a kernel accumulates into L1, and the accumulations outside loops."""

    scopes: tuple[AccScope, ...]
    # `+=` outside any loop of its reservation that adds to an already written block.
    straight_accumulations: tuple[Mark, ...]

    def scope_of_loop(self, loop: Mark) -> AccScope | None:
        return next((s for s in self.scopes if loop in s.loops), None)

    def enables_after(self, stmt: Mark) -> list[AccScope]:
        """The scopes whose conditional enable follows this statement."""
        return [s for s in self.scopes if s.enable_after == stmt]

    def disables_after(self, stmt: Mark) -> list[AccScope]:
        """The scopes whose final disable follows this statement (a push)."""
        return [s for s in self.scopes if s.disable_after == stmt]


# Upstream's texts (annotate_l1_acc_loops_invalid.mlir, insert_l1_accumulation_invalid.mlir).
NESTED_SCOPES = "nested independent L1 accumulation scopes are not supported (#648)"


def unsupported_format(element: str) -> str:
    return (
        f"L1 packer accumulation does not support output data type {element}; use a supported output data type "
        "or select another accumulation strategy"
    )


@dataclass
class _Pass1:
    """The first walk: the accumulate statements of each loop and those outside loops."""

    sink: DiagnosticSink
    annotated: dict[Mark, set[str]] = field(default_factory=dict)
    annotated_stores: dict[Mark, list[Mark]] = field(default_factory=dict)
    loose: dict[Mark, str] = field(default_factory=dict)  # accumulate outside loops -> target

    def walk(
        self, body: Sequence[Statement], loops: tuple[Loop, ...], in_if: bool, reserved: dict[str, int]
    ) -> None:
        for stmt in body:
            if isinstance(stmt, Sync):
                for name in stmt.dfbs:
                    if stmt.action == "reserve":
                        reserved[name] = len(loops)
                    elif stmt.action == "push":
                        reserved.pop(name, None)
            elif isinstance(stmt, Store):
                if stmt.target not in reserved:
                    verb = "accumulates into" if stmt.accumulate else "stores to"
                    self.sink.error(stmt.mark, f"{verb} {stmt.target!r}, which is not reserved here (reserve it first)")
                    continue
                if not stmt.accumulate:
                    continue
                if in_if:
                    self.sink.error(
                        stmt.mark,
                        "'+=' inside a conditional is not supported: packer L1 accumulation is enabled after "
                        "the first iteration's packs, so an iteration that skips the pack would leave the "
                        "reserved block unwritten and later packs would add to garbage",
                    )
                    continue
                depth = reserved[stmt.target]
                if depth < len(loops):
                    outer = loops[depth]
                    self.annotated.setdefault(outer.mark, set()).add(stmt.target)
                    self.annotated_stores.setdefault(outer.mark, []).append(stmt.mark)
                    # An enclosing loop already carries another accumulation whose block was
                    # reserved outside it: this one (reserved inside it) is independent.
                    if any(lp.mark in self.annotated for lp in loops[:depth]) or any(
                        lp.mark in self.annotated and lp.mark != outer.mark for lp in loops[depth + 1 :]
                    ):
                        self.sink.error(
                            stmt.mark,
                            f"{NESTED_SCOPES}: the accumulation into {stmt.target!r} and another one reserved outside or "
                            "inside its loop nest would share the packer's global L1-accumulation flag",
                        )
                else:
                    self.loose[stmt.mark] = stmt.target
            elif isinstance(stmt, Loop):
                self.walk(stmt.body, (*loops, stmt), in_if, dict(reserved))
            elif isinstance(stmt, If):
                self.walk(stmt.then, loops, True, dict(reserved))
                self.walk(stmt.orelse, loops, True, dict(reserved))


def _writes(stmt: Statement) -> set[str]:
    return {s.target for s in walk_statements((stmt,)) if isinstance(s, Store)}


def definite_writes(stmt: Statement) -> set[str]:
    """The blocks ``stmt`` certainly writes: stores that no conditional and no loop that
    may run zero times guards (upstream credits only such packs as a prior value)."""
    if isinstance(stmt, Store):
        return {stmt.target}
    if isinstance(stmt, Loop) and stmt.count > 0:
        return {t for s in stmt.body for t in definite_writes(s)}
    return set()


def _packs(stmt: Statement) -> bool:
    return bool(_writes(stmt))


def _enable_point(
    loop: Loop, remaining: set[str], sink: DiagnosticSink, scope_loop: Loop
) -> tuple[Mark, Mark] | None:
    """(statement, loop) after which iteration 0 of ``loop`` has packed every target in
    ``remaining``: the point of the conditional enable. Descends into the inner loop that
    completes the first packs, so the enable sits in the innermost loop."""
    body = loop.body
    for index, stmt in enumerate(body):
        written = definite_writes(stmt) & remaining
        if not written:
            continue
        if isinstance(stmt, Loop) and stmt.count > 1 and written != remaining:
            # The inner loop repeats its packs before another target's first pack: no
            # point of a global flag serves both.
            sink.error(
                stmt.mark,
                f"{NESTED_SCOPES}: this loop accumulates into {', '.join(sorted(written))} before the first pack of "
                f"{', '.join(sorted(remaining - written))} in the accumulation loop at {scope_loop.mark}, and the packer's "
                "L1-accumulation flag is global",
            )
            return None
        remaining = remaining - written
        if remaining:
            continue
        if isinstance(stmt, Loop) and stmt.count > 1:
            return _enable_point(stmt, written, sink, scope_loop)
        # After the covering statement; past the statements after it that pack nothing
        # (pops), so the enable ends the iteration as upstream's follows its last release.
        rest = body[index + 1 :]
        after = stmt if any(_packs(s) for s in rest) else body[-1]
        return after.mark, loop.mark
    return None


def _disable_point(body: Sequence[Statement], after: int, targets: set[str]) -> Mark | None:
    """The push of the scope's targets after which the final disable goes: the last of the
    pushes that follow the scope's last loop before anything packs or reserves again."""
    found: Mark | None = None
    pending = set(targets)
    for stmt in body[after + 1 :]:
        if not isinstance(stmt, Sync) or stmt.action == "reserve":
            break
        if stmt.action == "push" and pending & set(stmt.dfbs):
            pending -= set(stmt.dfbs)
            found = stmt.mark
            if not pending:
                break
    return found


def analyze(kernel: Kernel, sink: DiagnosticSink) -> AccAnalysis:
    first = _Pass1(sink)
    first.walk(kernel.body, (), False, {})
    scopes: list[AccScope] = []
    straight: list[Mark] = []

    def group(body: Sequence[Statement], written: set[str]) -> None:
        current: list[Loop] = []
        targets: set[str] = set()
        last_index = -1

        def close() -> None:
            if not current:
                return
            fresh = targets - written
            if fresh and fresh != targets:
                sink.error(
                    current[0].mark,
                    f"accumulation scope mixes fresh reservations ({', '.join(sorted(fresh))}) with written ones "
                    f"({', '.join(sorted(targets - fresh))}); the packer's L1-accumulation flag is global",
                )
            stores = [m for loop in current for m in first.annotated_stores[loop.mark]]
            enable = None if not fresh else _enable_point(current[0], set(first.annotated[current[0].mark]), sink, current[0])
            scopes.append(
                AccScope(
                    tuple(lp.mark for lp in current),
                    tuple(stores),
                    not fresh,
                    enable_after=enable[0] if enable else None,
                    enable_loop=enable[1] if enable else None,
                    disable_after=_disable_point(body, last_index, targets),
                )
            )
            for loop in current:
                for inner in walk_statements(loop.body):
                    if isinstance(inner, Store) and not inner.accumulate:
                        sink.error(
                            inner.mark,
                            "plain store inside a packer L1 accumulation loop would accumulate: the packer's "
                            "L1-accumulation flag is global; store before or after the loop",
                        )
            written.update(targets)
            current.clear()
            targets.clear()

        for index, stmt in enumerate(body):
            if isinstance(stmt, Loop) and stmt.mark in first.annotated:
                mine = first.annotated[stmt.mark]
                if current and not (mine & targets):
                    close()
                current.append(stmt)
                targets.update(mine)
                last_index = index
                continue
            if isinstance(stmt, Sync) and stmt.action in ("wait", "pop"):
                continue  # input handling between loops keeps the scope consecutive
            close()
            if isinstance(stmt, Sync):
                for name in stmt.dfbs:
                    if stmt.action in ("reserve", "push"):
                        written.discard(name)
            elif isinstance(stmt, Store):
                # A `+=` outside any loop into a fresh reservation is a plain overwrite.
                if stmt.accumulate and stmt.mark in first.loose and stmt.target in written:
                    straight.append(stmt.mark)
                written.add(stmt.target)
            elif isinstance(stmt, Loop):
                group(stmt.body, set())
                written.update(definite_writes(stmt))
            elif isinstance(stmt, If):
                # A store under a condition may not have run: it is no prior value.
                group(stmt.then, set(written))
                group(stmt.orelse, set(written))
        close()

    group(kernel.body, set())
    return AccAnalysis(tuple(scopes), tuple(straight))


# ----------------------------------------------------------------- re-arm after inits
#
# Upstream re-issues the enable immediately after an init that may reset the packer
# (insert_l1_accumulation.mlir: "re-arms L1 acc after any init ops that may reset packer
# state"; the main line's pack_rows_init cases). Inits are hoisted after lowering, so this
# runs on the compute program's IR last. The flag's state is followed through the program:
# off, on, or "off in the first iteration of these loops, on after" inside the loops of a
# standard-pattern scope before their conditional enable.

_Off = None
_On = ()
# A tuple of loop variables: off while each of them is 0 (before the enable), else on.
_State = tuple[str, ...] | None


def _is_l1(stmt: object, enable: int) -> bool:
    return (
        isinstance(stmt, ir.Call)
        and stmt.step is ir.Step.L1_ACC
        and any(isinstance(a.value, ir.Const) and a.value.value == enable for a in stmt.args)
    )


def _is_conditional_enable(stmt: object) -> bool:
    return isinstance(stmt, ir.If) and len(stmt.then) == 1 and _is_l1(stmt.then[0], 1) and not stmt.orelse


def _enables(body: Sequence[ir.Stmt]) -> bool:
    """Whether ``body`` enables accumulation anywhere (a conditional enable included)."""
    return any(_is_l1(stmt, 1) for stmt in ir.walk(body))


def rearm(body: tuple[ir.Stmt, ...], resets: Callable[[ir.Call], bool], enable: ir.Call) -> tuple[ir.Stmt, ...]:
    """``body`` with accumulation re-enabled after each init that may reset the packer
    where the flag should be on: an enable just before such inits (nothing packed between)
    moves after them; elsewhere one is added, under the condition that the flag is on."""
    return tuple(_rearm(body, _Off, resets, enable))


def _rearm(
    body: Sequence[ir.Stmt], state: _State, resets: Callable[[ir.Call], bool], enable: ir.Call
) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    movable: int | None = None  # index in `out` of an enable nothing has packed after
    for stmt in body:
        if isinstance(stmt, ir.Call):
            if _is_l1(stmt, 1):
                state, movable = _On, len(out)
            elif _is_l1(stmt, 0):
                state, movable = _Off, None
            elif resets(stmt) and state is not _Off:
                out.append(stmt)
                if state == _On:
                    if movable is not None:
                        del out[movable]
                    movable = len(out)
                    out.append(enable)
                else:  # off until the enable of the first iteration of these loops
                    assert state is not None
                    out.append(_unless_first(state, enable))
                continue
            elif stmt.step is ir.Step.PACK:
                movable = None
            out.append(stmt)
        elif isinstance(stmt, ir.For):
            movable = None
            inner = state
            if state != _On and _enables(stmt.body):
                inner = (*(state or ()), stmt.var)
            new_body = _rearm(stmt.body, inner, resets, enable)
            out.append(replace(stmt, body=tuple(new_body)))
            if _enables(stmt.body):
                state = _On
        elif isinstance(stmt, ir.If):
            if _is_conditional_enable(stmt):
                out.append(stmt)
                state, movable = _On, None
                continue
            movable = None
            then = _rearm(stmt.then, state, resets, enable)
            orelse = _rearm(stmt.orelse, state, resets, enable)
            out.append(replace(stmt, then=tuple(then), orelse=tuple(orelse)))
        else:
            out.append(stmt)
    return out


def _unless_first(loops: tuple[str, ...], enable: ir.Call) -> ir.If:
    """``if (a != 0) E else if (b != 0) E ...``: the enable unless every loop is in its
    first iteration (where the enable comes later, after the first packs)."""
    found: ir.If | None = None
    for var in reversed(loops):
        test = ir.Compare(ir.Comparison.NE, ir.Var(var), ir.Const(0))
        found = ir.If(test, (enable,), (found,) if found is not None else ())
    assert found is not None
    return found
