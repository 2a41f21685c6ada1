"""The emulator's math header: every function of the math spec in fp32 C++.

``ttlemu_math.h`` (beside each API level's emulator headers, which include it where a
binding passes one of its functions) defines each nullary function of the math spec as
``float f()`` in ``<namespace>::math::<nullary table>``, each unary one as
``float f(float x)`` in ``<namespace>::math::<unary table>`` and each binary one as
``float f(float x, float y)`` in ``<namespace>::math::<binary table>`` (the tables are the
emulation spec's ``math:``), each followed by a ``float`` parameter per op attribute it
names (``float fill(float value)``). A function with an approximate form is a template,
``template <bool approximate = false> float f(float x)``, whose argument selects the form.
Every intermediate is a ``float``: numbers are fp32 literals and the functions of the
language are the compiler's ``float`` built-ins (``__builtin_expf``), which are what
libstdc++'s ``float`` overloads of ``<cmath>`` (``std::exp(float)``) call: the same
function, so the same result. The header includes nothing: ``<cmath>`` (in C++17, with its
special functions) took three quarters of the compile of every compute kernel.

The same AST is what ``ttlgen run``'s float64 reference interprets (``ttlgen/run.py``).
"""

from __future__ import annotations

from ttlgen.emit._base import lines_text
from ttlgen.model import math_spec
from ttlgen.model.math_spec import (
    BinaryOp,
    Call,
    Compare,
    Expr,
    MathFunction,
    MathModel,
    Negate,
    Number,
    Operand,
)
from ttlgen.model.tt_metal_api import EMULATOR_MATH_HEADER, Binding, Emulation

HEADER = EMULATOR_MATH_HEADER
COLUMNS = 100
INDENT = "    "
# The template parameter of a function with an approximate form.
APPROXIMATE = "approximate"
# Helpers of the language that the compiler has no float built-in for.
DETAIL = math_spec.HELPER_NAMESPACES[1]

#: Each function of the language as C++ spells its fp32 form: a float built-in of the
#: compiler (GCC's and Clang's), or a function of the header's ``detail`` namespace.
#: ``where``, ``signbit`` and the comparisons are conditional expressions instead
#: (:func:`expression`).
CPP_FUNCTIONS: dict[str, str] = {
    "abs": "__builtin_fabsf",
    "acos": "__builtin_acosf",
    "asin": "__builtin_asinf",
    "atan": "__builtin_atanf",
    "ceil": "__builtin_ceilf",
    "cos": "__builtin_cosf",
    "erf": "__builtin_erff",
    "exp": "__builtin_expf",
    "exp2": "__builtin_exp2f",
    "expm1": "__builtin_expm1f",
    "floor": "__builtin_floorf",
    "log": "__builtin_logf",
    "log1p": "__builtin_log1pf",
    "max": "__builtin_fmaxf",
    "min": "__builtin_fminf",
    "pow": "__builtin_powf",
    "sign": f"{DETAIL}::sign",
    "sin": "__builtin_sinf",
    "sqrt": "__builtin_sqrtf",
    "tan": "__builtin_tanf",
    "tanh": "__builtin_tanhf",
    "trunc": "__builtin_truncf",
}
CONDITIONALS = frozenset(["where", "signbit"])

_DETAIL_LINES = [
    f"namespace {DETAIL} {{",
    "// sign(a): 1 for a > 0, -1 for a < 0, else a itself (0, -0, NaN).",
    "inline float sign(float a) {",
    f"{INDENT}return a > 0.0f ? 1.0f : a < 0.0f ? -1.0f : a;",
    "}",
    f"}} // namespace {DETAIL}",
]


def literal(value: float) -> str:
    """The shortest C++ float literal of the fp32 value ``value`` (already fp32)."""
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if math_spec.fp32(float(text)) == value:
            break
    if "e" in text:
        mantissa, _, exponent = text.partition("e")
        sign = "-" if exponent.startswith("-") else ""
        text = f"{mantissa if '.' in mantissa else mantissa + '.0'}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"
    elif "." not in text:
        text += ".0"
    return text + "f"


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def expression(expr: Expr, outer: int = 0) -> str:
    """``expr`` as a C++ expression of floats. Parentheses keep the AST's grouping exactly
    (floating-point + and * are not associative); ``outer`` is the precedence around it."""
    if isinstance(expr, Number):
        return literal(expr.single)
    if isinstance(expr, Operand):
        return expr.name
    if isinstance(expr, Negate):
        inner = expression(expr.operand, 3)
        return f"-{inner}" if not inner.startswith("-") else f"-({inner})"
    if isinstance(expr, BinaryOp):
        mine = _PRECEDENCE[expr.op.value]
        text = f"{expression(expr.left, mine)} {expr.op.value} {expression(expr.right, mine + 1)}"
        return f"({text})" if mine < outer else text
    if isinstance(expr, Compare):
        return f"({_condition(expr)} ? 1.0f : 0.0f)"
    assert isinstance(expr, Call)
    args = [expression(a) for a in expr.args]
    if expr.function == "where":
        return f"({_condition(expr.args[0])} ? {args[1]} : {args[2]})"
    if expr.function == "signbit":
        return f"({_condition(expr)} ? 1.0f : 0.0f)"
    return f"{CPP_FUNCTIONS[expr.function]}({', '.join(args)})"


