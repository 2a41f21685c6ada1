"""Print kernel IR programs as C++.

Only C++ syntax is written here (operators, declarations, loops, namespaces, the
``uint32_t`` integer type, a ``volatile`` word pointer cast from an address); every kernel-API name in the output comes from the specs through
the IR (function names, types, enumerators, members and headers from the spelling and API
specs, the entry point from the API spec). The layout follows
the repository's ``.clang-format`` (4-space indent, 100 columns, parameters wrapped and
aligned after the opening parenthesis).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ttlgen.emit._text import c_comment
from ttlgen.emit.emulator_api import wrap
from ttlgen.emit.emulator_math import literal as float_literal
from ttlgen.model.tt_metal_api import EntryPoint
from ttlgen.plan import kernel_ir as ir
from ttlgen.plan.kernel_ir import Expr

INDENT = "    "
COLUMNS = 100

_BINARY = {
    ir.BinaryOp.ADD: ("+", 6),
    ir.BinaryOp.MUL: ("*", 5),
    ir.BinaryOp.DIV: ("/", 5),
    ir.BinaryOp.MOD: ("%", 5),
}
_COMPARE = {ir.Comparison.EQ: "==", ir.Comparison.NE: "!=", ir.Comparison.LT: "<"}
_LOOSEST = 99  # binding strength of a whole expression (C++ ranks: lower binds tighter)


@dataclass(frozen=True)
class PrintedProgram:
    """A program as the kernel templates lay it out."""

    includes: tuple[str, ...]
    functions: tuple[str, ...]  # each a complete definition, without a trailing newline
    begin: tuple[str, ...]
    body: str  # indented statements, without a trailing newline
    end: tuple[str, ...]


def expression(expr: Expr, context: int = _LOOSEST, right: bool = False) -> str:
    """``expr`` in C++; parenthesised if it binds looser than its ``context`` allows."""
    if isinstance(expr, ir.Var):  # the commonest, then numbers
        return expr.name
    if isinstance(expr, ir.Const):
        return str(expr.value)
    if isinstance(expr, ir.Bits):
        return f"0x{expr.value:08X}"
    if isinstance(expr, ir.Float):
        return float_literal(expr.value)
    if isinstance(expr, ir.Symbol):
        return expr.text
    if isinstance(expr, ir.CallValue):
        return call(expr.call)
    if isinstance(expr, ir.Braced):
        return "{" + ", ".join(expression(item) for item in expr.items) + "}"
    if isinstance(expr, ir.Compare):
        text = f"{expression(expr.lhs, 9)} {_COMPARE[expr.op]} {expression(expr.rhs, 9, right=True)}"
        rank = 9
    else:
        symbol, rank = _BINARY[expr.op]
        text = f"{expression(expr.lhs, rank)} {symbol} {expression(expr.rhs, rank, right=True)}"
    # Left-associative: a right operand of equal rank needs parentheses too.
    needs = rank > context or (right and rank == context)
    return f"({text})" if needs else text


def call(c: ir.Call) -> str:
    template = "<" + ", ".join(expression(a.value) for a in c.template_args) + ">" if c.template_args else ""
    receiver = f"{expression(c.receiver, 1)}." if c.receiver is not None else ""
    return f"{receiver}{c.function}{template}(" + ", ".join(expression(a.value) for a in c.args) + ")"


_SCALARS = {ir.Scalar.U32: "uint32_t"}
_STORAGE = {ir.Storage.CONSTEXPR: "constexpr ", ir.Storage.CONST: "const ", ir.Storage.MUTABLE: ""}


def type_name(t: ir.CType) -> str:
    if isinstance(t, ir.Scalar):
        return _SCALARS[t]
    if isinstance(t, ir.Deduced):
        return "auto"
    if isinstance(t, ir.SpecType):
        args = ", ".join(a.text for a in t.form.template_args)
        return f"{t.form.name}<{args}>" if t.form.template_args else t.form.name
    if isinstance(t, ir.Words):
        return f"volatile {type_name(t.word)}*"
    return t.name


def _declaration(d: ir.Declare, indent: str) -> list[str]:
    """``type name = value;``, the value on a continuation line when the line is too long
    (where clang-format breaks an assignment first)."""
    prefix = _STORAGE[d.storage]
    head = f"{indent}{prefix}{type_name(d.type)} {d.name} ="
    value = f"{expression(d.value)};"
    if isinstance(d.type, ir.Words):
        value = f"reinterpret_cast<{type_name(d.type)}>({expression(d.value)});"
    if len(head) + 1 + len(value) <= COLUMNS:
        return [f"{head} {value}"]
    return [head, f"{indent}{INDENT}{value}"]


def statements(body: Sequence[ir.Stmt], indent: str) -> list[str]:
    lines: list[str] = []
    for stmt in body:
        if isinstance(stmt, ir.Call):
            lines.append(f"{indent}{call(stmt)};")
        elif isinstance(stmt, ir.Declare):
            lines.extend(_declaration(stmt, indent))
        elif isinstance(stmt, ir.Increment):
            lines.append(f"{indent}++{stmt.var};")
        elif isinstance(stmt, ir.AddTo):
            lines.append(f"{indent}{stmt.var} += {expression(stmt.value)};")
        elif isinstance(stmt, ir.StoreWord):
            lines.append(f"{indent}{stmt.words}[{expression(stmt.index)}] = {expression(stmt.value)};")
        elif isinstance(stmt, ir.For):
            var, count = stmt.var, expression(stmt.count)
            lines.append(f"{indent}for ({type_name(ir.Scalar.U32)} {var} = 0; {var} < {count}; ++{var}) {{")
            lines.extend(statements(stmt.body, indent + INDENT))
            lines.append(f"{indent}}}")
        else:
            lines.append(f"{indent}if ({expression(stmt.condition)}) {{")
            lines.extend(statements(stmt.then, indent + INDENT))
            if stmt.orelse:
                lines.append(f"{indent}}} else {{")
                lines.extend(statements(stmt.orelse, indent + INDENT))
            lines.append(f"{indent}}}")
    return lines


def _parameter(p: ir.Param) -> str:
    if isinstance(p.type, ir.TypeParam):
        return f"const {p.type.name}& {p.name}"
    return f"{type_name(p.type)} {p.name}"


def function(f: ir.Function) -> str:
    lines = [f"// {c_comment(f.comment)}"] if f.comment else []
    if f.type_params:
        lines.append("template <" + ", ".join(f"typename {name}" for name in f.type_params) + ">")
    head = f"{'inline ' if f.inline else ''}void {f.name}("
    params = [_parameter(p) for p in f.params]
    lines += wrap(head, params, ") {")
    lines.extend(statements(f.body, INDENT))
    lines.append("}")
    return "\n".join(lines)


def entry_lines(entry: EntryPoint) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The lines that open and close the entry point: ``void f() {`` or, with macros,
    ``namespace N {`` and ``void M {`` (M stands for the declarator, parentheses included)."""
    if entry.namespace_macro is None:
        return (f"void {entry.function}() {{",), ("}",)
    return (f"namespace {entry.namespace_macro} {{", f"void {entry.function} {{"), ("}", f"}} // namespace {entry.namespace_macro}")


def print_program(program: ir.Program, printed: Mapping[int, str] | None = None) -> PrintedProgram:
    """``program`` laid out; ``printed`` holds functions already printed, by identity (the
    reader's and writer's helpers are the same objects for every kernel of a level)."""
    begin, end = entry_lines(program.entry)
    known = printed or {}
    return PrintedProgram(
        includes=program.includes,
        functions=tuple(known[id(f)] if id(f) in known else function(f) for f in program.functions),
        begin=begin,
        body="\n".join(statements(program.body, INDENT)),
        end=end,
    )
