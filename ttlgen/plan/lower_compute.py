"""Lower a kernel's block-style body to the compute program of the kernel IR.

Decisions made here:

* Strategy per op, DST width and sync come from the plan; the DST capacity for that
  width and sync comes from the spelling spec.
* A matmul output block larger than the DST capacity is subblocked (rows of the block
  first); elementwise values are computed for as many tiles per DST acquire as fit.
* Packer L1 accumulation follows :mod:`ttlgen.plan.l1_accumulation`. With 32-bit DST an
  accumulation scope that is one loop with one matmul ``+=`` whose output block fits in
  DST keeps the sum in DST across the loop (packed once, full fp32); otherwise every K
  step packs and the packer accumulates in the output format. ``strict_f32_acc`` makes
  that fallback (an accumulating 32-bit-DST kernel that needs subblocking) an error.
* The hardware is started once, loading each source register and the packer with the
  CB the kernel first reads through it (a source the kernel never reads gets the other's),
  in the source order the first op takes them (``reverse`` when its first CB operand is
  unpacked to SrcB, as a matmul's in0 is): what the op calls read is their
  ``format_needs``, so the start-up's CBs are those of the first op's init.
* An op's uninit (reduce's packer edge masks) runs after its result is packed, or before
  another op's init in the same computation, whichever comes first.
* Before each op's init (upstream's order: reconfigure, then the short init, as the
  ``_with_dt`` inits do), each source register the op unpacks through is reconfigured to
  its CB, and the packer to the output CB before the pack; each op, copy and pack records
  the CB whose format each register it reads must hold (``Call.format_needs``).
  :mod:`ttlgen.plan.data_formats` later drops the reconfigurations that load a format the
  register already holds.

Every call is bound from a form of the spelling spec at the kernel's API level
(:func:`kernel_ir.bind`); includes are looked up afterwards from the API spec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ttlgen.errors import DiagnosticSink
from ttlgen.model import kernel_names
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
    walk_statements,
    walk_values,
)
from ttlgen.model.ops import BlockShape, OpSemantics, OpsModel, Route
from ttlgen.model.spelling import (
    ArgKind,
    CallForm,
    CbCalls,
    DefineSpelling,
    KernelCalls,
    LevelSpelling,
    Literal,
    Placeholder,
    Spelling,
)
from ttlgen.model.tt_metal_api import State
from ttlgen.plan import element_types, l1_accumulation
from ttlgen.plan import kernel_ir as ir
from ttlgen.plan.kernel_ir import Const, Expr, Step, Stmt, Var, add, div, mod, mul

# The lowering's own loop variables and constants (user loop variables cannot end in '_').
TILE = Var("t_")  # tile within a DST group or subblock
GROUP = Var("g_")  # DST group of an elementwise block
SUBBLOCK = Var("sb_")  # matmul subblock
INNER = Var("kk_")  # inner-dimension tile of a matmul block
ROW0 = Var("r0_")  # first output row of a matmul subblock
COL0 = Var("c0_")  # first output column of a matmul subblock

class Abort(Exception):
    """A located error was reported; skip the rest of this statement."""


def condition(var: str, count: int, when: str) -> Expr:
    """A kernel ``if``'s test of its loop variable as an IR expression."""
    last = Const(count - 1)
    test = {
        "first": (ir.Comparison.EQ, Const(0)),
        "not_first": (ir.Comparison.NE, Const(0)),
        "last": (ir.Comparison.EQ, last),
        "not_last": (ir.Comparison.NE, last),
    }[when]
    return ir.Compare(test[0], Var(var), test[1])


def cb_sync(cbs: CbCalls, action: str, dfb: str, tiles: Expr) -> ir.Call:
    """A kernel body's ``wait``/``pop``/``reserve``/``push`` of ``tiles`` tiles of ``dfb``."""
    step, form = {
        "wait": (Step.CB_WAIT_FRONT, cbs.wait_front),
        "pop": (Step.CB_POP_FRONT, cbs.pop_front),
        "reserve": (Step.CB_RESERVE_BACK, cbs.reserve_back),
        "push": (Step.CB_PUSH_BACK, cbs.push_back),
    }[action]
    return ir.bind(step, form, {"cb": Var(kernel_names.cb(dfb)), "tiles": tiles})


