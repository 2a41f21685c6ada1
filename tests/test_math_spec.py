"""The math spec (ttlgen.math/v1): one statement of each function's math, in a small
expression language, read into a typed AST that both the emulator's header and the float64
reference are driven from. An expression outside the language, a binding whose math is not
stated and an approximate form a binding cannot select are located errors at `validate`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import real_project, run_cli
from ttlgen.emit import emulator_math
from ttlgen.model import math_spec
from ttlgen.model.math_spec import (
    Arithmetic,
    BinaryOp,
    Call,
    Compare,
    Comparison,
    ExpressionError,
    Negate,
    Number,
    Operand,
    parse_expression,
)
from ttlgen.run import NUMPY_FUNCTIONS, PRIMITIVE_REFERENCES, evaluate

MATH = real_project().math
X, Y = Operand("x"), Operand("y")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path}: {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if needle in line)


def _rejected(specs: Path) -> str:
    result = run_cli("validate", "--specs", specs)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def _add_function(specs: Path, line: str) -> Path:
    math = specs / "ops" / "math.yaml"
    math.write_text(math.read_text(encoding="utf-8").rstrip("\n") + f"\n  {line}\n", encoding="utf-8")
    return math


# ------------------------------------------------------------------ the language


def test_arithmetic_keeps_its_grouping_and_precedence() -> None:
    assert parse_expression("x - (y + 1) * 2", ("x", "y")) == BinaryOp(
        Arithmetic.SUB, X, BinaryOp(Arithmetic.MUL, BinaryOp(Arithmetic.ADD, Y, Number(1.0, 1.0)), Number(2.0, 2.0))
    )


def test_a_comparison_and_where_are_expressions() -> None:
    assert parse_expression("where(x < 0, -x, x)", ("x",)) == Call("where", (Compare(Comparison.LT, X, Number(0.0, 0.0)), Negate(X), X))


def test_a_number_carries_its_float64_and_its_fp32_value() -> None:
    number = parse_expression("0.1", ("x",))
    assert number == Number(0.1, float(np.float32(0.1)))


@pytest.mark.parametrize(
    ("text", "operands", "says", "at"),
    [
        ("expp(x)", ("x",), "unknown function 'expp' (did you mean 'exp'?)", 0),
        ("x * y", ("x",), "'y' is an operand of a binary function; a unary function has only x", 4),
        ("x ** 2", ("x",), "operator ** is not in the language (+ - * / only); use pow(a, b)", 2),
        ("x // 2", ("x",), "operator // is not in the language", 2),
        ("x if x > 0 else 0", ("x",), "use where(condition, a, b)", 0),
        ("max(x)", ("x",), "max() takes 2 arguments, not 1", 0),
        ("0 < x < 1", ("x",), "one comparison at a time", 0),
        ("exp(x) # note", ("x",), "character '#' is not in the expression language", 7),
        ("log(x", ("x",), "'(' was never closed", 3),
        ("1e39 * x", ("x",), "1e39 is beyond fp32's range", 0),
        ("x + 'a'", ("x",), "character \"'\" is not in the expression language", 4),
        ("math.exp(x)", ("x",), "'math.exp' is not a function of the language", 0),
        ("x and 1", ("x",), "use where(condition, a, b)", 0),
        ("+x", ("x",), "unary + is not in the language (only unary -)", 0),
        ("exp", ("x",), "'exp' is a function: call it, e.g. exp(x)", 0),
        ("z", ("x",), "unknown name 'z'; operands: x", 0),
        ("1_0 * x", ("x",), "'1_0' is not a decimal number", 0),
        ("True", ("x",), "True is not a number of the language", 0),
        ("(" * 50 + "x" + ")" * 50, ("x",), "parentheses nest deeper than", 40),
    ],
)
def test_an_expression_outside_the_language_names_the_token_and_where_it_is(text: str, operands: tuple[str, ...], says: str, at: int) -> None:
    with pytest.raises(ExpressionError) as caught:
        parse_expression(text, operands)
    assert says in str(caught.value)
    assert caught.value.offset == at


@pytest.mark.parametrize("function", MATH.functions, ids=lambda f: f.name)
def test_each_function_renders_back_to_the_same_ast(function: math_spec.MathFunction) -> None:
    for form in (function.exact, function.approximate):
        if form is not None:
            assert parse_expression(math_spec.render(form), function.operands, function.attributes) == form


def test_every_function_of_the_language_is_implemented_by_both_backends() -> None:
    emulator = set(emulator_math.CPP_FUNCTIONS) | emulator_math.CONDITIONALS
    assert emulator == set(math_spec.BUILTIN_NAMES)
    assert set(NUMPY_FUNCTIONS) == set(math_spec.BUILTIN_NAMES)


def test_every_runtime_primitive_has_a_reference() -> None:
    assert set(PRIMITIVE_REFERENCES) == set(math_spec.PRIMITIVE_NAMES)


def test_the_emulator_keeps_the_grouping_floating_point_depends_on() -> None:
    # (x + y) + 1 and x + (y + 1) round differently in fp32: the C++ keeps the spec's order.
    right = parse_expression("x + (y + 1)", ("x", "y"))
    assert emulator_math.expression(right) == "x + (y + 1.0f)"
    assert emulator_math.expression(parse_expression("(x + y) + 1", ("x", "y"))) == "x + y + 1.0f"
    assert emulator_math.expression(parse_expression("-(-x)", ("x",))) == "-(-x)"


def test_numbers_are_written_as_the_fp32_value_the_emulator_computes_with() -> None:
    assert emulator_math.expression(parse_expression("0.7978845608028654 * x", ("x",))) == "0.7978846f * x"
    assert emulator_math.expression(parse_expression("1e-5 + x", ("x",))) == "1.0e-5f + x"
    assert emulator_math.expression(parse_expression("6", ("x",))) == "6.0f"


def test_the_reference_evaluates_comparisons_as_one_or_zero_and_where_as_a_choice() -> None:
    x = np.array([-2.0, 0.0, 3.0])
    assert list(evaluate(parse_expression("x < 0", ("x",)), {"x": x})) == [1.0, 0.0, 0.0]
    assert list(evaluate(parse_expression("where(x > 0, x, 0 - x)", ("x",)), {"x": x})) == [2.0, 0.0, 3.0]
    assert list(evaluate(parse_expression("signbit(x)", ("x",)), {"x": np.array([-0.0, 0.0, -1.0])})) == [1.0, 0.0, 1.0]


# ------------------------------------------------------------------ located errors at validate


def test_a_bad_expression_is_a_located_error_that_lists_the_language(spec_copy: Path) -> None:
    math = _add_function(spec_copy, 'halfexp: {unary: "0.5 * expp(x)"}')
    message = _rejected(spec_copy)
    assert message.startswith(f"specs/ops/math.yaml:{_line_of(math, 'halfexp')}:")
    assert "functions.halfexp.unary: unknown function 'expp' (did you mean 'exp'?) (character 7 of '0.5 * expp(x)')" in message
    assert "the language: operands x, decimal numbers" in message and "where" in message


def test_a_bad_approximate_form_is_located_at_it(spec_copy: Path) -> None:
    math = _add_function(spec_copy, 'twice: {unary: "2 * x",\n    approximate: "2 * y"}')
    message = _rejected(spec_copy)
    line = _line_of(math, "2 * y")
    assert message.startswith(f"specs/ops/math.yaml:{line}:")
    assert "functions.twice.approximate: 'y' is an operand of a binary function" in message


def test_a_binding_computing_math_nobody_stated_names_the_math_spec_at_the_binding(spec_copy: Path) -> None:
    emulation = spec_copy / "tt_metal" / "emulation.yaml"
    math = spec_copy / "ops" / "math.yaml"
    _edit(math, '  relu: {unary: "max(x, 0)"}\n', "")
    message = _rejected(spec_copy)
    assert message.startswith(f"specs/tt_metal/emulation.yaml:{_line_of(emulation, 'computes: relu')}:")
    assert "no math is stated for 'relu'" in message
    assert "add it to specs/ops/math.yaml under functions:, as relu: {unary: " in message


def test_a_unary_routine_computing_a_binary_function_is_a_located_error(spec_copy: Path) -> None:
    emulation = spec_copy / "tt_metal" / "emulation.yaml"
    _edit(emulation, "abs_tile: {computes: abs,", "abs_tile: {computes: max,")
    message = _rejected(spec_copy)
    assert f"specs/tt_metal/emulation.yaml:{_line_of(emulation, 'abs_tile: {computes: max')}:" in message
    assert "'max' is a binary function" in message and "ttlemu::compute::sfpu_unary takes a unary one" in message


def test_selecting_an_approximate_form_the_math_does_not_state_is_a_located_error(spec_copy: Path) -> None:
    emulation = spec_copy / "tt_metal" / "emulation.yaml"
    _edit(emulation, "tanh_tile: {computes: tanh,", "tanh_tile: {computes: tanh, approximate: fast_and_approx,")
    message = _rejected(spec_copy)
    assert message.startswith(f"specs/tt_metal/emulation.yaml:{_line_of(emulation, 'tanh_tile: {computes')}:")
    assert "`approximate: fast_and_approx` selects the approximate form of 'tanh', which specs/ops/math.yaml does not state" in message


def test_approximate_must_name_a_bool_template_parameter(spec_copy: Path) -> None:
    emulation = spec_copy / "tt_metal" / "emulation.yaml"
    _add_function(spec_copy, 'tanh2: {unary: "tanh(x)", approximate: "x"}')
    _edit(emulation, "tanh_tile: {computes: tanh,", "tanh_tile: {computes: tanh2, approximate: idst,")
    message = _rejected(spec_copy)
    assert "`approximate: idst` must name a bool template parameter of 'tanh_tile'" in message
    assert "it is a function parameter" in message


def test_approximate_on_a_routine_whose_math_the_glue_holds_is_refused(spec_copy: Path) -> None:
    emulation = spec_copy / "tt_metal" / "emulation.yaml"
    _edit(emulation, "add_tiles: {computes: add,", "add_tiles: {computes: add, approximate: acc_to_dest,")
    message = _rejected(spec_copy)
    assert "`approximate: acc_to_dest` selects a form of the math spec's function, but compute::fpu_binary takes its `function` from the glue (ttlemu::math::fpu_binary)" in message


def test_a_function_named_as_a_runtime_primitive_or_a_keyword_is_refused(spec_copy: Path) -> None:
    math = _add_function(spec_copy, 'copy: {unary: "x"}\n  double: {unary: "2 * x"}')
    message = _rejected(spec_copy)
    assert f"specs/ops/math.yaml:{_line_of(math, 'copy: ')}:3: functions.copy: 'copy' is a runtime primitive" in message
    assert f"specs/ops/math.yaml:{_line_of(math, 'double: ')}:3: functions.double: 'double' is a C++ keyword" in message


def test_the_math_is_stated_once(spec_copy: Path) -> None:
    (spec_copy / "ops" / "more_math.yaml").write_text('spec: ttlgen.math/v1\nsummary: more\nfunctions:\n  twice: {unary: "2 * x"}\n', encoding="utf-8")
    assert "a second ttlgen.math file; the math is stated once (first: specs/ops/math.yaml)" in _rejected(spec_copy)


def test_one_binding_computing_a_function_of_another_arity_is_its_own_error_not_the_tables(spec_copy: Path) -> None:
    # The table stays right while another binding of its routine computes its arity: only
    # the tables' own mistakes (both ways round, or shared) are reported at `math:`.
    emulation = real_project().api.emulation
    assert emulation is not None
    unary = emulation.table(1)
    name, binding = next(
        (name, b) for name, found in emulation.bindings for b in found
        if b.passes_function and b.computes and b.call.function.rpartition("::")[2] == unary
    )
    binary = MATH.of_arity(2)[0].name
    _edit(spec_copy / "tt_metal" / "emulation.yaml", f"{name}: {{computes: {binding.computes},", f"{name}: {{computes: {binary},")
    result = run_cli("validate", "--specs", spec_copy)
    assert result.exit_code == 2
    assert f"functions.{name}: {binary!r} is a binary function" in result.stderr
    assert ": math." not in result.stderr
