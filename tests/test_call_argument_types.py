"""A spelled call's function arguments are checked against its parameters' declared types.

What a spelling edit shows (an enumerator of another enumeration, one the enumeration
lacks, a scoped enumerator for a number, a placeholder of the wrong type) are bad-spec cases
(tests/fixtures/bad_specs/ops/call_argument_*); these pin what the check must accept, since
the headers accept it, and how an overloaded call is bound. The level is the real current
level with declarations of its own, so no test depends on what the shipped specs declare.
"""

from __future__ import annotations

import dataclasses

from tests.conftest import real_project
from ttlgen.errors import Mark
from ttlgen.model.call_forms import ArgKind, CallArg
from ttlgen.model.cpp_declarations import Param, parse_declaration
from ttlgen.model.tt_metal_api import (
    ApiLevel,
    Enumerator,
    FunctionForm,
    Header,
    KernelKind,
    TypeDecl,
)

AT = Mark("specs/tt_metal/x.yaml", 1, 1)


def _enum(name: str, scoped: bool) -> TypeDecl:
    return TypeDecl(name, (Enumerator("A", 0), Enumerator("B", 1)), scoped, None, (), (), (), (), AT)


def _form(declaration: str) -> FunctionForm:
    return FunctionForm(parse_declaration(declaration), "api/x.h", KernelKind.COMPUTE, None, frozenset(), None, (), None, AT)


def _level(*declarations: str) -> ApiLevel:
    real = real_project().api.levels[0]
    header = Header("api/x.h", KernelKind.COMPUTE, None, tuple(_form(d) for d in declarations), AT)
    return dataclasses.replace(real, types=(_enum("Scoped", True), _enum("Plain", False)), headers=(header,))


def _param(declaration: str) -> Param:
    return parse_declaration(f"void f({declaration})").params[0]


def _problem(parameter: str, arg: CallArg) -> str | None:
    return _level().arg_problem(_param(parameter), arg)


def test_a_number_a_bool_or_an_integer_placeholder_binds_any_arithmetic_parameter() -> None:
    for parameter in ("uint32_t x", "bool x", "float x", "int x"):
        for arg in ("1", "0", "true", "false", ArgKind.DST, ArgKind.CB, ArgKind.FLOAT):
            assert _problem(parameter, arg) is None, (parameter, arg)


def test_an_unscoped_enumerator_converts_to_a_number() -> None:
    assert _problem("int x", "Plain::A") is None
    assert _problem("uint32_t x", "A") is None


def test_a_scoped_enumerator_converts_to_no_number() -> None:
    assert _problem("uint32_t x", "Scoped::A") == "is a Scoped enumerator, and a scoped enumerator does not convert to uint32_t, which parameter 'x' takes"


def test_an_enumeration_parameter_takes_its_own_enumerators_only() -> None:
    assert _problem("Scoped x", "Scoped::B") is None
    assert _problem("Plain x", "B") is None
    for arg in ("1", "true", "Plain::A", ArgKind.DST):
        assert _problem("Scoped x", arg) == "is not a Scoped, which parameter 'x' takes: Scoped::A, Scoped::B", arg


def test_an_enumerator_the_enumeration_lacks_is_an_error_whatever_the_parameter() -> None:
    assert _problem("uint32_t x", "Plain::Zebra") == "is no enumerator of Plain (did you mean 'Plain::A' or 'Plain::B'?)"
    assert _problem("const Generator& x", "Scoped::AA") == "is no enumerator of Scoped (did you mean 'Scoped::A'?)"


def test_what_the_spelling_does_not_type_binds_anything() -> None:
    # A class parameter takes what its conversions allow; an accessor, a literal placeholder
    # or a computed value is not typed by the spelling; a name that is no enumeration's may
    # be a macro.
    assert _problem("const Generator& g", "1") is None
    assert _problem("Scoped x", None) is None
    assert _problem("Scoped x", ArgKind.ACCESSOR) is None
    assert _problem("uint32_t x", "p_sfpu::kCONST_1_FP16B") is None


def test_an_overloaded_call_binds_the_form_that_takes_its_arguments() -> None:
    level = _level("void f(uint32_t i, Scoped s)", "void f(uint32_t i, Plain p)")
    found, problem = level.check_call("f", KernelKind.COMPUTE, (), ("0", "Plain::B"))
    assert problem is None and found is not None
    assert isinstance(found, FunctionForm) and found.signature.params[1].type.name == "Plain"


def test_a_call_no_form_takes_names_the_argument_and_every_form() -> None:
    level = _level("void f(uint32_t i, Scoped s)", "void f(uint32_t i, uint32_t n)")
    _, problem = level.check_call("f", KernelKind.COMPUTE, (), (ArgKind.DST, "true"))
    assert problem is None  # the second form takes it
    _, problem = level.check_call("f", KernelKind.COMPUTE, (), (ArgKind.DST, "Scoped::Zebra"))
    assert problem is not None
    assert problem.message == (
        f"argument 2 of 'f', 'Scoped::Zebra', is no enumerator of Scoped (did you mean 'Scoped::A' or 'Scoped::B'?); "
        f"forms at API level {level.level!r}: "
        "f(uint32_t i, Scoped s); f(uint32_t i, uint32_t n) (api/x.h)"
    )


def test_only_the_number_of_arguments_is_checked_when_that_is_all_the_caller_knows() -> None:
    level = _level("void f(uint32_t i, Scoped s)")
    assert level.check_call("f", KernelKind.COMPUTE, (), 2)[1] is None
