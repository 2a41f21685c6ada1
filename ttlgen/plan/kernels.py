"""Resolve each kernel's configuration plan and lower the kernel to printable statements.

Resolution uses the ``ttl_kernel_config`` package generated from the current op and
target specs (rendered in memory; never a second resolver). A kernel the resolver
rejects is a located error at the kernel spec showing the resolver's diagnostic.

Lowering turns the block-style body into three statement trees (compute, reader,
writer) of :class:`Line`, :class:`For` and :class:`IfBlock` nodes whose text comes from
the op spelling spec; templates only print them. Decisions made here:

* Strategy per op, DST width and sync come from the plan; the DST capacity for that
  width and sync comes from the spelling spec.
* A matmul output block larger than the DST capacity is subblocked (rows of the block
  first); elementwise values are computed for as many tiles per DST acquire as fit.
* Packer L1 accumulation follows :mod:`ttlgen.model.l1_accumulation`. With 32-bit DST an
  accumulation scope that is one loop with one matmul ``+=`` whose output block fits in
  DST keeps the sum in DST across the loop (packed once, full fp32); otherwise every K
  step packs and the packer accumulates in the output format. ``strict_f32_acc`` makes
  that fallback (an accumulating 32-bit-DST kernel that needs subblocking) an error.
* The reader and writer mirror the body's loops and conditions: each ``wait`` of an input
  DFB reads its tensor's next block, each ``push`` of an output DFB writes the next block
  (blocks in row-major order over the tensor, wrapping around).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ttlgen.errors import DiagnosticSink, SpecErrors
from ttlgen.model.kernels import (
    DfbRef,
    If,
    Kernel,
    Loop,
    OpExpr,
    Statement,
    Store,
    Sync,
    Value,
    walk_values,
)
from ttlgen.model.ops import OpSemantics, OpsModel, Route
from ttlgen.model.spelling import Spelling, SpellingModel, fill
from ttlgen.model.targets import TargetsModel
from ttlgen.plan import l1_accumulation, resolution

# ----------------------------------------------------------------------------- nodes


@dataclass(frozen=True)
class Line:
    text: str
    kind: str = "line"


@dataclass(frozen=True)
class For:
    var: str
    count: int
    body: tuple[Node, ...]
    kind: str = "for"


@dataclass(frozen=True)
class IfBlock:
    condition: str
    then: tuple[Node, ...]
    orelse: tuple[Node, ...]
    kind: str = "if"


Node = Line | For | IfBlock


@dataclass(frozen=True)
class CbInfo:
    name: str
    index: int
    format: str
    page_size: int
    num_pages: int


@dataclass(frozen=True)
class TensorInfo:
    name: str  # DFB name, also the DRAM buffer name
    role: str
    format: str
    shape: tuple[int, int]
    block: tuple[int, int]
    cb: int


@dataclass(frozen=True)
class LoweredKernel:
    kernel: Kernel
    plan_json: dict[str, Any]
    compute_config: dict[str, Any]
    dest_width: int
    sync: str
    dst_capacity: int
    subblocked: bool
    compute_includes: tuple[str, ...]
    compute_cbs: tuple[CbInfo, ...]
    compute: tuple[Node, ...]
    reader: tuple[Node, ...]
    writer: tuple[Node, ...]
    cbs: tuple[CbInfo, ...]
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    strategies: tuple[tuple[str, str], ...]  # op id -> strategy, for the report
    sources: tuple[str, ...]


# --------------------------------------------------------------------------- lowering


def _cond(var: str, count: int, condition: str) -> str:
    return {
        "first": f"{var} == 0",
        "not_first": f"{var} != 0",
        "last": f"{var} == {count - 1}",
        "not_last": f"{var} != {count - 1}",
    }[condition]


def _divisor_at_most(n: int, limit: int) -> int:
    return max(d for d in range(1, min(n, max(limit, 1)) + 1) if n % d == 0)


@dataclass
class _Lowering:
    kernel: Kernel
    ops: OpsModel
    spelling: SpellingModel
    plan: Any
    sink: DiagnosticSink
    acc: l1_accumulation.AccAnalysis
    capacity: int
    includes: set[str] = field(default_factory=set)
    used_cbs: set[str] = field(default_factory=set)
    subblocked: bool = False
    loop_counts: dict[str, int] = field(default_factory=dict)
    first_compute: tuple[str, str, str] | None = None

    # -- helpers
    @property
    def calls(self) -> Any:
        assert self.spelling.kernel is not None
        return self.spelling.kernel

    @property
    def wide_dest(self) -> bool:
        return int(self.plan.dest_width) == 32

    def cb(self, dfb: str) -> str:
        self.used_cbs.add(dfb)
        return f"cb_{dfb}"

    def semantics(self, expr: OpExpr) -> OpSemantics:
        return next(op for op in self.ops.ops if op.name == expr.op)

    def strategy(self, expr: OpExpr) -> tuple[str | None, int]:
        """The chosen strategy name (None: fixed) and its index in the op's strategies."""
        op = self.semantics(expr)
        if op.fixed:
            return None, 0
        chosen = self.plan.strategy_of(expr.id)
        name = chosen.value if chosen is not None else op.strategies[0].name
        return name, next(i for i, s in enumerate(op.strategies) if s.name == name)

    def spelled(self, expr: OpExpr) -> tuple[Spelling, tuple[Route, ...]]:
        name, index = self.strategy(expr)
        spelling = self.spelling.spelling(expr.op, name)
        if spelling is None:
            self.sink.error(expr.mark, f"op {expr.op!r} has no tt-metal spelling for strategy {name or 'fixed'!r} (chosen by the plan)")
            raise _Abort
        self.includes.add(spelling.include)
        return spelling, self.semantics(expr).strategies[index].routes

    def shape(self, value: Value) -> tuple[int, int]:
        if isinstance(value, DfbRef):
            return self.kernel.dfb(value.dfb).block
        op = self.semantics(value)
        if op.primitive.names and op.primitive.names[0] == "Matmul":
            lhs, rhs = self.shape(value.args[0]), self.shape(value.args[1])
            if lhs[1] != rhs[0]:
                self.sink.error(value.mark, f"matmul of {lhs[0]}x{lhs[1]} by {rhs[0]}x{rhs[1]} tile blocks: inner dimensions differ")
                raise _Abort
            return (lhs[0], rhs[1])
        shapes = [self.shape(a) for a in value.args]
        full = [s for s in shapes if s != (1, 1)]
        if any(s != full[0] for s in full):
            self.sink.error(value.mark, f"operands of {value.op!r} have different block shapes: {', '.join(f'{s[0]}x{s[1]}' for s in shapes)}")
            raise _Abort
        return full[0] if full else (1, 1)

    def need(self, value: Value) -> int:
        """DST slots one output tile of ``value`` uses."""
        if isinstance(value, DfbRef):
            return 1
        _, routes = self.spelled(value)
        offset, need = 0, 1
        for arg, route in zip(value.args, routes, strict=False):
            if route is Route.DST:
                need = max(need, offset + self.need(arg))
                offset += self.need(arg)
        return need

    def spell(self, spelling: Spelling, template: str, values: dict[str, str]) -> Line:
        """One call of ``spelling`` with its placeholders filled."""
        try:
            return Line(fill(template, values) + ";")
        except KeyError as exc:
            self.sink.error(
                spelling.mark,
                f"{template!r}: placeholder {{{exc.args[0]}}} has no value here (operand routes of the "
                f"{spelling.strategy} strategy give: {', '.join(sorted(values))})",
            )
            raise _Abort from None

    def tile_of(self, ref: DfbRef, tile: str) -> str:
        return "0" if self.kernel.dfb(ref.dfb).block == (1, 1) else tile

    def reconfig(self, spelling: Spelling, values: dict[str, str], names: Sequence[str]) -> list[Node]:
        out: list[Node] = []
        for reg, operand in (("srca", spelling.unpack_srca), ("srcb", spelling.unpack_srcb)):
            if operand is None or operand not in names:
                continue
            call = self.calls.reconfig_srca if reg == "srca" else self.calls.reconfig_srcb
            out.append(Line(fill(call, {"cb": values[f"{operand}.cb"]}) + ";"))
        return out

    def copy(self, ref: DfbRef, tile: str, slot: str) -> list[Node]:
        cb = self.cb(ref.dfb)
        self.includes.add(self.calls.copy_include)
        return [
            Line(fill(self.calls.copy_init, {"cb": cb}) + ";"),
            Line(fill(self.calls.reconfig_srca, {"cb": cb}) + ";"),
            Line(fill(self.calls.copy, {"cb": cb, "tile": self.tile_of(ref, tile), "dst": slot}) + ";"),
        ]

    def evaluate(self, value: Value, slot: str, offset: int, tile: str, pack_cb: str) -> list[Node]:
        """Statements computing one tile of ``value`` into DST slot ``slot + offset``."""
        here = slot if offset == 0 else (f"{slot} + {offset}" if slot != "0" else str(offset))
        if isinstance(value, DfbRef):
            return self.copy(value, tile, here)
        spelling, routes = self.spelled(value)
        op = self.semantics(value)
        names = [o.name for o in op.operands]
        values: dict[str, str] = {"dst": here, "pack": pack_cb}
        out: list[Node] = []
        inner = offset
        for arg, route, name in zip(value.args, routes, names, strict=False):
            if route is Route.DFB:
                if not isinstance(arg, DfbRef):
                    self.sink.error(value.mark, f"operand {name!r} of {value.op!r} reads a dataflow buffer: give a DFB name, not an op")
                    raise _Abort
                values[f"{name}.cb"] = self.cb(arg.dfb)
                values[f"{name}.tile"] = self.tile_of(arg, tile)
            elif route is Route.DST:
                out.extend(self.evaluate(arg, slot, inner, tile, pack_cb))
                values[f"{name}.dst"] = slot if inner == 0 else (f"{slot} + {inner}" if slot != "0" else str(inner))
                inner += self.need(arg)
        for attr, attr_value in value.attrs:
            spelled = spelling.attribute_spelling(attr, attr_value)
            if spelled is None:
                self.sink.error(value.mark, f"attribute {attr}={attr_value!r} of {value.op!r} has no spelling")
                raise _Abort
            values[f"attr.{attr}"] = spelled
        out.append(self.spell(spelling, spelling.init, values))
        out.extend(self.reconfig(spelling, values, names))
        out.append(self.spell(spelling, spelling.call, values))
        if spelling.uninit is not None:
            out.append(self.spell(spelling, spelling.uninit, values))
        return out

    def is_matmul(self, value: Value) -> bool:
        if not isinstance(value, OpExpr):
            return False
        spelling = self.spelling.spelling(value.op, self.strategy(value)[0])
        return spelling is not None and spelling.accumulates_in_dst

    def matmul_calls(self, expr: OpExpr, sh: int, sw: int, row0: str, col0: str, pack_cb: str) -> list[Node]:
        spelling, _ = self.spelled(expr)
        lhs, rhs = expr.args[0], expr.args[1]
        assert isinstance(lhs, DfbRef) and isinstance(rhs, DfbRef)
        kb = self.kernel.dfb(lhs.dfb).block[1]
        n = self.kernel.dfb(rhs.dfb).block[1]
        kk = "kk_" if kb > 1 else "0"
        values = {
            "lhs.cb": self.cb(lhs.dfb),
            "rhs.cb": self.cb(rhs.dfb),
            "lhs.tile": _add(_mul(row0, kb), kk),
            "rhs.tile": _add(_mul(kk, n), col0),
            "dst": "0",
            "rt": str(sh),
            "ct": str(sw),
            "kt": str(kb),
            "pack": pack_cb,
        }
        call: Node = self.spell(spelling, spelling.call, values)
        return [
            self.spell(spelling, spelling.init, values),
            *self.reconfig(spelling, values, ["lhs", "rhs"]),
            For("kk_", kb, (call,)) if kb > 1 else call,
        ]

    def out_tile(self, n: int, sw: int, row0: str, col0: str) -> str:
        if sw == n and col0 == "0":
            return _add(_mul(row0, n), "t_")
        return _add(_add(_mul(_add(row0, f"t_ / {sw}", paren=True), n), col0), f"t_ % {sw}")

    def packs(self, target: str, tiles: int, slot_of_t: str, out_tile: str) -> list[Node]:
        cb = self.cb(target)
        return [
            Line("tile_regs_commit();"),
            Line("tile_regs_wait();"),
            Line(fill(self.calls.reconfig_pack, {"cb": cb}) + ";"),
            For("t_", tiles, (Line(fill(self.calls.pack, {"dst": slot_of_t, "cb": cb, "tile": out_tile}) + ";"),)),
            Line("tile_regs_release();"),
        ]

    def subblock(self, m: int, n: int, need: int = 1) -> tuple[int, int]:
        fit = max(self.capacity // need, 1)
        if n <= fit:
            return _divisor_at_most(m, fit // n), n
        return 1, _divisor_at_most(n, fit)

    def remember_first(self, store: Store) -> None:
        if self.first_compute is not None:
            return
        leaves = [v for v in _leaves(store.value)]
        srca = leaves[-1] if self.is_matmul(store.value) and len(leaves) > 1 else (leaves[0] if leaves else store.target)
        srcb = leaves[0] if self.is_matmul(store.value) else (leaves[1] if len(leaves) > 1 else srca)
        self.first_compute = (self.cb(srca), self.cb(srcb), self.cb(store.target))

    def store(self, store: Store) -> list[Node]:
        """A complete compute for one store: acquire, math, pack, release per subblock."""
        self.remember_first(store)
        out_dfb = self.kernel.dfb(store.target)
        m, n = out_dfb.block
        shape = self.shape(store.value)
        if shape != (m, n) and shape != (1, 1):
            self.sink.error(store.mark, f"value of {shape[0]}x{shape[1]} tiles does not match the {m}x{n}-tile block of {store.target!r}")
            raise _Abort
        pack_cb = self.cb(store.target)
        value = store.value
        inner = [e for e in walk_values(value) if e is not value and self.is_matmul(e)]
        if inner:
            self.sink.error(
                inner[0].mark,
                f"{inner[0].op!r} must be the whole value of a store or '+=' (fused ops after it are not "
                "supported): store its result, then apply the op to the stored block",
            )
            raise _Abort
        if isinstance(value, OpExpr) and self.is_matmul(value):
            for arg in value.args[:2]:
                if not isinstance(arg, DfbRef):
                    self.sink.error(value.mark, f"the operands of {value.op!r} are read from dataflow buffers: give DFB names")
                    raise _Abort
            sh, sw = self.subblock(m, n)
            self.check_strict(store, m * n > sh * sw, m, n)
            nsb_c = n // sw
            count = (m // sh) * nsb_c
            row0 = "r0_" if m // sh > 1 else "0"
            col0 = "c0_" if nsb_c > 1 else "0"
            body: list[Node] = []
            if row0 != "0":
                body.append(Line(f"const uint32_t r0_ = {_mul(f'sb_ / {nsb_c}' if nsb_c > 1 else 'sb_', sh)};"))
            if col0 != "0":
                body.append(Line(f"const uint32_t c0_ = {_mul(f'sb_ % {nsb_c}', sw)};"))
            body.append(Line("tile_regs_acquire();"))
            if len(value.args) > 2:
                acc = value.args[2]
                if not isinstance(acc, DfbRef) or self.kernel.dfb(acc.dfb).block != (m, n):
                    self.sink.error(value.mark, "the matmul accumulator must be a DFB block of the output's shape")
                    raise _Abort
                body.append(For("t_", sh * sw, tuple(self.copy(acc, self.out_tile(n, sw, row0, col0), "t_"))))
            body.extend(self.matmul_calls(value, sh, sw, row0, col0, pack_cb))
            body.extend(self.packs(store.target, sh * sw, "t_", self.out_tile(n, sw, row0, col0)))
            return [For("sb_", count, tuple(body))]
        need = self.need(value)
        tiles = m * n
        group = _divisor_at_most(tiles, max(self.capacity // need, 1))
        if need * tiles > self.capacity:
            self.check_strict(store, True, m, n)
        if group == 1:
            slot, tile = "0", ("g_" if tiles > 1 else "0")
            math: list[Node] = self.evaluate(value, slot, 0, tile, pack_cb)
        else:
            slot = "t_" if need == 1 else f"t_ * {need}"
            tile = _add(_mul("g_", group) if tiles != group else "0", "t_")
            math = [For("t_", group, tuple(self.evaluate(value, slot, 0, tile, pack_cb)))]
        body = [
            Line("tile_regs_acquire();"),
            *math,
            *self.packs(store.target, group, slot, tile),
        ]
        return [For("g_", tiles // group, tuple(body))]

    def check_strict(self, store: Store, subblocks: bool, m: int, n: int) -> None:
        if subblocks:
            self.subblocked = True
        if not (subblocks and store.accumulate and self.wide_dest and self.kernel.strict_f32_acc):
            return
        out = self.kernel.dfb(store.target).dtype
        self.sink.error(
            store.mark,
            f"strict_f32_acc: the '+=' output block of {m}x{n} tiles exceeds the 32-bit DST capacity of "
            f"{self.capacity} tiles ({self.plan.sync.value} sync), so it must be subblocked and would "
            f"accumulate in {out} through the packer's L1 accumulation; use a smaller block",
        )

    def dst_resident(self, loop: Loop, scope: l1_accumulation.AccScope) -> Store | None:
        """The single matmul `+=` of a one-loop scope that can stay in 32-bit DST."""
        if not self.wide_dest or len(scope.loops) != 1 or len(scope.stores) != 1 or scope.continues:
            return None
        stores = [s for s in loop.body if isinstance(s, Store)]
        nested = [s for s in loop.body if isinstance(s, (Loop, If))]
        if len(stores) != 1 or nested or not stores[0].accumulate:
            return None
        store = stores[0]
        value = store.value
        if not isinstance(value, OpExpr) or not self.is_matmul(value) or len(value.args) != 2:
            return None
        m, n = self.kernel.dfb(store.target).block
        return store if m * n <= self.capacity else None

    # -- compute body
    def body(self, stmts: Sequence[Statement]) -> list[Node]:
        out: list[Node] = []
        for stmt in stmts:
            try:
                out.extend(self.statement(stmt))
            except _Abort:
                continue
        return out

    def l1(self, enable: int) -> Line:
        return Line(fill(self.calls.l1_acc, {"enable": str(enable)}) + ";")

    def statement(self, stmt: Statement) -> list[Node]:
        if isinstance(stmt, Sync):
            call = {"wait": "cb_wait_front", "pop": "cb_pop_front", "reserve": "cb_reserve_back", "push": "cb_push_back"}[stmt.action]
            return [Line(f"{call}({self.cb(d)}, {self.kernel.dfb(d).block_tiles});") for d in stmt.dfbs]
        if isinstance(stmt, Store):
            nodes = self.store(stmt)
            if stmt.mark in self.acc.straight_accumulations:
                return [self.l1(1), *nodes, self.l1(0)]
            return nodes
        if isinstance(stmt, If):
            count = self.loop_counts[stmt.var]
            return [IfBlock(_cond(stmt.var, count, stmt.condition), tuple(self.body(stmt.then)), tuple(self.body(stmt.orelse)))]
        self.loop_counts[stmt.var] = stmt.count
        scope = self.acc.scope_of_loop(stmt.mark)
        if scope is None:
            return [For(stmt.var, stmt.count, tuple(self.body(stmt.body)))]
        resident = self.dst_resident(stmt, scope)
        if resident is not None:
            return self.resident_loop(stmt, resident)
        inner = self.body(stmt.body)
        before: list[Node] = []
        after: list[Node] = []
        if stmt.mark == scope.first:
            before.append(self.l1(1) if scope.continues else self.l1(0))
            if not scope.continues:
                inner.append(IfBlock(f"{stmt.var} == 0", (self.l1(1),), ()))
        else:
            before.append(self.l1(1))
        if stmt.mark == scope.last:
            after.append(self.l1(0))
        return [*before, For(stmt.var, stmt.count, tuple(inner)), *after]

    def resident_loop(self, loop: Loop, store: Store) -> list[Node]:
        self.remember_first(store)
        value = store.value
        assert isinstance(value, OpExpr)
        m, n = self.kernel.dfb(store.target).block
        pack_cb = self.cb(store.target)
        inner: list[Node] = []
        for stmt in loop.body:
            if stmt is store:
                inner.extend(self.matmul_calls(value, m, n, "0", "0", pack_cb))
            else:
                inner.extend(self.statement(stmt))
        return [
            Line("tile_regs_acquire();"),
            For(loop.var, loop.count, tuple(inner)),
            *self.packs(store.target, m * n, "t_", self.out_tile(n, n, "0", "0")),
        ]

    # -- dataflow
    def mirror(self, stmts: Sequence[Statement], role: str, counts: dict[str, int] | None = None) -> list[Node]:
        counts = counts if counts is not None else {}
        out: list[Node] = []
        for stmt in stmts:
            if isinstance(stmt, Sync):
                action = "wait" if role == "reader" else "push"
                if stmt.action != action:
                    continue
                for name in stmt.dfbs:
                    dfb = self.kernel.dfb(name)
                    wanted = "input" if role == "reader" else "output"
                    if dfb.tensor is None or dfb.tensor.role != wanted:
                        continue
                    call = "read_block" if role == "reader" else "write_block"
                    tr, tc = dfb.tensor.shape
                    br, bc = dfb.block
                    out.append(Line(f"{call}(cb_{name}, {name}, n_{name}, {br}, {bc}, {tr}, {tc});"))
                    out.append(Line(f"++n_{name};"))
            elif isinstance(stmt, Loop):
                inner = self.mirror(stmt.body, role, {**counts, stmt.var: stmt.count})
                if inner:
                    out.append(For(stmt.var, stmt.count, tuple(inner)))
            elif isinstance(stmt, If):
                then, orelse = self.mirror(stmt.then, role, counts), self.mirror(stmt.orelse, role, counts)
                if then or orelse:
                    count = counts[stmt.var]
                    out.append(IfBlock(_cond(stmt.var, count, stmt.condition), tuple(then), tuple(orelse)))
        return out


def _mentions(nodes: Sequence[Node], var: str) -> bool:
    import re

    word = re.compile(rf"\b{re.escape(var)}\b")
    for node in nodes:
        if isinstance(node, Line) and word.search(node.text):
            return True
        if isinstance(node, For) and _mentions(node.body, var):
            return True
        if isinstance(node, IfBlock) and (word.search(node.condition) or _mentions(node.then, var) or _mentions(node.orelse, var)):
            return True
    return False


def simplify(nodes: Sequence[Node]) -> tuple[Node, ...]:
    """Drop generated single-trip loops whose variable the body does not use."""
    out: list[Node] = []
    for node in nodes:
        if isinstance(node, For):
            body = simplify(node.body)
            if node.count == 1 and node.var.endswith("_") and not _mentions(body, node.var):
                out.extend(body)
            else:
                out.append(For(node.var, node.count, body))
        elif isinstance(node, IfBlock):
            out.append(IfBlock(node.condition, simplify(node.then), simplify(node.orelse)))
        else:
            out.append(node)
    return tuple(out)


class _Abort(Exception):
    """A located error was reported; skip the rest of this statement."""


def _mul(expr: str, factor: int) -> str:
    if expr == "0" or factor == 0:
        return "0"
    return expr if factor == 1 else f"{expr} * {factor}"


def _add(a: str, b: str, paren: bool = False) -> str:
    if a == "0":
        return b
    if b == "0":
        return a
    return f"({a} + {b})" if paren else f"{a} + {b}"


def _leaves(value: Value) -> list[str]:
    if isinstance(value, DfbRef):
        return [value.dfb]
    return [leaf for arg in value.args for leaf in _leaves(arg)]


def lower(
    kernel: Kernel,
    ops: OpsModel,
    spelling: SpellingModel,
    plan: Any,
    compute_config: dict[str, Any],
    sink: DiagnosticSink,
) -> LoweredKernel | None:
    errors_before = len(sink.diagnostics)
    acc = l1_accumulation.analyze(kernel, sink)
    width = int(plan.dest_width)
    sync = plan.sync.value
    capacity = spelling.capacity(width, sync)
    if capacity is None:
        sink.error(kernel.mark, f"{spelling.source} gives no DST capacity for {width}-bit {sync} sync")
        return None
    low = _Lowering(kernel, ops, spelling, plan, sink, acc, capacity)
    compute = low.body(kernel.body)
    reader = low.mirror(kernel.body, "reader")
    writer = low.mirror(kernel.body, "writer")
    cbs = []
    for d in kernel.dfbs:
        fmt = spelling.format(d.dtype)
        if fmt is None:
            sink.error(d.mark, f"element type {d.dtype!r} has no tile format in {spelling.source}")
            continue
        cbs.append(CbInfo(d.name, d.index, fmt.name, fmt.tile_bytes, d.pages))
    if len(sink.diagnostics) != errors_before or low.first_compute is None:
        if low.first_compute is None and len(sink.diagnostics) == errors_before:
            sink.error(kernel.mark, f"kernel {kernel.name!r} stores nothing")
        return None
    assert low.spelling.kernel is not None
    srca, srcb, pack = low.first_compute
    init = Line(fill(low.calls.init, {"srca": srca, "srcb": srcb, "pack": pack}) + ";")
    low.includes.add(low.calls.init_include)
    fmt_of = {c.name: c.format for c in cbs}
    tensors = [
        TensorInfo(d.name, d.tensor.role, fmt_of[d.name], d.tensor.shape, d.block, d.index)
        for d in kernel.dfbs
        if d.tensor is not None
    ]
    return LoweredKernel(
        kernel=kernel,
        plan_json=plan.to_json(),
        compute_config=compute_config,
        dest_width=width,
        sync=sync,
        dst_capacity=capacity,
        subblocked=low.subblocked,
        compute_includes=tuple(sorted({low.calls.include, *low.includes})),
        compute_cbs=tuple(c for c in cbs if c.name in low.used_cbs),
        compute=simplify((init, *compute)),
        reader=simplify(reader),
        writer=simplify(writer),
        cbs=tuple(cbs),
        inputs=tuple(t for t in tensors if t.role == "input"),
        outputs=tuple(t for t in tensors if t.role == "output"),
        strategies=tuple((op_id, s.value) for op_id, s in plan.strategies),
        sources=tuple(sorted({kernel.source, spelling.source, *ops.sources})),
    )


def plan_kernels(
    kernels: Sequence[Kernel],
    ops: OpsModel,
    targets: TargetsModel,
    spelling: SpellingModel,
) -> list[LoweredKernel]:
    """Resolve and lower every kernel; raises SpecErrors with every problem found."""
    sink = DiagnosticSink()
    if not kernels:
        return []
    resolver = resolution.Resolver(ops, targets)
    lowered = []
    for kernel in kernels:
        plan = resolver.resolve(kernel, sink)
        if plan is None:
            continue
        result = lower(kernel, ops, spelling, plan, resolver.compute_config(plan, kernel.math_fidelity), sink)
        if result is not None:
            lowered.append(result)
    if sink:
        raise SpecErrors(sink.diagnostics)
    return lowered
