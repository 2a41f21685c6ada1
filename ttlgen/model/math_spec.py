"""The math each function of the kernel API computes, stated once (``ttlgen.math/v1``).

A math spec names functions and gives each one expression of a small language over its
operands: none (a nullary function, such as a fill), ``x`` (a unary function) or ``x`` and
``y`` (a binary one), the op attributes it names (``attributes: [value]``: the reference
reads each from the kernel's op, the emulator from the API call's argument), decimal numbers,
``+ - * /``, unary minus, parentheses, the comparisons ``< <= > >= == !=`` (1 when true,
0 when false) and the fixed set of :data:`BUILTINS` (``exp(x)``, ``where(c, a, b)``, ...).
A function may also state the form the SFPU computes in approximate mode
(``approximate:``) and how its result is rounded into a 16-bit DST (``rounding:``).

Both implementations are driven from the expression parsed here into a typed, frozen
AST: the emulator's header (``emit/emulator_math.py``: every intermediate in fp32, the
compiler's ``float`` built-ins, which ``<cmath>``'s float overloads call) and the float64
NumPy reference of ``ttlgen run`` (``run.py``, which interprets the AST). The parser is Python's own (``ast``), restricted
to an allow-list of node types: anything outside the language is a located error naming
the offending token and listing what is valid.

The runtime's fixed datapaths (matmul, reduce, broadcast, transpose, copy) are not
expressions: they are :data:`RUNTIME_PRIMITIVES`, which the emulator models in C++ and
``ttlgen run`` references in code. A binding's ``computes:`` names a function of the
math spec or one of them.
"""

from __future__ import annotations

import ast
import enum
import functools
import math
import re
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ttlgen.errors import DiagnosticSink, Entity, Mark, did_you_mean
from ttlgen.naming import CPP_KEYWORDS
from ttlgen.spec.document import SpecDocument

KIND = "ttlgen.math"
# Where a new function goes, as messages name it (the shipped tree's file).
DEFAULT_FILE = "specs/ops/math.yaml"
# The longest expression accepted (a spec file's string is bounded anyway; this keeps the
# parser's recursion far from Python's limit).
MAX_EXPRESSION = 1000
MAX_DEPTH = 40

# Namespaces code inside the emulator's math tables names: no function may take their names
# (``detail::sign`` would name the function instead, and so would ``std::...`` in any code
# the header gains there).
HELPER_NAMESPACES = ("std", "detail")

NULLARY_OPERANDS: tuple[str, ...] = ()
UNARY_OPERANDS = ("x",)
BINARY_OPERANDS = ("x", "y")
# The key of each form in the spec, by the number of operands.
FORMS = {0: "nullary", 1: "unary", 2: "binary"}
OPERANDS = {"nullary": NULLARY_OPERANDS, "unary": UNARY_OPERANDS, "binary": BINARY_OPERANDS}


def function_entity(name: str) -> Entity:
    """A math function: an invalid expression breaks every check that uses it."""
    return Entity("math function", name)


# ------------------------------------------------------------------ the expression AST


@dataclass(frozen=True)
class Number:
    """A decimal literal: ``value`` as float64 reads it (the reference's), ``single`` as the
    nearest fp32 (the emulator's)."""

    value: float
    single: float


@dataclass(frozen=True)
class Operand:
    """An operand (``x``, ``y``) or an op attribute the function names."""

    name: str


@dataclass(frozen=True)
class Negate:
    operand: Expr


class Arithmetic(enum.Enum):
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"


@dataclass(frozen=True)
class BinaryOp:
    op: Arithmetic
    left: Expr
    right: Expr


class Comparison(enum.Enum):
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    EQ = "=="
    NE = "!="


@dataclass(frozen=True)
class Compare:
    """1 when ``left op right`` holds, else 0 (false with a NaN operand, but ``!=``)."""

    op: Comparison
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Call:
    function: str  # a name of BUILTINS
    args: tuple[Expr, ...]


Expr = Number | Operand | Negate | BinaryOp | Compare | Call


def walk(expr: Expr) -> Iterator[Expr]:
    """``expr`` and every expression under it, parents first."""
    yield expr
    if isinstance(expr, Negate):
        yield from walk(expr.operand)
    elif isinstance(expr, BinaryOp | Compare):
        yield from walk(expr.left)
        yield from walk(expr.right)
    elif isinstance(expr, Call):
        for arg in expr.args:
            yield from walk(arg)


# ------------------------------------------------------------------ the fixed functions


@dataclass(frozen=True)
class Builtin:
    """A function of the language: its name, its arity and what it computes."""

    name: str
    arity: int
    meaning: str


