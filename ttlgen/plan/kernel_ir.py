"""The kernel IR: what a generated tt-metal kernel does, as typed data.

A kernel program (compute, reader or writer) is a tree of statements: calls of kernel-API
functions by name with typed arguments, constant and variable declarations, loops and
conditionals, over integer expressions. The IR holds no C++ text: function names, types
and enumerators come from the spelling spec (bound by :func:`bind`), headers and the entry
point from the API spec of the kernel's level, the rest are identifiers (loop variables,
CB constants) and numbers. Every call carries the
:class:`Step` it performs, so passes can reason about CB and DST synchronisation, inits and
reconfigurations without knowing their spellings, and the spelling-spec position of the
form it was bound from, so a check of the API can point there.

:mod:`ttlgen.emit._kernel_printer` prints a program; nothing here formats C++.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ttlgen.errors import Mark
from ttlgen.model.call_forms import ArgKind, CallForm, FormArg, Literal, TypeForm
from ttlgen.model.tt_metal_api import EntryPoint, State

# ------------------------------------------------------------------------ expressions


@dataclass(frozen=True)
class Const:
    """An integer literal."""

    value: int


@dataclass(frozen=True)
class Bits:
    """An integer written as its bits (hexadecimal): a word of packed element values."""

    value: int


@dataclass(frozen=True)
class Float:
    """An fp32 value (a number attribute of an op), printed as a float literal that reads
    back exactly."""

    value: float


@dataclass(frozen=True)
class Var:
    """A variable or named constant of the program (loop variable, CB id, parameter)."""

    name: str


@dataclass(frozen=True)
class Symbol:
    """A name or literal from spec data: an enumerator (``Kind::VALUE``), ``true``."""

    text: str


class BinaryOp(enum.Enum):
    ADD = "add"
    MUL = "mul"
    DIV = "div"
    MOD = "mod"


@dataclass(frozen=True)
class Binary:
    """An arithmetic expression."""

    op: BinaryOp
    lhs: Expr
    rhs: Expr


class Comparison(enum.Enum):
    EQ = "eq"
    NE = "ne"
    LT = "lt"


@dataclass(frozen=True)
class Compare:
    """A comparison."""

    op: Comparison
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True)
class CallValue:
    """A call whose result is used as a value."""

    call: Call


@dataclass(frozen=True)
class Braced:
    """A brace-initialised value of the declared type."""

    items: tuple[Expr, ...]


Expr = Const | Bits | Float | Var | Symbol | Binary | Compare | CallValue | Braced


@dataclass(frozen=True)
class Define:
    """A define the host passes to a kernel (a kernel descriptor's defines, the JIT's
    defines_generated.h), with its value: an enumerator or literal (Symbol) or a number (Float)."""

    name: str
    value: Expr


def is_const(expr: Expr, number: int) -> bool:
    """Whether ``expr`` is the integer literal ``number`` (``expr == Const(number)``,
    without building a Const to compare with)."""
    return isinstance(expr, Const) and expr.value == number


def add(lhs: Expr, rhs: Expr) -> Expr:
    """``lhs + rhs``, with additions of zero folded away."""
    if is_const(lhs, 0):
        return rhs
    if is_const(rhs, 0):
        return lhs
    return Binary(BinaryOp.ADD, lhs, rhs)


def mul(lhs: Expr, factor: int) -> Expr:
    """``lhs * factor``, with multiplications by zero and one folded away."""
    if is_const(lhs, 0) or factor == 0:
        return Const(0)
    return lhs if factor == 1 else Binary(BinaryOp.MUL, lhs, Const(factor))


def div(lhs: Expr, divisor: int) -> Expr:
    return Binary(BinaryOp.DIV, lhs, Const(divisor))


def mod(lhs: Expr, divisor: int) -> Expr:
    return Binary(BinaryOp.MOD, lhs, Const(divisor))


# ---------------------------------------------------------------------------- calls


class Step(enum.Enum):
    """What a call does in the kernel."""

    HW_INIT = "hw_init"  # full hardware initialisation, once at kernel start
    OP_INIT = "op_init"  # an op's (short) init before its call
    OP = "op"  # an op's computation
    OP_UNINIT = "op_uninit"  # restores state an op changed
    RECONFIG_SRCA = "reconfig_srca"  # unpacker SrcA data format
    RECONFIG_SRCB = "reconfig_srcb"
    RECONFIG_PACK = "reconfig_pack"  # packer data format
    COPY_INIT = "init_copy"
    COPY = "copy"  # a CB tile into a DST slot
    PACK = "pack"  # a DST slot into a CB tile
    L1_ACC = "l1_acc"  # packer L1 accumulation on/off
    DST_ACQUIRE = "dst_acquire"
    DST_COMMIT = "dst_commit"
    DST_WAIT = "dst_wait"
    DST_RELEASE = "dst_release"
    CB_WAIT_FRONT = "wait_front"
    CB_POP_FRONT = "pop_front"
    CB_RESERVE_BACK = "reserve_back"
    CB_PUSH_BACK = "push_back"
    RUNTIME_ARG = "runtime_arg"
    TILE_SIZE = "tile_size"
    DATA_FORMAT = "data_format"
    READ_PTR = "read_ptr"
    WRITE_PTR = "write_ptr"
    READ_PAGE = "read_page"
    READ_BARRIER = "read_barrier"
    WRITE_PAGE = "write_page"
    WRITE_BARRIER = "write_barrier"
    ACCESSOR_ARGS = "accessor_args"  # a DRAM tensor accessor's compile-time arguments
    ACCESSOR_OFFSET = "accessor_offset"  # where the next tensor's compile-time arguments start
    ACCESSOR = "accessor"  # a DRAM tensor accessor
    HELPER = "helper"  # a function the program defines itself


DST_STEPS = (Step.DST_ACQUIRE, Step.DST_COMMIT, Step.DST_WAIT, Step.DST_RELEASE)
# The steps that change which data format a register or the packer is set for.
RECONFIGS = frozenset([Step.RECONFIG_SRCA, Step.RECONFIG_SRCB, Step.RECONFIG_PACK])


@dataclass(frozen=True)
class Arg:
    """An argument of a call, with the kind of value the API expects."""

    kind: ArgKind
    value: Expr


@dataclass(frozen=True)
class Call:
    """``function<template_args>(args)``; ``origin`` is the spelling it was bound from.

    A member function is called on ``receiver``, a value of the API type ``member_of``;
    a constructor is a call of the type's name with ``member_of`` naming it too.
    ``deprecated_ok`` is the spelling's reason for calling a deprecated form.
    ``format_needs`` says, for an op, copy or pack, the CB whose data format each register
    it reads (SrcA, SrcB, the packer) must hold when it runs."""

    step: Step
    function: str
    template_args: tuple[Arg, ...]
    args: tuple[Arg, ...]
    origin: Mark | None = field(default=None, compare=False)
    receiver: Expr | None = None
    member_of: str | None = None
    deprecated_ok: str | None = field(default=None, compare=False)
    format_needs: tuple[tuple[State, Expr], ...] = ()

    def arg(self, kind: ArgKind) -> Expr | None:
        """The first argument of ``kind``."""
        return next((a.value for a in (*self.template_args, *self.args) if a.kind is kind), None)


class UnboundPlaceholder(Exception):
    """A form's placeholder has no value in the binding; ``key`` names it."""

    def __init__(self, form: CallForm, key: str, given: Sequence[str]) -> None:
        super().__init__(key)
        self.form = form
        self.key = key
        self.given = tuple(sorted(given))