def _divisor_at_most(n: int, limit: int) -> int:
    return max(d for d in range(1, min(n, max(limit, 1)) + 1) if n % d == 0)


def _for(var: Var, count: int, body: Sequence[Stmt]) -> ir.For:
    return ir.For(var.name, Const(count), tuple(body), generated=True)


@dataclass(frozen=True)
class FirstCompute:
    """The CBs the hardware start-up loads SrcA, SrcB and the packer with."""

    srca: Expr
    srcb: Expr
    pack: Expr
    reverse: bool  # the first op's first CB operand is unpacked to SrcB


def first_compute(body: Sequence[Stmt]) -> FirstCompute | None:
    """The CB the calls of ``body`` first read through each register (None: nothing is packed)."""
    calls = ir.calls(body)

    def first_read(register: State) -> Expr | None:
        return next((cb for call in calls for state, cb in call.format_needs if state is register), None)

    pack = first_read(State.PACK_FORMAT)
    if pack is None:
        return None
    srca, srcb = first_read(State.SRCA_FORMAT), first_read(State.SRCB_FORMAT)
    srca = srca if srca is not None else srcb if srcb is not None else pack
    srcb = srcb if srcb is not None else srca
    first = next((c for c in calls if any(state is not State.PACK_FORMAT for state, _ in c.format_needs)), None)
    reverse = False
    if first is not None:
        reads, operand = dict(first.format_needs), first.arg(ArgKind.CB)
        reverse = operand is not None and reads.get(State.SRCB_FORMAT) == operand and reads.get(State.SRCA_FORMAT) != operand
    return FirstCompute(srca, srcb, pack, reverse)