#: The language's functions. Each backend implements every one (the emulator's header
#: with the compiler's fp32 built-ins, the reference with NumPy in float64); a test holds
#: both to this list.
BUILTINS: tuple[Builtin, ...] = (
    Builtin("abs", 1, "|a|"),
    Builtin("acos", 1, "arc cosine"),
    Builtin("asin", 1, "arc sine"),
    Builtin("atan", 1, "arc tangent"),
    Builtin("ceil", 1, "the least integer >= a"),
    Builtin("cos", 1, "cosine"),
    Builtin("erf", 1, "the error function"),
    Builtin("exp", 1, "e^a"),
    Builtin("exp2", 1, "2^a"),
    Builtin("expm1", 1, "e^a - 1"),
    Builtin("floor", 1, "the greatest integer <= a"),
    Builtin("log", 1, "natural logarithm"),
    Builtin("log1p", 1, "log(1 + a)"),
    Builtin("max", 2, "the larger of a and b (the other one when one is NaN)"),
    Builtin("min", 2, "the smaller of a and b (the other one when one is NaN)"),
    Builtin("pow", 2, "a^b"),
    Builtin("sign", 1, "1, -1 or a itself (0, -0, NaN)"),
    Builtin("signbit", 1, "1 when a's sign bit is set (also -0.0), else 0"),
    Builtin("sin", 1, "sine"),
    Builtin("sqrt", 1, "square root"),
    Builtin("tan", 1, "tangent"),
    Builtin("tanh", 1, "hyperbolic tangent"),
    Builtin("trunc", 1, "a rounded toward zero"),
    Builtin("where", 3, "b when a is not 0, else c"),
)
BUILTIN_NAMES = tuple(b.name for b in BUILTINS)
_BUILTINS = {b.name: b for b in BUILTINS}


# ------------------------------------------------------------------ runtime primitives


@dataclass(frozen=True)
class Primitive:
    """A datapath the emulator's runtime models in C++ (not an expression); ``ttlgen run``
    references it in code (run.py)."""

    name: str
    meaning: str


RUNTIME_PRIMITIVES: tuple[Primitive, ...] = (
    Primitive("broadcast", "a row, column or element of a tile broadcast over the tile"),
    Primitive("copy", "a tile copied from a circular buffer into DST"),
    Primitive("matmul", "a tile matrix product accumulated into DST"),
    Primitive("reduce", "a row, column or whole-tile sum scaled by the scaler tile"),
    Primitive("transpose", "a tile transposed"),
)
PRIMITIVE_NAMES = tuple(p.name for p in RUNTIME_PRIMITIVES)


# ------------------------------------------------------------------ functions


class Rounding(enum.Enum):
    """How an SFPU routine stores a function's result into a 16-bit DST."""

    NATIVE = "native"  # the SFPU's native store (Numerics.sfpu_dst16_rounding)
    NEAREST_EVEN = "nearest_even"  # rounded to nearest even in software first


@dataclass(frozen=True)
class MathFunction:
    """One function of the math spec: its exact form, the form the SFPU computes in
    approximate mode (if the hardware has one), and its rounding into a 16-bit DST."""

    name: str
    operands: tuple[str, ...]  # NULLARY_OPERANDS, UNARY_OPERANDS or BINARY_OPERANDS
    exact: Expr
    approximate: Expr | None
    rounding: Rounding
    mark: Mark = field(compare=False)
    # The op attributes the expressions name (numbers), after the operands in the
    # emulator's signature: f(x, ..., attribute, ...).
    attributes: tuple[str, ...] = ()

    @property
    def arity(self) -> int:
        return len(self.operands)

    @property
    def kind(self) -> str:
        return FORMS[self.arity]

    @property
    def parameters(self) -> tuple[str, ...]:
        """The names the expressions read: the operands, then the attributes."""
        return self.operands + self.attributes


Computation = MathFunction | Primitive


@dataclass(frozen=True)
class MathModel:
    """Every function of the math spec (sorted by name), and the file it is stated in."""

    functions: tuple[MathFunction, ...] = ()
    source: str | None = None  # the spec's source name; None: the tree has no math spec
    display: str | None = None  # the spec's path as messages show it

    def function(self, name: str) -> MathFunction | None:
        return self._by_name.get(name)

    @functools.cached_property
    def _by_name(self) -> dict[str, MathFunction]:
        # Each emulator binding, and each header that may include the math, asks for its
        # function. Built from the last to the first, so the first of a name wins.
        return {function.name: function for function in reversed(self.functions)}

    def computation(self, name: str) -> Computation | None:
        """What ``computes: <name>`` names: a function of the spec or a runtime primitive."""
        found = self.function(name)
        if found is not None:
            return found
        return next((p for p in RUNTIME_PRIMITIVES if p.name == name), None)

    def of_arity(self, arity: int) -> tuple[MathFunction, ...]:
        return tuple(f for f in self.functions if f.arity == arity)

    @property
    def file(self) -> str:
        """The file a missing function is to be added to."""
        return self.display or DEFAULT_FILE