def _literal(literal: Literal) -> Arg:
    number = literal.integer
    return Arg(ArgKind.LITERAL, Const(number) if number is not None else Symbol(literal.text))


def bind(
    step: Step,
    form: CallForm,
    values: Mapping[str, Expr],
    receiver: Expr | None = None,
    member_of: str | None = None,
    format_needs: tuple[tuple[State, Expr], ...] = (),
) -> Call:
    """The call ``form`` spells, its placeholders replaced by ``values`` (by key); a member
    call of ``receiver`` (of API type ``member_of``), or a constructor with ``member_of``;
    ``format_needs`` as :class:`Call` states them."""
    template_args = _arguments(form, form.template_args, values) if form.template_args else ()
    args = _arguments(form, form.args, values)
    return Call(step, form.function, template_args, args, form.mark, receiver, member_of, form.deprecated_ok, format_needs)


def _arguments(form: CallForm, group: Sequence[FormArg], values: Mapping[str, Expr]) -> tuple[Arg, ...]:
    args = []
    for arg in group:
        if isinstance(arg, Literal):
            args.append(_literal(arg))
        elif arg.key in values:
            args.append(Arg(arg.kind, values[arg.key]))
        else:
            raise UnboundPlaceholder(form, arg.key, list(values))
    return tuple(args)


