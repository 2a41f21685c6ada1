"""Every call of the spelling spec, checked against each tt-metal API level it applies to.

A spelled call that one level gives every level is checked at every level; a per-level
call at its own. Ops no shipped kernel uses are checked as well as the ones they use, so a
typo or a wrong arity in any spelling is a located error of ``ttlgen validate`` at the
spelling-spec line, not a surprise when a kernel first uses the op. The rules are the API
level's (:meth:`ApiLevel.call_problem`): a known function of the right kind of kernel, an
arity, template arguments and function arguments one of its forms takes (an enumerator of
the right enumeration where a parameter is one, no scoped enumerator where it is a number;
an ``{attr.<name>}`` placeholder is checked with each value its ``attributes`` spell, any
other placeholder by what it is bound to), no removed function, and a deprecated form only with
``deprecated_ok``. The accessor's type, constructors and member function are checked
against the level's type declarations.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import product

from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model.call_forms import CallArg, CallForm, Literal, Placeholder
from ttlgen.model.spelling import BracedAccessor, LevelSpelling, Spelling, SpellingModel
from ttlgen.model.tt_metal_api import ApiLevel, ApiModel, KernelKind, level_entity

_COMPUTE = (KernelKind.COMPUTE,)
_DATAFLOW = (KernelKind.DATAFLOW,)
# The CB calls are the same in compute, reader and writer kernels.
_BOTH = (KernelKind.COMPUTE, KernelKind.DATAFLOW)

# (form, the kinds of kernel that make the call, the API type it is a member or
# constructor of, the op spelling it belongs to)
_Checked = tuple[CallForm, tuple[KernelKind, ...], str | None, Spelling | None]


def _calls(level: LevelSpelling) -> Iterator[_Checked]:
    for group, kinds in ((level.kernel, _COMPUTE), (level.kernel.dst, _COMPUTE), (level.cb, _BOTH), (level.dataflow, _DATAFLOW)):
        for value in vars(group).values():
            if isinstance(value, CallForm):
                yield value, kinds, None, None
    accessor = level.dataflow.accessor
    if not isinstance(accessor, BracedAccessor):
        args_type = accessor.compile_time_args.function
        yield accessor.compile_time_args, _DATAFLOW, args_type, None
        yield accessor.next_offset, _DATAFLOW, args_type, None
        yield accessor.construct, _DATAFLOW, accessor.construct.function, None
    for spelling in level.spellings:
        for form in spelling.forms():
            yield form, _COMPUTE, None, spelling


def _bindings(form: CallForm, spelling: Spelling | None) -> list[tuple[list[str | None], list[CallArg]]]:
    """Every combination of template and function arguments the form can be bound with: a
    literal is itself, an attribute placeholder each value its op spells, any other
    placeholder a value computed at binding (None for a template argument, its kind for a
    function argument)."""

    def spelled(arg: Placeholder) -> list[str]:
        root, _, attr = arg.key.partition(".")
        values = [v for name, spelled in (spelling.attributes if spelling else ()) if name == attr for _, v in spelled]
        return sorted(set(values)) if root == "attr" else []

    choices: list[Sequence[CallArg]] = []
    for arg in form.template_args:
        choices.append([arg.text] if isinstance(arg, Literal) else spelled(arg) or [None])
    for arg in form.args:
        choices.append([arg.text] if isinstance(arg, Literal) else spelled(arg) or [arg.kind])
    count = len(form.template_args)
    out: list[tuple[list[str | None], list[CallArg]]] = []
    for chosen in product(*choices):
        template = [a if isinstance(a, str) else None for a in chosen[:count]]
        out.append((template, list(chosen[count:])))
    return out


def _check_accessor_type(level: LevelSpelling, api: ApiLevel, sink: DiagnosticSink) -> None:
    accessor = level.dataflow.accessor
    if isinstance(accessor, BracedAccessor) and accessor.type.name:
        problem = api.type_problem(accessor.type.name, len(accessor.type.template_args))
        if problem is not None:
            sink.error(accessor.type.mark, problem)


def check(spelling: SpellingModel, api: ApiModel, sink: DiagnosticSink) -> None:
    """Report every spelled call that does not fit an API level it applies to."""
    seen: set[tuple[Mark, str]] = set()
    for level in spelling.levels:
        found = api.level(level.level)
        if found is None:
            continue
        for form, kinds, member_of, owner in _calls(level):
            if not form.function:
                continue  # unparsable: reported where it was read
            bindings = _bindings(form, owner)
            for kind in kinds:
                for template_args, args in bindings:
                    problem = found.call_problem(form.function, kind, template_args, args, member_of, form.deprecated_ok)
                    if problem is not None and (form.mark, problem) not in seen:
                        seen.add((form.mark, problem))
                        sink.error(form.mark, problem, after=(level_entity(level.level),))
        _check_accessor_type(level, found, sink)