NO_MATH = MathModel()


# ------------------------------------------------------------------ the parser


class ExpressionError(Exception):
    """An expression outside the language: the message names the offending token."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset  # 0-based character offset in the expression, if known


_ALLOWED_CHARACTERS = re.compile(r"[A-Za-z0-9_ .+\-*/()<>=!,]*")
_NUMBER = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def language_summary(operands: Sequence[str], attributes: Sequence[str] = ()) -> str:
    names = f"operands {' and '.join(operands)}" if operands else "no operands"
    if attributes:
        names += f", the attributes {', '.join(attributes)}"
    return (
        f"{names}, decimal numbers, + - * /, unary -, parentheses, comparisons "
        f"< <= > >= == != (1 or 0) and the functions {', '.join(BUILTIN_NAMES)}"
    )


def fp32(value: float) -> float:
    """``value`` rounded to the nearest fp32 (ties to even), as a C++ float literal is."""
    try:
        packed: float = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.inf
    return packed


class _Parser:
    def __init__(self, text: str, operands: Sequence[str], attributes: Sequence[str] = ()) -> None:
        self.text = text
        self.operands = tuple(operands) + tuple(attributes)
        self.attributes = tuple(attributes)

    def parse(self) -> Expr:
        text = self.text
        if len(text) > MAX_EXPRESSION:
            raise ExpressionError(f"the expression is {len(text)} characters long; at most {MAX_EXPRESSION}")
        allowed = _ALLOWED_CHARACTERS.match(text)
        assert allowed is not None
        if allowed.end() != len(text):
            bad = text[allowed.end()]
            raise ExpressionError(f"character {bad!r} is not in the expression language", allowed.end())
        if not text.strip():
            raise ExpressionError("the expression is empty")
        depth = 0
        for index, ch in enumerate(text):
            depth += (ch == "(") - (ch == ")")
            if depth > MAX_DEPTH:
                raise ExpressionError(f"parentheses nest deeper than {MAX_DEPTH}", index)
        lead = len(text) - len(text.lstrip())
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            offset = (exc.offset - 1 + lead) if exc.offset else None
            reason = (exc.msg or "invalid syntax").removesuffix(".")
            near = f" at {text[offset:offset + 10]!r}" if offset is not None and offset < len(text) else ""
            raise ExpressionError(f"not an expression of the language: {reason}{near}", offset) from None
        except (ValueError, RecursionError, MemoryError) as exc:
            raise ExpressionError(f"the expression cannot be parsed ({type(exc).__name__})") from None
        return self.node(tree.body, lead, 0)

    def node(self, node: ast.expr, lead: int, depth: int) -> Expr:
        if depth > 4 * MAX_DEPTH:
            raise ExpressionError(f"the expression nests deeper than {4 * MAX_DEPTH} operations")
        at = lead + node.col_offset if hasattr(node, "col_offset") else None

        def fail(message: str) -> ExpressionError:
            return ExpressionError(message, at)

        def sub(child: ast.expr) -> Expr:
            return self.node(child, lead, depth + 1)

        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise fail(f"{ast.unparse(node)} is not a number of the language")
            # The text is one line of the allowed characters (ASCII): the node's offsets index it.
            segment = self.text.strip()[node.col_offset : node.end_col_offset]
            if not _NUMBER.fullmatch(segment):
                raise fail(f"{segment!r} is not a decimal number (write digits, a point and an exponent, e.g. 0.5 or 1e-3)")
            number = float(value)
            single = fp32(number)
            if math.isinf(single):
                raise fail(f"{segment} is beyond fp32's range (the emulator computes in fp32)")
            return Number(number, single)
        if isinstance(node, ast.Name):
            if node.id in self.operands:
                return Operand(node.id)
            if node.id in BINARY_OPERANDS:
                count = sum(o in BINARY_OPERANDS for o in self.operands)
                has = "only x" if count == 1 else "no operands"
                raise fail(f"{node.id!r} is an operand of a binary function; a {FORMS[count]} function has {has}")
            if node.id in _BUILTINS:
                raise fail(f"{node.id!r} is a function: call it, e.g. {node.id}({', '.join(['x'] * _BUILTINS[node.id].arity)})")
            operands = ", ".join(o for o in self.operands if o not in self.attributes) or "none"
            listed = f"; attributes: {', '.join(self.attributes)}" if self.attributes else ""
            raise fail(f"unknown name {node.id!r}{did_you_mean(node.id, self.operands)}; operands: {operands}{listed}")
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return Negate(sub(node.operand))
            raise fail(f"unary {_OPERATOR_TEXT.get(type(node.op), type(node.op).__name__)} is not in the language (only unary -)")
        if isinstance(node, ast.BinOp):
            op = _ARITHMETIC.get(type(node.op))
            if op is None:
                text = _OPERATOR_TEXT.get(type(node.op), type(node.op).__name__)
                hint = "; use pow(a, b)" if isinstance(node.op, ast.Pow) else ""
                raise ExpressionError(f"operator {text} is not in the language (+ - * / only){hint}", self._operator_offset(node, lead))
            return BinaryOp(op, sub(node.left), sub(node.right))
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise fail("one comparison at a time: a < b < c is not in the language; use min, max or where")
            comparison = _COMPARISONS.get(type(node.ops[0]))
            if comparison is None:
                raise fail(f"comparison {_OPERATOR_TEXT.get(type(node.ops[0]), type(node.ops[0]).__name__)} is not in the language (< <= > >= == !=)")
            return Compare(comparison, sub(node.left), sub(node.comparators[0]))
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                raise fail(f"{ast.unparse(node.func)!r} is not a function of the language")
            name = node.func.id
            if name not in _BUILTINS:
                raise fail(f"unknown function {name!r}{did_you_mean(name, BUILTIN_NAMES)}")
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                raise fail(f"{name}() takes positional arguments only")
            arity = _BUILTINS[name].arity
            if len(node.args) != arity:
                raise fail(f"{name}() takes {arity} argument{'s' if arity != 1 else ''}, not {len(node.args)}")
            return Call(name, tuple(sub(a) for a in node.args))
        kind = _NODE_TEXT.get(type(node), type(node).__name__)
        hint = "; use where(condition, a, b)" if isinstance(node, ast.IfExp | ast.BoolOp) else ""
        raise fail(f"{kind} {ast.unparse(node)!r} is not in the language{hint}")

    def _operator_offset(self, node: ast.BinOp, lead: int) -> int | None:
        """Where the operator of ``node`` is: after its left operand, past spaces and ')'."""
        end = node.left.end_col_offset
        if end is None:
            return None
        text = self.text.strip()
        index: int = end
        while index < len(text) and text[index] in " )":
            index += 1
        return lead + index


_ARITHMETIC = {ast.Add: Arithmetic.ADD, ast.Sub: Arithmetic.SUB, ast.Mult: Arithmetic.MUL, ast.Div: Arithmetic.DIV}
_COMPARISONS = {
    ast.Lt: Comparison.LT, ast.LtE: Comparison.LE, ast.Gt: Comparison.GT,
    ast.GtE: Comparison.GE, ast.Eq: Comparison.EQ, ast.NotEq: Comparison.NE,
}
_OPERATOR_TEXT: dict[type, str] = {
    ast.Pow: "**", ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@", ast.UAdd: "+", ast.Not: "not",
    ast.Invert: "~", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}
_NODE_TEXT: dict[type, str] = {
    ast.IfExp: "a conditional", ast.BoolOp: "a boolean operation", ast.Attribute: "an attribute",
    ast.Subscript: "a subscript", ast.Tuple: "a tuple", ast.List: "a list", ast.Lambda: "a lambda",
    ast.Set: "a set", ast.Dict: "a mapping", ast.Starred: "a starred expression",
}


def parse_expression(text: str, operands: Sequence[str], attributes: Sequence[str] = ()) -> Expr:
    """The AST of ``text`` over ``operands`` and ``attributes``; raises ExpressionError
    naming the token."""
    return _Parser(text, operands, attributes).parse()


# ------------------------------------------------------------------ printing


_PRECEDENCE = {Arithmetic.ADD: 1, Arithmetic.SUB: 1, Arithmetic.MUL: 2, Arithmetic.DIV: 2}


def render(expr: Expr) -> str:
    """The expression in the language's own syntax, minimally parenthesised (for comments
    and messages): ``render(parse_expression(t))`` parses to the same AST."""
    return _render(expr, 0)


def _render(expr: Expr, outer: int) -> str:
    if isinstance(expr, Number):
        return repr(expr.value) if expr.value != int(expr.value) or abs(expr.value) >= 1e16 else str(int(expr.value))
    if isinstance(expr, Operand):
        return expr.name
    if isinstance(expr, Negate):
        return f"-{_render(expr.operand, 3)}"
    if isinstance(expr, BinaryOp):
        mine = _PRECEDENCE[expr.op]
        # Left-associative: the right operand of - and / (and of an equal level) needs parentheses.
        text = f"{_render(expr.left, mine)} {expr.op.value} {_render(expr.right, mine + 1)}"
        return f"({text})" if mine < outer else text
    if isinstance(expr, Compare):
        text = f"{_render(expr.left, 1)} {expr.op.value} {_render(expr.right, 1)}"
        return f"({text})" if outer > 0 else text
    return f"{expr.function}({', '.join(_render(a, 0) for a in expr.args)})"


# ------------------------------------------------------------------ building the model


def _expression(
    doc: SpecDocument, path: tuple[str, ...], operands: Sequence[str], attributes: Sequence[str], name: str, sink: DiagnosticSink
) -> Expr | None:
    text = doc.data
    for part in path:
        text = text[part]
    assert isinstance(text, str)
    mark = doc.mark(path)
    try:
        return parse_expression(text, operands, attributes)
    except ExpressionError as exc:
        where = f" (character {exc.offset + 1} of {text!r})" if exc.offset is not None else f" (in {text!r})"
        sink.error(
            mark,
            f"{exc}{where}; the language: {language_summary(operands, attributes)}",
            breaks=[function_entity(name)],
        )
        return None


def _function(doc: SpecDocument, name: str, sink: DiagnosticSink) -> MathFunction | None:
    raw = doc.data["functions"][name]
    path = ("functions", name)
    key = doc.key_mark(path)
    if name in CPP_KEYWORDS or name in HELPER_NAMESPACES:
        what = "a C++ keyword" if name in CPP_KEYWORDS else "a namespace the emulator's math header uses"
        sink.error(key, f"{name!r} is {what}, which cannot name a function there", breaks=[function_entity(name)])
        return None
    if name in PRIMITIVE_NAMES:
        sink.error(key, f"{name!r} is a runtime primitive (the emulator's own datapath, referenced in code); name the function otherwise", breaks=[function_entity(name)])
        return None
    form = next(f for f in OPERANDS if f in raw)
    operands = OPERANDS[form]
    attributes = tuple(raw.get("attributes", ()))
    ok = True
    for index, attribute in enumerate(attributes):
        clash = (
            "an operand name" if attribute in BINARY_OPERANDS
            else "a function of the language" if attribute in _BUILTINS
            else "a C++ keyword" if attribute in CPP_KEYWORDS
            else "listed twice" if attribute in attributes[:index]
            else None
        )
        if clash is not None:
            sink.error(doc.mark((*path, "attributes", index)), f"attribute {attribute!r} is {clash}; name the op attribute the function reads", breaks=[function_entity(name)])
            ok = False
    if not ok:
        return None
    exact = _expression(doc, (*path, form), operands, attributes, name, sink)
    approximate = _expression(doc, (*path, "approximate"), operands, attributes, name, sink) if "approximate" in raw else None
    if exact is None or ("approximate" in raw and approximate is None):
        return None
    if not operands and raw.get("rounding", Rounding.NATIVE.value) != Rounding.NATIVE.value:
        # The emulator's nullary routine stores the value as the SFPU's store does.
        sink.error(doc.mark((*path, "rounding")), "a nullary function's value is stored natively (the SFPU's store of a constant); rounding: applies to functions of DST operands", breaks=[function_entity(name)])
        return None
    return MathFunction(
        name=name,
        operands=operands,
        exact=exact,
        approximate=approximate,
        rounding=Rounding(raw.get("rounding", Rounding.NATIVE.value)),
        mark=key,
        attributes=attributes,
    )


def build(documents: Sequence[SpecDocument], sink: DiagnosticSink) -> MathModel:
    found = [d for d in documents if d.kind == KIND]
    for extra in found[1:]:
        sink.error(extra.mark(("spec",)), f"a second {KIND} file; the math is stated once (first: {found[0].display})")
    if not found:
        return MathModel()
    doc = found[0]
    functions = [f for name in doc.data["functions"] if (f := _function(doc, name, sink)) is not None]
    return MathModel(tuple(sorted(functions, key=lambda f: f.name)), doc.source, doc.display)