def helper(name: str, *args: tuple[ArgKind, Expr]) -> Call:
    """A call of a function the program defines."""
    return Call(Step.HELPER, name, (), tuple(Arg(kind, value) for kind, value in args))


# ----------------------------------------------------------------------- statements


class Scalar(enum.Enum):
    U32 = "u32"  # a 32-bit unsigned integer


@dataclass(frozen=True)
class SpecType:
    """A type named by the spelling spec."""

    form: TypeForm


@dataclass(frozen=True)
class TypeParam:
    """A template type parameter, taken by const reference."""

    name: str


@dataclass(frozen=True)
class Deduced:
    """The type of the initialiser (a constructed accessor or its compile-time arguments)."""


@dataclass(frozen=True)
class Words:
    """A pointer to volatile memory words, declared from an address (an L1 pointer)."""

    word: Scalar


CType = Scalar | SpecType | TypeParam | Deduced | Words


class Storage(enum.Enum):
    CONSTEXPR = "constexpr"  # a compile-time constant
    CONST = "const"  # set once
    MUTABLE = "mutable"


@dataclass(frozen=True)
class Declare:
    """A variable declaration."""

    name: str
    type: CType
    value: Expr
    storage: Storage


@dataclass(frozen=True)
class Increment:
    """``var++``."""

    var: str


@dataclass(frozen=True)
class AddTo:
    """``var += value``."""

    var: str
    value: Expr


@dataclass(frozen=True)
class StoreWord:
    """``words[index] = value`` through a declared :class:`Words` pointer."""

    words: str
    index: Expr
    value: Expr


@dataclass(frozen=True)
class For:
    """``var`` from 0 while below ``count``; ``generated`` loops are the lowering's own."""

    var: str
    count: Expr
    body: tuple[Stmt, ...]
    generated: bool


@dataclass(frozen=True)
class If:
    """A conditional."""

    condition: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


Stmt = Call | Declare | Increment | AddTo | StoreWord | For | If


@dataclass(frozen=True)
class Param:
    """A parameter of a generated function."""

    name: str
    type: CType


@dataclass(frozen=True)
class Function:
    """A function the program defines before its entry point."""

    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    inline: bool = False
    comment: str | None = None  # what the function is for, printed above it

    @property
    def type_params(self) -> tuple[str, ...]:
        return tuple(p.type.name for p in self.params if isinstance(p.type, TypeParam))


class ProgramKind(enum.Enum):
    COMPUTE = "compute"
    READER = "reader"
    WRITER = "writer"


@dataclass(frozen=True)
class Program:
    """One kernel source: its headers, helper functions and entry point's body."""

    kind: ProgramKind
    includes: tuple[str, ...]
    functions: tuple[Function, ...]
    entry: EntryPoint
    body: tuple[Stmt, ...]
    runtime_args: tuple[str, ...] = ()  # the DRAM buffer whose address is each runtime argument
    # The DRAM buffers whose accessor arguments are the compile-time arguments, in order.
    compile_time_args: tuple[str, ...] = ()

    def calls(self) -> list[Call]:
        """Every call of the program: its functions' and its entry point's."""
        return [c for body in (*(f.body for f in self.functions), self.body) for c in calls(body)]


# ------------------------------------------------------------------------- analysis


def _sub_expressions(expr: Expr) -> tuple[Expr, ...]:
    if isinstance(expr, Binary | Compare):
        return (expr.lhs, expr.rhs)
    if isinstance(expr, CallValue):
        receiver = (expr.call.receiver,) if expr.call.receiver is not None else ()
        return (*receiver, *(a.value for a in (*expr.call.template_args, *expr.call.args)))
    if isinstance(expr, Braced):
        return expr.items
    return ()