@dataclass
class ComputeLowering:
    """What lowering one compute kernel reads: the kernel, ops, spelling and its resolved plan."""

    kernel: Kernel
    ops: OpsModel
    spelling: LevelSpelling
    plan: Any
    sink: DiagnosticSink
    acc: l1_accumulation.AccAnalysis
    capacity: int
    # Element types whose data format the packer can accumulate into L1 in.
    l1_acc_elements: frozenset[str] = frozenset()
    subblocked: bool = False
    loop_counts: dict[str, int] = field(default_factory=dict)
    loop_vars: dict[Any, str] = field(default_factory=dict)  # loop mark -> its variable
    resident: set[Any] = field(default_factory=set)  # first-loop marks of scopes kept in DST
    pending_uninit: list[ir.Call] = field(default_factory=list)
    # The defines the host passes to the kernel: name -> (value, the first op use needing
    # it, the spelling's define), from every op use lowered.
    defines: dict[str, tuple[Expr, OpExpr, DefineSpelling]] = field(default_factory=dict)
    # The registers an init's API form expects loaded (api_check.format_expects): where the
    # API spec states it, it decides the op's format needs over the spelling's `unpack`.
    expects: Callable[[ir.Call], tuple[tuple[State, Expr], ...] | None] = field(kw_only=True)
    # What keeps a call from running on the emulator (no binding of its function), or None.
    unemulated: Callable[[ir.Call], str | None] | None = None
    # The numeric code of each element type's tile format (``{format}`` placeholders).
    format_codes: Mapping[str, int] = field(default_factory=dict)
    # The element type each op computes (element_types.infer).
    types: element_types.ValueTypes = field(kw_only=True)

    def __post_init__(self) -> None:
        self.by_name = {op.name: op for op in self.ops.ops}
        self.dfbs = {d.name: d for d in self.kernel.dfbs}
        self.needs: dict[int, int] = {}  # DST slots of each sub-expression, by identity (`need`)
        self.strategies = dict(self.plan.strategies)  # op id -> chosen strategy

    # -- spelling
    @property
    def calls(self) -> KernelCalls:
        return self.spelling.kernel

    @property
    def cbs(self) -> CbCalls:
        return self.spelling.cb

    @property
    def wide_dest(self) -> bool:
        return int(self.plan.dest_width) == 32

    def bind(
        self,
        step: Step,
        form: CallForm,
        values: Mapping[str, Expr],
        strategy: str | None = None,
        format_needs: tuple[tuple[State, Expr], ...] = (),
    ) -> ir.Call:
        """The call ``form`` spells with ``values`` (an op's under the operand routes of its
        ``strategy``, when given), or Abort after reporting the placeholder it lacks."""
        try:
            return ir.bind(step, form, values, format_needs=format_needs)
        except ir.UnboundPlaceholder as exc:
            if strategy is not None:
                given = f"operand routes of the {strategy} strategy give: {', '.join(exc.given)}"
            else:
                given = f"this call gives: {', '.join(exc.given) or 'none'}"
            self.sink.error(form.mark, f"{form.text!r}: placeholder {{{exc.key}}} has no value here ({given})")
            raise Abort from None

    def dst(self, step: Step) -> ir.Call:
        protocol = self.calls.dst
        form = {
            Step.DST_ACQUIRE: protocol.acquire,
            Step.DST_COMMIT: protocol.commit,
            Step.DST_WAIT: protocol.wait,
            Step.DST_RELEASE: protocol.release,
        }[step]
        return self.bind(step, form, {})

    def l1(self, enable: int) -> ir.Call:
        return self.bind(Step.L1_ACC, self.calls.l1_acc, {"enable": Const(enable)})

    def cb(self, dfb: str) -> Var:
        return Var(kernel_names.cb(dfb))

    # -- ops
    def semantics(self, expr: OpExpr) -> OpSemantics:
        return self.by_name[expr.op]

    def strategy(self, expr: OpExpr) -> tuple[str | None, int]:
        """The chosen strategy name (None: fixed) and its index in the op's strategies."""
        op = self.semantics(expr)
        if op.fixed:
            return None, 0
        chosen = self.strategies.get(expr.id)
        name = chosen.value if chosen is not None else op.strategies[0].name
        return name, next(i for i, s in enumerate(op.strategies) if s.name == name)

    def spelled(self, expr: OpExpr) -> tuple[Spelling, tuple[Route, ...]]:
        name, index = self.strategy(expr)
        op = self.semantics(expr)
        routes = op.strategies[index].routes
        producer = op.by_producer
        if producer is not None:
            # The operand read by its producer: from its buffer, or from DST when computed.
            from_dfb = producer < len(expr.args) and isinstance(expr.args[producer], DfbRef)
            route = Route.DFB if from_dfb else Route.DST
            routes = tuple(route if i == producer else r for i, r in enumerate(routes))
            name = route.value
        spelling = self.spelling.spelling(expr.op, name)
        if spelling is None:
            self.sink.error(expr.mark, f"op {expr.op!r} has no tt-metal spelling for {name or 'fixed'!r} (chosen by the plan)")
            raise Abort
        if spelling.absent is not None:
            release = f" ({self.spelling.release})" if self.spelling.release else ""
            self.sink.error(
                expr.mark,
                f"op {expr.op!r} has no function at tt-metal API level {self.spelling.level!r}{release}, "
                f"the level of target {self.kernel.target!r}: {spelling.absent} ({spelling.mark})",
            )
            raise Abort
        return spelling, routes

    def shape(self, value: Value) -> tuple[int, int]:
        if isinstance(value, DfbRef):
            return self.dfbs[value.dfb].block
        op = self.semantics(value)
        if op.block_shape is BlockShape.CONTRACTION:
            lhs, rhs = self.shape(value.args[0]), self.shape(value.args[1])
            if lhs[1] != rhs[0]:
                self.sink.error(value.mark, f"matmul of {lhs[0]}x{lhs[1]} by {rhs[0]}x{rhs[1]} tile blocks: inner dimensions differ")
                raise Abort
            return (lhs[0], rhs[1])
        shapes = [self.shape(a) for a in value.args]
        full = [s for s in shapes if s != (1, 1)]
        if any(s != full[0] for s in full):
            self.sink.error(value.mark, f"operands of {value.op!r} have different block shapes: {', '.join(f'{s[0]}x{s[1]}' for s in shapes)}")
            raise Abort
        return full[0] if full else (1, 1)

    def need(self, value: Value) -> int:
        """DST slots one output tile of ``value`` uses (each sub-expression counted once,
        so the count is linear in the expression's size)."""
        if isinstance(value, DfbRef):
            return 1
        known = self.needs.get(id(value))
        if known is None:
            _, routes = self.spelled(value)
            offset, known = 0, 1
            for arg, route in zip(value.args, routes, strict=False):
                if route is Route.DST:
                    arg_need = self.need(arg)
                    known = max(known, offset + arg_need)
                    offset += arg_need
            self.needs[id(value)] = known
        return known

    def tile_of(self, ref: DfbRef, tile: Expr) -> Expr:
        return Const(0) if self.dfbs[ref.dfb].block == (1, 1) else tile

    def element_bits(self, expr: OpExpr) -> dict[str, int]:
        """The element width of each dataflow-buffer operand of ``expr``, by operand name."""
        bits: dict[str, int] = {}
        for operand, arg in zip(self.semantics(expr).operands, expr.args, strict=False):
            element = self.ops.vocabulary.element(self.dfbs[arg.dfb].dtype) if isinstance(arg, DfbRef) else None
            if element is not None:
                bits[operand.name] = element.bits
        return bits

    def unpacked(self, spelling: Spelling, values: Mapping[str, Expr], names: Sequence[str], expr: OpExpr) -> tuple[tuple[State, Expr], ...]:
        """The CB each source register of the op's call reads (its ``unpack`` spelling, for
        the element widths of ``expr``'s operands)."""
        srca, srcb = spelling.unpacked(self.element_bits(expr))
        return tuple(
            (state, values[f"{operand}.cb"])
            for state, operand in ((State.SRCA_FORMAT, srca), (State.SRCB_FORMAT, srcb))
            if operand is not None and operand in names
        )

    def reconfig(self, needs: Sequence[tuple[State, Expr]]) -> list[Stmt]:
        """Reconfigurations loading each register with the format of the CB it must hold."""
        forms = {State.SRCA_FORMAT: (Step.RECONFIG_SRCA, self.calls.reconfig_srca), State.SRCB_FORMAT: (Step.RECONFIG_SRCB, self.calls.reconfig_srcb)}
        return [self.bind(*forms[state], {"cb": cb}) for state, cb in needs]

    def flush_uninit(self) -> list[Stmt]:
        """The uninits still owed by ops computed so far, in the order they were computed."""
        flushed: list[Stmt] = list(self.pending_uninit)
        self.pending_uninit.clear()
        return flushed

    def init(self, call: ir.Call, owner: Spelling | None, reconfigs: Sequence[Stmt] = ()) -> list[Stmt]:
        """An op's (``owner``'s; None: the copy's) init after its reconfigurations, both after
        the uninits other ops still owe."""
        own = owner.uninit.mark if owner is not None and owner.uninit is not None else None
        if any(u.origin != own for u in self.pending_uninit):
            return [*self.flush_uninit(), *reconfigs, call]
        return [*reconfigs, call]

    def copy(self, ref: DfbRef, tile: Expr, slot: Expr) -> list[Stmt]:
        cb = self.cb(ref.dfb)
        # The copy unpacks its CB through SrcA (unpack A to DST).
        needs = ((State.SRCA_FORMAT, cb),)
        copy = self.bind(Step.COPY, self.calls.copy, {"cb": cb, "tile": self.tile_of(ref, tile), "dst": slot}, format_needs=needs)
        return [*self.init(self.bind(Step.COPY_INIT, self.calls.copy_setup, {"cb": cb}), None, self.reconfig(needs)), copy]

    def evaluate(self, value: Value, slot: Expr, offset: int, tile: Expr, pack_cb: Expr) -> list[Stmt]:
        """Statements computing one tile of ``value`` into DST slot ``slot + offset``."""
        here = add(slot, Const(offset))
        if isinstance(value, DfbRef):
            return self.copy(value, tile, here)
        spelling, routes = self.spelled(value)
        op = self.semantics(value)
        names = [o.name for o in op.operands]
        values: dict[str, Expr] = {"dst": here, "pack": pack_cb}
        out: list[Stmt] = []
        inner = offset
        for arg, route, name in zip(value.args, routes, names, strict=False):
            if route is Route.DFB:
                if not isinstance(arg, DfbRef):
                    self.sink.error(value.mark, f"operand {name!r} of {value.op!r} reads a dataflow buffer: give a DFB name, not an op")
                    raise Abort
                values[f"{name}.cb"] = self.cb(arg.dfb)
                values[f"{name}.tile"] = self.tile_of(arg, tile)
            elif route is Route.DST:
                out.extend(self.evaluate(arg, slot, inner, tile, pack_cb))
                values[f"{name}.dst"] = add(slot, Const(inner))
                inner += self.need(arg)
        for arg, name in zip(value.args, names, strict=False):
            code = self.format_code(self.element_of(arg))
            if code is not None:
                values[f"{name}.format"] = Const(code)
        result_code = self.format_code(self.types.of(value))
        if result_code is not None:
            values["format"] = Const(result_code)
        values.update(self.attr_values(value, spelling))
        self.require_defines(value, spelling, values)
        init = self.bind(Step.OP_INIT, spelling.init, values, spelling.strategy)
        needs = self.expects(init) or self.unpacked(spelling, values, names, value)
        call = self.bind(Step.OP, spelling.call, values, spelling.strategy, format_needs=needs)
        uninit = self.bind(Step.OP_UNINIT, spelling.uninit, values, spelling.strategy) if spelling.uninit is not None else None
        self.check_emulated(value, (init, call) + ((uninit,) if uninit is not None else ()))
        out.extend(self.init(init, spelling, self.reconfig(needs)))
        out.append(call)
        if uninit is not None and uninit not in self.pending_uninit:
            self.pending_uninit.append(uninit)
        return out

    def attr_values(self, value: OpExpr, spelling: Spelling) -> dict[str, Expr]:
        """The ``{attr.<name>}`` values of an op use: a number as its fp32 value, any other
        attribute as ``attributes`` spells it."""
        op = self.semantics(value)
        values: dict[str, Expr] = {}
        for attr, attr_value in value.attrs:
            if attr == op.result_element_attribute and not any(a == attr for a, _ in spelling.attributes):
                continue  # an element type: spelled through {format}
            if attr in op.float_attributes:
                values[f"attr.{attr}"] = ir.Float(float(attr_value))  # the model holds the nearest fp32, written exactly
                continue
            spelled = spelling.attribute_spelling(attr, attr_value)
            if spelled is None:
                self.sink.error(value.mark, f"attribute {attr}={attr_value!r} of {value.op!r} has no spelling")
                raise Abort
            values[f"attr.{attr}"] = ir.Symbol(spelled)
        return values

    def require_defines(self, value: OpExpr, spelling: Spelling, values: Mapping[str, Expr]) -> None:
        """Record the defines the host passes for this op use (its spelling's at the level); a
        define another op of the kernel needs with another value is an error: a host
        passes one value of a define per kernel."""
        for define in spelling.defines:
            bound: Expr | None = ir.Symbol(define.value.text) if isinstance(define.value, Literal) else values.get(define.value.key)
            if bound is None:
                assert isinstance(define.value, Placeholder)
                self.sink.error(
                    value.mark,
                    f"op {value.op!r} gives no value for {{{define.value.key}}}, which define {define.name} of its spelling at level "
                    f"{self.spelling.level!r} takes ({define.mark}); give the op attribute {define.value.key.removeprefix('attr.')!r}",
                )
                raise Abort
            first = self.defines.setdefault(define.name, (bound, value, define))
            if first[0] != bound:
                other, where = first[1], first[2]
                self.sink.error(
                    value.mark,
                    f"op {value.op!r} needs define {define.name}={_shown(bound)} ({define.mark}), but op {other.op!r} of kernel "
                    f"{self.kernel.name!r} at {other.mark} needs {define.name}={_shown(first[0])} ({where.mark}): the host passes one "
                    f"value of a define per kernel (level {self.spelling.level!r}); compute them in separate kernels",
                )
                raise Abort

    def kernel_defines(self) -> tuple[ir.Define, ...]:
        """The defines the host passes to the kernel, by name."""
        return tuple(ir.Define(name, bound) for name, (bound, _, _) in sorted(self.defines.items()))

    def element_of(self, value: Value) -> str | None:
        return self.dfbs[value.dfb].dtype if isinstance(value, DfbRef) else self.types.of(value)

    def format_code(self, element: str | None) -> int | None:
        """The numeric code of ``element``'s tile format (a ``{format}`` placeholder's value)."""
        return self.format_codes.get(element) if element is not None else None

    def check_emulated(self, expr: OpExpr, calls: Sequence[ir.Call]) -> None:
        """Each call of an op the kernel uses has a body in the emulator (else the kernel
        would build and fail to link at `ttlgen run`)."""
        if self.unemulated is None:
            return
        for call in calls:
            problem = self.unemulated(call)
            if problem is not None:
                self.sink.error(expr.mark, f"op {expr.op!r}: {problem}")
                raise Abort

    def is_matmul(self, value: Value) -> bool:
        if not isinstance(value, OpExpr):
            return False
        spelling = self.spelling.spelling(value.op, self.strategy(value)[0])
        return spelling is not None and spelling.accumulates_in_dst

    def matmul_calls(self, expr: OpExpr, sh: int, sw: int, row0: Expr, col0: Expr, pack_cb: Expr) -> list[Stmt]:
        spelling, _ = self.spelled(expr)
        lhs, rhs = expr.args[0], expr.args[1]
        assert isinstance(lhs, DfbRef) and isinstance(rhs, DfbRef)
        kb = self.dfbs[lhs.dfb].block[1]
        n = self.dfbs[rhs.dfb].block[1]
        kk: Expr = INNER if kb > 1 else Const(0)
        values: dict[str, Expr] = {
            "lhs.cb": self.cb(lhs.dfb),
            "rhs.cb": self.cb(rhs.dfb),
            "lhs.tile": add(mul(row0, kb), kk),
            "rhs.tile": add(mul(kk, n), col0),
            "dst": Const(0),
            "rt": Const(sh),
            "ct": Const(sw),
            "kt": Const(kb),
            "pack": pack_cb,
        }
        values.update(self.attr_values(expr, spelling))
        self.require_defines(expr, spelling, values)
        needs = self.unpacked(spelling, values, ["lhs", "rhs"], expr)
        call = self.bind(Step.OP, spelling.call, values, spelling.strategy, format_needs=needs)
        return [
            *self.init(self.bind(Step.OP_INIT, spelling.init, values, spelling.strategy), spelling, self.reconfig(needs)),
            _for(INNER, kb, (call,)) if kb > 1 else call,
        ]

    def out_tile(self, n: int, sw: int, row0: Expr, col0: Expr) -> Expr:
        """The output block's tile that subblock tile ``t_`` packs into."""
        if sw == n and col0 == Const(0):
            return add(mul(row0, n), TILE)
        return add(add(mul(add(row0, div(TILE, sw)), n), col0), mod(TILE, sw))

    def packs(self, target: str, tiles: int, slot_of_t: Expr, out_tile: Expr) -> list[Stmt]:
        cb = self.cb(target)
        pack = self.bind(Step.PACK, self.calls.pack, {"dst": slot_of_t, "cb": cb, "tile": out_tile}, format_needs=((State.PACK_FORMAT, cb),))
        return [
            self.dst(Step.DST_COMMIT),
            self.dst(Step.DST_WAIT),
            self.bind(Step.RECONFIG_PACK, self.calls.reconfig_pack, {"cb": cb}),
            _for(TILE, tiles, (pack,)),
            self.dst(Step.DST_RELEASE),
        ]

    def subblock(self, m: int, n: int) -> tuple[int, int]:
        fit = max(self.capacity, 1)
        if n <= fit:
            return _divisor_at_most(m, fit // n), n
        return 1, _divisor_at_most(n, fit)

    def store(self, store: Store) -> list[Stmt]:
        """A complete compute for one store: acquire, math, pack, release per subblock."""
        out_dfb = self.dfbs[store.target]
        m, n = out_dfb.block
        shape = self.shape(store.value)
        if shape != (m, n) and shape != (1, 1):
            self.sink.error(store.mark, f"value of {shape[0]}x{shape[1]} tiles does not match the {m}x{n}-tile block of {store.target!r}")
            raise Abort
        pack_cb = self.cb(store.target)
        value = store.value
        inner = [e for e in walk_values(value) if e is not value and self.is_matmul(e)]
        if inner:
            self.sink.error(
                inner[0].mark,
                f"{inner[0].op!r} must be the whole value of a store or '+=' (fused ops after it are not "
                "supported): store its result, then apply the op to the stored block",
            )
            raise Abort
        if isinstance(value, OpExpr) and self.is_matmul(value):
            return self.matmul_store(store, value, m, n, pack_cb)
        need = self.need(value)
        tiles = m * n
        group = _divisor_at_most(tiles, max(self.capacity // need, 1))
        if need * tiles > self.capacity:
            self.check_strict(store, True, m, n)
        slot: Expr
        tile: Expr
        if group == 1:
            slot, tile = Const(0), (GROUP if tiles > 1 else Const(0))
            math: list[Stmt] = self.evaluate(value, slot, 0, tile, pack_cb)
        else:
            slot = TILE if need == 1 else mul(TILE, need)
            tile = add(mul(GROUP, group) if tiles != group else Const(0), TILE)
            math = [_for(TILE, group, self.evaluate(value, slot, 0, tile, pack_cb))]
        body = [self.dst(Step.DST_ACQUIRE), *math, *self.packs(store.target, group, slot, tile), *self.flush_uninit()]
        return [_for(GROUP, tiles // group, body)]

    def matmul_store(self, store: Store, value: OpExpr, m: int, n: int, pack_cb: Expr) -> list[Stmt]:
        for arg in value.args[:2]:
            if not isinstance(arg, DfbRef):
                self.sink.error(value.mark, f"the operands of {value.op!r} are read from dataflow buffers: give DFB names")
                raise Abort
        sh, sw = self.subblock(m, n)
        self.check_strict(store, m * n > sh * sw, m, n)
        nsb_c = n // sw
        count = (m // sh) * nsb_c
        row0: Expr = ROW0 if m // sh > 1 else Const(0)
        col0: Expr = COL0 if nsb_c > 1 else Const(0)
        body: list[Stmt] = []
        if row0 != Const(0):
            body.append(ir.Declare(ROW0.name, ir.Scalar.U32, mul(div(SUBBLOCK, nsb_c) if nsb_c > 1 else SUBBLOCK, sh), ir.Storage.CONST))
        if col0 != Const(0):
            body.append(ir.Declare(COL0.name, ir.Scalar.U32, mul(mod(SUBBLOCK, nsb_c), sw), ir.Storage.CONST))
        body.append(self.dst(Step.DST_ACQUIRE))
        if len(value.args) > 2:
            acc = value.args[2]
            if not isinstance(acc, DfbRef) or self.dfbs[acc.dfb].block != (m, n):
                self.sink.error(value.mark, "the matmul accumulator must be a DFB block of the output's shape")
                raise Abort
            body.append(_for(TILE, sh * sw, self.copy(acc, self.out_tile(n, sw, row0, col0), TILE)))
        body.extend(self.matmul_calls(value, sh, sw, row0, col0, pack_cb))
        body.extend(self.packs(store.target, sh * sw, TILE, self.out_tile(n, sw, row0, col0)))
        body.extend(self.flush_uninit())
        return [_for(SUBBLOCK, count, body)]

    def check_strict(self, store: Store, subblocks: bool, m: int, n: int) -> None:
        if subblocks:
            self.subblocked = True
        if not (subblocks and store.accumulate and self.wide_dest and self.kernel.strict_f32_acc):
            return
        out = self.dfbs[store.target].dtype
        element = self.ops.vocabulary.element(out)
        if element is not None and element.bits == 32 and element.is_float:
            return  # an f32 output keeps full precision through the packer (upstream: non-f32 outputs only)
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
        m, n = self.dfbs[store.target].block
        return store if m * n <= self.capacity else None

    # -- body
    def body(self, stmts: Sequence[Statement]) -> list[Stmt]:
        out: list[Stmt] = []
        for stmt in stmts:
            try:
                out.extend(self.statement(stmt))
            except Abort:
                continue
        return out

    def statement(self, stmt: Statement) -> list[Stmt]:
        out = self.lowered(stmt)
        for scope in self.acc.enables_after(stmt.mark):
            if scope.first in self.resident:
                continue
            # Every target of the scope has had its first pack: later packs accumulate.
            assert scope.enable_loop is not None
            var = self.loop_vars[scope.enable_loop]
            out.append(ir.If(condition(var, self.loop_counts[var], "first"), (self.l1(1),)))
        for scope in self.acc.disables_after(stmt.mark):
            if scope.first not in self.resident:
                out.append(self.l1(0))  # after the push, as upstream places the final disable
        return out

    def check_l1_format(self, store: Store) -> None:
        """The packer accumulates into L1 only in some data formats (a block-float output
        cannot): upstream's error otherwise."""
        dtype = self.dfbs[store.target].dtype
        if dtype not in self.l1_acc_elements:
            self.sink.error(store.mark, l1_accumulation.unsupported_format(dtype))

    def lowered(self, stmt: Statement) -> list[Stmt]:
        if isinstance(stmt, Sync):
            return [cb_sync(self.cbs, stmt.action, d, Const(self.dfbs[d].block_tiles)) for d in stmt.dfbs]
        if isinstance(stmt, Store):
            nodes = self.store(stmt)
            if stmt.mark in self.acc.straight_accumulations:
                self.check_l1_format(stmt)
                return [self.l1(1), *nodes, self.l1(0)]
            return nodes
        if isinstance(stmt, If):
            count = self.loop_counts[stmt.var]
            return [ir.If(condition(stmt.var, count, stmt.condition), tuple(self.body(stmt.then)), tuple(self.body(stmt.orelse)))]
        self.loop_counts[stmt.var] = stmt.count
        self.loop_vars[stmt.mark] = stmt.var
        scope = self.acc.scope_of_loop(stmt.mark)
        if stmt.count == 0:
            # A loop of no iterations is no code (its body is still checked); a scope's
            # flag changes around it stay.
            self.body(stmt.body)
            if scope is None:
                return []
        if scope is None:
            return [ir.For(stmt.var, Const(stmt.count), tuple(self.body(stmt.body)), generated=False)]
        resident = self.dst_resident(stmt, scope)
        if resident is not None:
            self.resident.add(scope.first)
            return self.resident_loop(stmt, resident)
        if stmt.mark == scope.first:
            for inner_stmt in walk_statements(stmt.body):
                if isinstance(inner_stmt, Store) and inner_stmt.mark in scope.stores:
                    self.check_l1_format(inner_stmt)
        inner = self.body(stmt.body)
        before: list[Stmt] = []
        after: list[Stmt] = []
        if stmt.mark == scope.first:
            # Standard pattern: off, so the first packs overwrite the fresh reservation (the
            # enable follows them, placed by `statement`); a written block accumulates at once.
            before.append(self.l1(1) if scope.continues else self.l1(0))
        else:
            before.append(self.l1(1))  # re-armed: inits between the loops may reset the packer
        if stmt.mark == scope.last and scope.disable_after is None:
            after.append(self.l1(0))
        loop = [ir.For(stmt.var, Const(stmt.count), tuple(inner), generated=False)] if stmt.count > 0 else []
        return [*before, *loop, *after]

    def resident_loop(self, loop: Loop, store: Store) -> list[Stmt]:
        value = store.value
        assert isinstance(value, OpExpr)
        m, n = self.dfbs[store.target].block
        pack_cb = self.cb(store.target)
        inner: list[Stmt] = []
        for stmt in loop.body:
            if stmt is store:
                inner.extend(self.matmul_calls(value, m, n, Const(0), Const(0), pack_cb))
            else:
                inner.extend(self.statement(stmt))
        return [
            self.dst(Step.DST_ACQUIRE),
            ir.For(loop.var, Const(loop.count), tuple(inner), generated=False),
            *self.packs(store.target, m * n, TILE, self.out_tile(n, n, Const(0), Const(0))),
            *self.flush_uninit(),
        ]

    def hardware_init(self, first: FirstCompute) -> ir.Call:
        """The hardware start-up, loading the CBs the kernel first reads."""
        form = self.calls.startup_reverse if first.reverse else self.calls.startup_regular
        return self.bind(Step.HW_INIT, form, {"srca": first.srca, "srcb": first.srcb, "pack": first.pack})


def _shown(value: Expr) -> str:
    """A define's value in a message."""
    if isinstance(value, ir.Symbol):
        return value.text
    if isinstance(value, ir.Float):
        return repr(value.value)
    return str(value)


def used_cbs(body: Sequence[Stmt]) -> set[str]:
    """The CB constants the calls of ``body`` read."""
    return {
        arg.value.name
        for call in ir.calls(body)
        for arg in (*call.template_args, *call.args)
        if arg.kind is ArgKind.CB and isinstance(arg.value, Var)
    }
