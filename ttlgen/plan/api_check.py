"""Every call a kernel program makes, checked against the tt-metal API level of its target.

A call must name a function (or a constructor or member function of a type) the level
declares for the program's kind of kernel, with as many arguments and template arguments
as one of its forms takes (defaults and deduced template parameters respected), with
enumerator template arguments of the right enumeration, and function arguments its
parameters take (:meth:`ApiLevel.arg_problem`, the rule the spelled forms are held to at
validate time; here the values the lowering bound, its own numbers and enumerators among
them, are judged as written). A removed function, or a form the level deprecates, is an
error unless the spelling spec says why the deprecated form is still used. The compute
program starts with exactly one of the level's start-up calls, outside any loop (the init
protocol). Errors point at the spelling-spec line the call was bound from (``Call.origin``).
The headers a program includes are the ones declaring the functions it calls
(:func:`includes`); an include the level does not list is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model.call_forms import ArgKind, CallArg
from ttlgen.model.tt_metal_api import ApiLevel, FunctionForm, KernelKind, State
from ttlgen.plan import kernel_ir as ir
from ttlgen.plan.hoist import Effects

_KINDS = {
    ir.ProgramKind.COMPUTE: KernelKind.COMPUTE,
    ir.ProgramKind.READER: KernelKind.DATAFLOW,
    ir.ProgramKind.WRITER: KernelKind.DATAFLOW,
}


def kernel_kind_of(kind: ir.ProgramKind) -> KernelKind:
    return _KINDS[kind]


def kernel_kind(program: ir.Program) -> KernelKind:
    return _KINDS[program.kind]


def _literal(arg: ir.Arg) -> str | None:
    """A template argument's text when it is written in the spec (a number or a symbol)."""
    if isinstance(arg.value, ir.Const):
        return str(arg.value.value)
    if isinstance(arg.value, ir.Symbol):
        return arg.value.text
    return None


def _arg(arg: ir.Arg) -> CallArg:
    """A function argument as :meth:`ApiLevel.arg_problem` judges it: a number (in decimal:
    only that it is one matters), or a symbol as the kernel source writes it; an fp32 value
    as a float; any other value (a variable, an expression) by the kind of value the
    argument holds, as the spelled form's check saw its placeholder."""
    value = arg.value
    if isinstance(value, (ir.Const, ir.Bits)):
        return str(value.value)
    if isinstance(value, ir.Symbol):
        return value.text
    if isinstance(value, ir.Float):
        return ArgKind.FLOAT
    return arg.kind


def _args(call: ir.Call) -> tuple[CallArg, ...]:
    return tuple([_arg(a) for a in call.args])


def _api_calls(program: ir.Program) -> list[ir.Call]:
    return [c for c in program.calls() if c.step is not ir.Step.HELPER]


def form_of(level: ApiLevel, call: ir.Call, kernel: KernelKind) -> FunctionForm | None:
    """The declared form a (valid) call binds to; None for constructors and member calls."""
    # Bound by its arguments' types, as the check accepted it: of overloads taking as many
    # arguments, the one the compiler picks.
    found, _ = level.check_call(call.function, kernel, [_literal(a) for a in call.template_args], _args(call), call.member_of)
    return found if isinstance(found, FunctionForm) else None


def effects(level: ApiLevel, kernel: KernelKind) -> Effects:
    """What each call of a program at ``level`` configures (for the hoisting pass)."""

    configuring = level.configuring_functions[kernel]

    def of(call: ir.Call) -> frozenset[State]:
        if call.function not in configuring:
            return frozenset()  # no form of the function configures anything
        form = form_of(level, call, kernel)
        return form.sets() if form is not None else frozenset()

    return of


def format_loads(level: ApiLevel, kernel: KernelKind) -> Callable[[ir.Call], dict[State, ir.Expr | None]]:
    """The CB each data-format register a call at ``level`` loads is loaded from, by the
    API spec's ``formats`` of the form it binds to (None: a computed source order)."""

    loading = level.loading_functions[kernel]

    def of(call: ir.Call) -> dict[State, ir.Expr | None]:
        if call.function not in loading:
            return {}  # no form of the function loads a format: which one it binds to does not matter
        form = form_of(level, call, kernel)
        if form is None or not form.formats:
            return {}
        found = form.loads([_literal(a) for a in call.template_args])
        if found is None:
            return {state: None for state, _ in form.formats}
        return {state: call.args[index].value for state, index in found}

    return of