def walk(body: Sequence[Stmt]) -> Iterator[Stmt]:
    """Every statement of ``body``, nested ones after their parent."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, For):
            yield from walk(stmt.body)
        elif isinstance(stmt, If):
            yield from walk(stmt.then)
            yield from walk(stmt.orelse)


_LEAVES = (Const, Bits, Var, Symbol)
_VALUED = (Declare, AddTo)  # statements whose one expression is ``value``


def _value_calls(expr: Expr, out: list[Call]) -> None:
    if isinstance(expr, _LEAVES):
        return
    if isinstance(expr, CallValue):
        out.append(expr.call)
    for inner in _sub_expressions(expr):
        _value_calls(inner, out)


def _calls(body: Sequence[Stmt], out: list[Call]) -> None:
    for stmt in body:
        if isinstance(stmt, Call):
            out.append(stmt)
            if stmt.receiver is not None:
                _value_calls(stmt.receiver, out)
            # Most arguments are numbers and names: no call is looked for in them.
            for arg in stmt.template_args:
                if not isinstance(arg.value, _LEAVES):
                    _value_calls(arg.value, out)
            for arg in stmt.args:
                if not isinstance(arg.value, _LEAVES):
                    _value_calls(arg.value, out)
        elif isinstance(stmt, For):
            _value_calls(stmt.count, out)
            _calls(stmt.body, out)
        elif isinstance(stmt, If):
            _value_calls(stmt.condition, out)
            _calls(stmt.then, out)
            _calls(stmt.orelse, out)
        elif isinstance(stmt, StoreWord):
            _value_calls(stmt.index, out)
            _value_calls(stmt.value, out)
        elif isinstance(stmt, _VALUED):
            _value_calls(stmt.value, out)


def calls(body: Sequence[Stmt]) -> list[Call]:
    """Every call of ``body`` in program order, including calls whose value is used."""
    out: list[Call] = []
    _calls(body, out)
    return out


def _mentions(expr: Expr, name: str) -> bool:
    if isinstance(expr, Var):
        return expr.name == name
    if isinstance(expr, _LEAVES):
        return False
    return any(_mentions(inner, name) for inner in _sub_expressions(expr))


def uses(body: Sequence[Stmt], name: str) -> bool:
    """Whether any statement of ``body`` reads or writes the variable ``name``."""
    return any(_uses_itself(stmt, name) for stmt in walk(body))


def _uses_itself(stmt: Stmt, name: str) -> bool:
    """Whether ``stmt``, leaving aside the statements nested in it, reads or writes ``name``."""
    if isinstance(stmt, Call):
        return any(_mentions(a.value, name) for a in (*stmt.template_args, *stmt.args))
    if isinstance(stmt, For):
        return _mentions(stmt.count, name)
    if isinstance(stmt, If):
        return _mentions(stmt.condition, name)
    if isinstance(stmt, Increment):
        return stmt.var == name
    if isinstance(stmt, AddTo):
        return stmt.var == name or _mentions(stmt.value, name)
    if isinstance(stmt, StoreWord):
        return stmt.words == name or _mentions(stmt.index, name) or _mentions(stmt.value, name)
    return _mentions(stmt.value, name)


def simplify(body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    """Drop generated single-trip loops whose variable the body does not use."""
    out: list[Stmt] = []
    changed = False
    for stmt in body:
        if isinstance(stmt, For):
            inner = simplify(stmt.body)
            if stmt.generated and is_const(stmt.count, 1) and not uses(inner, stmt.var):
                out.extend(inner)
                changed = True
                continue
            if inner is not stmt.body:
                stmt = For(stmt.var, stmt.count, inner, stmt.generated)
                changed = True
        elif isinstance(stmt, If):
            then, orelse = simplify(stmt.then), simplify(stmt.orelse)
            if then is not stmt.then or orelse is not stmt.orelse:
                stmt = If(stmt.condition, then, orelse)
                changed = True
        out.append(stmt)
    return tuple(out) if changed else body
