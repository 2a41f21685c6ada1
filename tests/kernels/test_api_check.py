"""The build checks every call against the API level: rules the spec-error cases cannot reach.

The located errors of spelling edits (unknown, removed, deprecated, wrong arity or
enumerator, a level missing from a per-level call, a start-up call that is none) are
bad-spec cases (tests/fixtures/bad_specs/kernels/); these build programs directly to pin
the rules no spelling edit can break on its own: the init protocol, includes, calls
declared only for the other kind of kernel, and the types of the arguments the lowering
binds (its own numbers and enumerators, which no spelled form shows).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from tests.conftest import real_project, run_cli
from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model.call_forms import ArgKind
from ttlgen.model.cpp_declarations import BUILTIN_TYPES, Param
from ttlgen.model.tt_metal_api import ApiLevel, FunctionForm, KernelKind, TypeDecl
from ttlgen.plan import api_check
from ttlgen.plan import kernel_ir as ir

WHERE = Mark("specs/kernels/k.yaml", 3, 3)


@functools.cache
def level(name: str) -> ApiLevel:
    found = real_project().api.level(name)
    assert found is not None
    return found


def current() -> ApiLevel:
    return level("current")


def _call(step: ir.Step, name: str, *args: int, line: int = 1) -> ir.Call:
    return ir.Call(step, name, (), tuple(ir.Arg(ArgKind.CB, ir.Const(a)) for a in args), Mark("spelling.yaml", line, 1))


STARTUP = _call(ir.Step.HW_INIT, "compute_kernel_hw_startup", 0, 1, 16, line=1)
ACQUIRE = _call(ir.Step.DST_ACQUIRE, "tile_regs_acquire", line=2)


def _errors(kind: ir.ProgramKind, body: tuple[ir.Stmt, ...], includes: tuple[str, ...] = ()) -> list[str]:
    program = ir.Program(kind, includes, (), current().entry(api_check.kernel_kind_of(kind)), body)
    sink = DiagnosticSink()
    api_check.check(program, current(), WHERE, sink)
    return [d.format() for d in sink.diagnostics]


def test_a_program_that_starts_the_hardware_first_and_once_passes() -> None:
    assert _errors(ir.ProgramKind.COMPUTE, (STARTUP, ACQUIRE)) == []


def test_the_start_up_must_be_the_first_call() -> None:
    assert _errors(ir.ProgramKind.COMPUTE, (ACQUIRE, STARTUP)) == [
        "spelling.yaml:1:1: 'compute_kernel_hw_startup' must be the compute kernel's first call (API level 'current'); 'tile_regs_acquire' comes before it"
    ]


def test_the_start_up_runs_once() -> None:
    again = _call(ir.Step.HW_INIT, "compute_kernel_hw_startup", 0, 1, 16, line=9)
    assert _errors(ir.ProgramKind.COMPUTE, (STARTUP, ACQUIRE, again)) == [
        "spelling.yaml:9:1: 'compute_kernel_hw_startup' starts the kernel once; API level 'current' configures later ops with their short inits"
    ]


def test_the_start_up_is_not_inside_a_loop() -> None:
    loop = ir.For("i", ir.Const(2), (STARTUP, ACQUIRE), generated=False)
    assert _errors(ir.ProgramKind.COMPUTE, (loop,)) == [
        "spelling.yaml:1:1: 'compute_kernel_hw_startup' runs once at kernel start (API level 'current'), not inside a loop or condition"
    ]


def test_a_compute_kernel_that_never_starts_the_hardware_is_an_error() -> None:
    assert _errors(ir.ProgramKind.COMPUTE, (ACQUIRE,)) == [
        "specs/kernels/k.yaml:3:3: the compute kernel never starts the hardware: API level 'current' starts a kernel with one of compute_kernel_hw_startup"
    ]


def test_an_include_the_api_level_does_not_list_is_an_error() -> None:
    errors = _errors(ir.ProgramKind.COMPUTE, (STARTUP,), ("api/compute/compute_kernel_hw_startup.h", "Compute_kernel_api/tile_move_copy.h"))
    assert len(errors) == 1
    assert errors[0].startswith("specs/kernels/k.yaml:3:3: compute includes 'Compute_kernel_api/tile_move_copy.h', which API level 'current' does not list; its compute headers: api/compute/bcast.h,")


def test_a_dataflow_call_in_a_compute_kernel_is_an_error() -> None:
    read = _call(ir.Step.READ_BARRIER, "noc_async_read_barrier", line=5)
    assert _errors(ir.ProgramKind.COMPUTE, (STARTUP, read)) == [
        "spelling.yaml:5:1: 'noc_async_read_barrier' is declared for dataflow kernels (api/dataflow/dataflow_api.h), not compute kernels, at API level 'current'"
    ]


def test_includes_are_the_headers_declaring_the_calls() -> None:
    program = ir.Program(ir.ProgramKind.COMPUTE, (), (), current().compute_entry, (STARTUP, ACQUIRE))
    assert api_check.includes(program, current()) == ("api/compute/compute_kernel_hw_startup.h", "api/compute/reg_api.h")


def test_a_deprecated_form_the_spelling_explains_builds(spec_copy: Path, tmp_path: Path) -> None:
    spelling = spec_copy / "ops" / "tt_metal_spelling.yaml"
    text = spelling.read_text()
    old = "current: copy_init({cb}, 0, 0)"
    assert old in text
    spelling.write_text(text.replace(old, 'current: {call: "copy_tile_to_dst_init_short({cb})", deprecated_ok: "compared with copy_init"}'))
    result = run_cli("build", "--specs", spec_copy, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    assert "copy_tile_to_dst_init_short(cb_x);" in (tmp_path / "out" / "kernels" / "unary_chain_bf16" / "compute.cpp").read_text()


def _integral(param: Param) -> bool:
    return param.type.name in BUILTIN_TYPES and param.type.name not in ("bool", "float", "double") and not param.type.pointer


def _enumeration(param: Param) -> TypeDecl | None:
    kind = current().type(param.type.name)
    return kind if kind is not None and kind.is_enum else None


def _form_taking(wanted: Callable[[Param], bool]) -> tuple[FunctionForm, int]:
    """A compute function of the level with one current form, callable without template
    arguments, whose parameter at the returned index is ``wanted`` and the others integral."""
    for form in current().all_forms():
        params = form.signature.params
        if form.kernel is not KernelKind.COMPUTE or form.deprecated is not None or not form.signature.accepts_template_args(0):
            continue
        if len(current().forms(form.name, KernelKind.COMPUTE)) != 1:
            continue
        for index, param in enumerate(params):
            if wanted(param) and all(_integral(p) for i, p in enumerate(params) if i != index):
                return form, index
    raise AssertionError("the API level declares no compute function with such a parameter")


def _scoped_enumerator(other_than: str) -> str:
    kind = next(t for t in current().types if t.is_enum and t.scoped and t.name != other_than and t.enumerators)
    assert kind.enumerators is not None
    return f"{kind.name}::{kind.enumerators[0].name}"


def _calling(form: FunctionForm, index: int, value: ir.Expr) -> ir.Call:
    """A call of ``form`` passing ``value`` at ``index`` and small numbers elsewhere."""
    args = tuple(ir.Arg(ArgKind.LITERAL, value if i == index else ir.Const(i)) for i in range(len(form.signature.params)))
    return ir.Call(ir.Step.OP, form.name, (), args, Mark("spelling.yaml", 7, 1))


def test_an_enumerator_of_another_enumeration_is_an_error_naming_the_parameter() -> None:
    form, index = _form_taking(lambda p: _enumeration(p) is not None)
    param = form.signature.params[index]
    kind = _enumeration(param)
    assert kind is not None
    wrong = _scoped_enumerator(other_than=kind.name)
    errors = _errors(ir.ProgramKind.COMPUTE, (STARTUP, _calling(form, index, ir.Symbol(wrong))))
    assert len(errors) == 1
    assert errors[0].startswith(
        f"spelling.yaml:7:1: argument {index + 1} of {form.name!r}, {wrong!r}, is not a {kind.name}, which parameter {param.name!r} takes: "
    )


def test_a_scoped_enumerator_passed_to_an_integer_parameter_is_an_error() -> None:
    form, index = _form_taking(_integral)
    param = form.signature.params[index]
    enumerator = _scoped_enumerator(other_than="")
    errors = _errors(ir.ProgramKind.COMPUTE, (STARTUP, _calling(form, index, ir.Symbol(enumerator))))
    assert len(errors) == 1
    scope = enumerator.rpartition("::")[0]
    assert errors[0].startswith(
        f"spelling.yaml:7:1: argument {index + 1} of {form.name!r}, {enumerator!r}, is a {scope} enumerator, and a scoped enumerator "
        f"does not convert to {param.type.name}, which parameter {param.name!r} takes"
    )


def test_an_integer_literal_passed_to_an_integer_parameter_is_accepted() -> None:
    form, index = _form_taking(_integral)
    assert _errors(ir.ProgramKind.COMPUTE, (STARTUP, _calling(form, index, ir.Const(3)))) == []


def test_a_number_passed_to_an_enumeration_parameter_is_an_error() -> None:
    form, index = _form_taking(lambda p: _enumeration(p) is not None)
    param = form.signature.params[index]
    kind = _enumeration(param)
    assert kind is not None
    errors = _errors(ir.ProgramKind.COMPUTE, (STARTUP, _calling(form, index, ir.Const(1))))
    assert len(errors) == 1
    assert errors[0].startswith(f"spelling.yaml:7:1: argument {index + 1} of {form.name!r}, '1', is not a {kind.name}, which parameter {param.name!r} takes: ")