def _condition(expr: Expr) -> str:
    """A C++ condition true where ``expr`` is not 0 (a comparison is its own condition)."""
    if isinstance(expr, Compare):
        return f"{expression(expr.left, 1)} {expr.op.value} {expression(expr.right, 1)}"
    if isinstance(expr, Call) and expr.function == "signbit":
        return f"__builtin_signbit({expression(expr.args[0])})"
    return f"{expression(expr, 1)} != 0.0f"


def _return_lines(expr: Expr, indent: str) -> list[str]:
    line = f"{indent}return {expression(expr)};"
    if len(line) <= COLUMNS:
        return [line]
    # Longer than a line: the formatter would break it its own way, so it is left as is.
    return [f"{indent}// clang-format off", line, f"{indent}// clang-format on"]


def _uses(function: MathFunction, operand: str) -> bool:
    forms = [function.exact] if function.approximate is None else [function.exact, function.approximate]
    return any(isinstance(e, Operand) and e.name == operand for form in forms for e in math_spec.walk(form))


def function_lines(function: MathFunction) -> list[str]:
    """A function's comment and definition."""
    lines = [f"// {function.name}({', '.join(function.parameters)}) = {math_spec.render(function.exact)}"]
    if function.approximate is not None:
        lines.append(f"// approximate: {math_spec.render(function.approximate)}")
    if function.rounding is math_spec.Rounding.NEAREST_EVEN:
        lines.append("// stored into a 16-bit DST rounded to nearest even")
    params = ", ".join(f"float {o}" if _uses(function, o) else f"float /*{o}*/" for o in function.parameters)
    if function.approximate is None:
        return [*lines, f"inline float {function.name}({params}) {{", *_return_lines(function.exact, INDENT), "}"]
    return [
        *lines,
        f"template <bool {APPROXIMATE} = false>",
        f"inline float {function.name}({params}) {{",
        f"{INDENT}if constexpr ({APPROXIMATE}) {{",
        *_return_lines(function.approximate, INDENT * 2),
        f"{INDENT}}} else {{",
        *_return_lines(function.exact, INDENT * 2),
        f"{INDENT}}}",
        "}",
    ]


def header_lines(math: MathModel, emulation: Emulation) -> list[tuple[str, MathFunction | None]]:
    """The header's lines, each with the function of the math spec it defines (None: the
    header's own text), which ``ttlgen explain`` and ``ttlgen review`` charge it to."""
    own = ["#pragma once", "", f"namespace {emulation.namespace}::math {{", "", *_DETAIL_LINES, ""]
    lines: list[tuple[str, MathFunction | None]] = [(line, None) for line in own]
    for arity, table in emulation.math_tables:
        lines += [(f"namespace {table} {{", None), ("", None)]
        for function in math.of_arity(arity):
            lines += [(line, function) for line in function_lines(function)]
            lines.append(("", None))
        lines += [(f"}} // namespace {table}", None), ("", None)]
    lines.append((f"}} // namespace {emulation.namespace}::math", None))
    return lines


def header_text(math: MathModel, emulation: Emulation) -> str:
    return lines_text(header_lines(math, emulation))


def argument(binding: Binding, emulation: Emulation) -> str | None:
    """What the binding's ``function`` argument is, when it passes a function of the math
    spec: the function (its approximate form selected by the binding's template
    parameter), wrapped to round to nearest even when its math says so."""
    function = emulation.math_function(binding)
    if function is None:
        return None
    table = emulation.table(function.arity)
    name = f"{emulation.namespace}::math::{table}::{function.name}"
    if function.approximate is not None:
        name += f"<{binding.approximate or 'false'}>"
    if function.rounding is math_spec.Rounding.NEAREST_EVEN:
        return f"{emulation.namespace}::math::nearest_even({name})"
    return name


def uses_math(bindings: list[Binding], emulation: Emulation) -> bool:
    return any(emulation.math_function(b) is not None for b in bindings)