def format_expects(level: ApiLevel, kernel: KernelKind) -> Callable[[ir.Call], tuple[tuple[State, ir.Expr], ...] | None]:
    """The CB each source register must hold when a call at ``level`` runs, by the API
    spec's ``expects`` of the form it binds to (a contract the compile cannot see); None
    when the spec states none for the form or a computed template argument hides it."""

    expecting = level.expecting_functions[kernel]

    def of(call: ir.Call) -> tuple[tuple[State, ir.Expr], ...] | None:
        if call.function not in expecting:
            return None  # no form of the function expects anything
        form = form_of(level, call, kernel)
        if form is None or not form.expects:
            return None
        found = form.expected([_literal(a) for a in call.template_args])
        if found is None:
            return None
        return tuple((state, call.args[index].value) for state, index in found)

    return of


def includes(program: ir.Program, level: ApiLevel) -> tuple[str, ...]:
    """The headers declaring the functions ``program`` calls, sorted."""
    return _includes(_api_calls(program), level, kernel_kind(program))


def _includes(calls: list[ir.Call], level: ApiLevel, kind: KernelKind) -> tuple[str, ...]:
    found = set()
    for call in calls:
        if call.member_of is not None:
            continue
        header = level.header_of(call.function, kind)
        if header is not None:
            found.add(header)
    return tuple(sorted(found))


def checked(program: ir.Program, level: ApiLevel, where: Mark, sink: DiagnosticSink) -> ir.Program:
    """``program`` with the :func:`includes` its calls need, after reporting what does not
    fit ``level`` (:func:`check`); its calls are walked once for both."""
    calls = _api_calls(program)
    program = replace(program, includes=_includes(calls, level, kernel_kind(program)))
    _check(program, calls, level, where, sink)
    return program


def check(program: ir.Program, level: ApiLevel, where: Mark, sink: DiagnosticSink) -> None:
    """Report every call of ``program`` that does not fit ``level`` (``where``: the kernel, for
    problems that belong to no call)."""
    _check(program, _api_calls(program), level, where, sink)


def _check(program: ir.Program, calls: list[ir.Call], level: ApiLevel, where: Mark, sink: DiagnosticSink) -> None:
    kind = kernel_kind(program)
    for call in calls:
        template_args = [_literal(a) for a in call.template_args]
        problem = level.call_problem(call.function, kind, template_args, _args(call), call.member_of, call.deprecated_ok)
        if problem is not None:
            sink.error(call.origin or where, problem)
    for declared in _spec_types(program):
        problem = level.type_problem(declared.form.name, len(declared.form.template_args))
        if problem is not None:
            sink.error(declared.form.mark, problem)
    for header in program.includes:
        listed = level.header(header)
        if listed is None:
            sink.error(where, f"{program.kind.value} includes {header!r}, which API level {level.level!r} does not list{_headers_hint(level, kind)}")
        elif listed.kernel is not kind:
            sink.error(where, f"{program.kind.value} includes {header!r}, a header of {listed.kernel.value} kernels")
    if kind is KernelKind.COMPUTE:
        _check_startup(program, calls, level, where, sink)


def _spec_types(program: ir.Program) -> list[ir.SpecType]:
    bodies = [f.body for f in program.functions] + [program.body]
    return [s.type for body in bodies for s in ir.walk(body) if isinstance(s, ir.Declare) and isinstance(s.type, ir.SpecType)]


def _headers_hint(level: ApiLevel, kind: KernelKind) -> str:
    paths = sorted(h.path for h in level.headers if h.kernel is kind)
    return f"; its {kind.value} headers: {', '.join(paths)}" if paths else ""


def _check_startup(program: ir.Program, calls: list[ir.Call], level: ApiLevel, where: Mark, sink: DiagnosticSink) -> None:
    """The init protocol: the program (whose API calls are ``calls``) starts with one of the
    level's start-up calls, once, outside any loop or condition, before any other call."""
    names = ", ".join(level.startup)
    for call in calls:
        if call.step is ir.Step.HW_INIT and call.function not in level.startup:
            sink.error(call.origin or where, f"{call.function!r} cannot start a compute kernel at API level {level.level!r}; its start-up calls: {names}")
    startups = [c for c in calls if c.function in level.startup]
    if not startups:
        if not any(c.step is ir.Step.HW_INIT for c in calls):
            sink.error(where, f"the compute kernel never starts the hardware: API level {level.level!r} starts a kernel with one of {names}")
        return
    first = startups[0]
    if calls[0] is not first:
        sink.error(first.origin or where, f"{first.function!r} must be the compute kernel's first call (API level {level.level!r}); {calls[0].function!r} comes before it")
    if not any(stmt is first for stmt in program.body):
        sink.error(first.origin or where, f"{first.function!r} runs once at kernel start (API level {level.level!r}), not inside a loop or condition")
    for again in startups[1:]:
        sink.error(again.origin or where, f"{again.function!r} starts the kernel once; API level {level.level!r} configures later ops with their short inits")
