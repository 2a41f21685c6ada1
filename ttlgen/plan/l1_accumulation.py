"""Accumulation scopes of packer L1 accumulation (``+=`` in a kernel body).

Semantics (TT-Lang's L1-accumulation review):

* ``accumulate`` (``+=``) into a reserved block adds to what the block holds; the first
  write into a fresh reservation overwrites it. The packer's L1-accumulation flag is
  global to the packer, so it is managed per *scope*, not per store.
* The loop that carries an accumulation is the outermost loop enclosing the ``+=`` that
  lies inside the target's reservation (nested loops fold into it). A ``+=`` inside an
  ``if`` is an error: the first-iteration rule cannot tell whether a pack happened.
* Consecutive sibling loops that accumulate into the same reserved block form one scope
  and keep accumulating: the flag is disabled before the first loop, enabled after the
  first iteration's packs (at the end of iteration 0 of the first loop), re-enabled
  before each later loop of the scope (inits between loops may reset packer state) and
  disabled after the last.
* A scope whose targets were already written in this reservation (a ``store`` before
  the ``+=`` loop) accumulates from its first pack: the flag is enabled before the loop.
* Every pack inside a scope's loops accumulates, so a plain ``store`` there is an error.
* Several ``+=`` targets in one loop share the scope; the enable point follows all of
  the first iteration's packs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model.kernels import If, Kernel, Loop, Statement, Store, Sync, walk_statements


@dataclass(frozen=True)
class AccScope:
    """Consecutive sibling loops that accumulate into the same DFBs through the packer."""

    loops: tuple[Mark, ...]  # marks of the consecutive sibling loops, in order
    targets: tuple[str, ...]  # DFBs accumulated into, sorted
    stores: tuple[Mark, ...]  # the accumulate statements of the scope
    continues: bool  # the targets already hold a value: accumulate from the first pack

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
    # `+=` outside any loop into a fresh reservation: a plain overwrite.
    first_writes: tuple[Mark, ...]

    def scope_of_loop(self, loop: Mark) -> AccScope | None:
        return next((s for s in self.scopes if loop in s.loops), None)


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
                    for inner in loops[depth + 1 :]:
                        if inner.mark in self.annotated:
                            self.sink.error(stmt.mark, "'+=' into a block reserved inside another accumulation loop is not supported")
                else:
                    self.loose[stmt.mark] = stmt.target
            elif isinstance(stmt, Loop):
                self.walk(stmt.body, (*loops, stmt), in_if, dict(reserved))
            elif isinstance(stmt, If):
                self.walk(stmt.then, loops, True, dict(reserved))
                self.walk(stmt.orelse, loops, True, dict(reserved))


def _writes(stmt: Statement) -> set[str]:
    return {s.target for s in walk_statements((stmt,)) if isinstance(s, Store)}


def analyze(kernel: Kernel, sink: DiagnosticSink) -> AccAnalysis:
    first = _Pass1(sink)
    first.walk(kernel.body, (), False, {})
    scopes: list[AccScope] = []
    straight: list[Mark] = []
    fresh_writes: list[Mark] = []

    def group(body: Sequence[Statement], written: set[str]) -> None:
        current: list[Loop] = []
        targets: set[str] = set()

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
            scopes.append(AccScope(tuple(lp.mark for lp in current), tuple(sorted(targets)), tuple(stores), not fresh))
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

        for stmt in body:
            if isinstance(stmt, Loop) and stmt.mark in first.annotated:
                mine = first.annotated[stmt.mark]
                if current and not (mine & targets):
                    close()
                current.append(stmt)
                targets.update(mine)
                continue
            if isinstance(stmt, Sync) and stmt.action in ("wait", "pop"):
                continue  # input handling between loops keeps the scope consecutive
            close()
            if isinstance(stmt, Sync):
                for name in stmt.dfbs:
                    if stmt.action in ("reserve", "push"):
                        written.discard(name)
            elif isinstance(stmt, Store):
                if stmt.accumulate and stmt.mark in first.loose:
                    (straight if stmt.target in written else fresh_writes).append(stmt.mark)
                written.add(stmt.target)
            elif isinstance(stmt, Loop):
                group(stmt.body, set())
                written.update(_writes(stmt))
            elif isinstance(stmt, If):
                group(stmt.then, set(written))
                group(stmt.orelse, set(written))
                written.update(_writes(stmt))
        close()

    group(kernel.body, set())
    return AccAnalysis(tuple(scopes), tuple(straight), tuple(fresh_writes))
