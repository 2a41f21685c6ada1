"""The emulator's kernel-API headers: ``emulator/<level>/...`` for every API level.

Each header of a level's API spec becomes a header at the same include path declaring
exactly that level's forms of its functions (template parameters, defaults, overloads,
``[[deprecated]]`` with upstream's message or ttlgen's summary of the change), each with
the body the emulation spec binds it to: one call of the emulator's glue. A form without a binding is declared only. Beside
them, ``ttlemu_api_types.h`` holds the level's enumerations, exports the glue's types the
level declares, gives the emulator's values of host defines and, for a level whose compute
entry point is a pair of macros, defines them. ``ttlemu_level.json`` tells the emulator's
build the symbol each kind of kernel's entry point compiles to. ``ttlemu_math.h``
(:mod:`ttlgen.emit.emulator_math`) defines the math spec's functions the bindings pass.

The layout follows the repository's ``.clang-format`` (the generated-code gate checks it).
Nothing here names the tt-metal API: every name comes from the specs.
"""

from __future__ import annotations

from collections.abc import Sequence

from ttlgen.emit import emulator_math
from ttlgen.emit._base import EmitContext, GeneratedFile, lines_text
from ttlgen.emit._text import c_string, json_text
from ttlgen.model.call_forms import Literal
from ttlgen.model.cpp_declarations import Param, Signature, TemplateParam
from ttlgen.model.project import Project
from ttlgen.model.tt_metal_api import (
    EMULATOR_DESCRIPTOR,
    EMULATOR_TYPES_HEADER,
    MATH_FUNCTION,
    ApiLevel,
    Binding,
    Define,
    Emulation,
    FunctionForm,
    Header,
    KernelKind,
    TypeDecl,
)
from ttlgen.plan.project import ProjectPlan

COLUMNS = 100
INDENT = "    "
TYPES_HEADER = EMULATOR_TYPES_HEADER
DESCRIPTOR = EMULATOR_DESCRIPTOR


def wrap(head: str, items: Sequence[str], tail: str, indent: str = "") -> list[str]:
    """``head item, item, ... tail`` in lines of at most COLUMNS, continuation lines aligned
    after ``head`` (clang-format's AlignAfterOpenBracket with bin-packed arguments)."""
    first = indent + head
    line = first
    lines: list[str] = []
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else tail)
        if line == first:
            line += piece
        elif len(line) + 1 + len(piece) <= COLUMNS:
            line += " " + piece
        else:
            lines.append(line)
            line = " " * len(first) + piece
        if len(line) > COLUMNS and " ? " in piece and " : " in piece:
            # A conditional expression too long for its line breaks before its ':', which
            # goes under the '?' (clang-format's BreakBeforeTernaryOperators).
            question = line.index(" ? ") + 1
            head, _, rest = line.partition(" : ")
            lines.append(head)
            line = " " * question + ": " + rest
    lines.append(line if items else first + tail)
    return lines


def _template_line(params: Sequence[TemplateParam]) -> list[str]:
    return wrap("template <", [p.text for p in params], ">") if params else []


def _param(param: Param, used: set[str]) -> str:
    name = param.name or ""
    shown = name if name in used else (f"/*{name}*/" if name else "")
    text = f"{param.type.text} {shown}".rstrip()
    return text if param.default is None else f"{text} = {param.default}"


def _glue_call(binding: Binding, emulation: Emulation, prefix: str) -> tuple[str, list[str]]:
    """The binding's routine (qualified) with its template arguments, and its arguments."""
    call = binding.call
    leaf = call.function.rpartition("::")[2]

    def arg(value: object) -> str:
        assert isinstance(value, Literal)  # the model parses bindings without placeholders
        if value.text == MATH_FUNCTION:
            # A function of the math spec (the generated math header's), else the glue's entry.
            generated = emulator_math.argument(binding, emulation)
            return generated or f"{emulation.namespace}::math::{leaf}::{binding.computes}"
        return value.text

    template = f"<{', '.join(arg(a) for a in call.template_args)}>" if call.template_args else ""
    return f"{prefix}{emulation.namespace}::{call.function}{template}(", [arg(a) for a in call.args]


def function_lines(form: FunctionForm, emulation: Emulation) -> list[str]:
    """One form: its template line, declaration and (when bound) one-call body."""
    return _function_lines(form, emulation.binding(form), emulation)


def _function_lines(form: FunctionForm, binding: Binding | None, emulation: Emulation) -> list[str]:
    sig: Signature = form.signature
    used = set(binding.names()) if binding is not None else set()
    lines = _template_line(sig.template)
    params = [_param(p, used) for p in sig.params]
    returns = sig.returns.text if sig.returns is not None else ""
    if form.deprecated is not None:
        attribute = f"[[deprecated({c_string(form.deprecated.text)})]]"
        if len(attribute) > COLUMNS:
            # A string literal longer than a line: the formatter would split it.
            lines += ["// clang-format off", attribute, "// clang-format on"]
        else:
            lines.append(attribute)
    if binding is None:
        lines += wrap(f"{'constexpr ' if sig.constexpr else ''}{returns} {sig.name}(", params, ");")
        return lines
    # A constexpr form stays one (its result is a constant to the kernel), as upstream's.
    lines += wrap(f"{'constexpr' if sig.constexpr else 'inline'} {returns} {sig.name}(", params, ") {")
    head, args = _glue_call(binding, emulation, "return " if returns != "void" else "")
    lines += wrap(head, args, ");", INDENT)
    lines.append("}")
    return lines


def header_text(header: Header, emulation: Emulation) -> str:
    bound = [(form, emulation.binding(form)) for form in header.forms]
    bindings = [b for _, b in bound if b is not None]
    lines = [
        "#pragma once",
        f'#include "{emulation.glue_header(header.kernel)}"',
        f'#include "{TYPES_HEADER}"',
        *([f'#include "{emulator_math.HEADER}"'] if emulator_math.uses_math(bindings, emulation) else []),
        "",
    ]
    if header.namespace:
        lines += [f"namespace {header.namespace} {{", ""]
    for form, binding in bound:
        lines += [*_function_lines(form, binding, emulation), ""]
    if header.namespace:
        # Kernels call the API unqualified.
        lines += [f"}} // namespace {header.namespace}", f"using namespace {header.namespace};"]
    return "\n".join(lines).rstrip("\n") + "\n"


def _enum_lines(kind: TypeDecl) -> list[str]:
    assert kind.enumerators is not None
    items = [e.name if e.value is None else f"{e.name} = {e.value}" for e in kind.enumerators]
    head = f"enum {'class ' if kind.scoped else ''}{kind.name}{f' : {kind.underlying}' if kind.underlying else ''} {{ "
    line = head + ", ".join(items) + " };"
    if len(line) <= COLUMNS:
        return [line]
    return [head.rstrip(), *(f"{INDENT}{item}," for item in items), "};"]


def _define_lines(define: Define, value: str) -> list[str]:
    """A macro as the host would pass it (overridable with -D); a ``constexpr`` variable as
    upstream declares it, in the class or namespace its qualified name gives."""
    if define.constexpr is None:
        return [f"#ifndef {define.name}", f"#define {define.name} {value}", "#endif"]
    scope, _, name = define.name.rpartition("::")
    line = f"constexpr {define.constexpr} {name} = {value};"
    # A member of an upstream class (p_sfpu::kCONST_1_FP16B) is named the same way when it is a
    # namespace's, which several defines may share.
    return [line] if not scope else [f"namespace {scope} {{", line, f"}} // namespace {scope}"]


def types_text(level: ApiLevel, emulation: Emulation) -> str:
    lines = ["#pragma once", *(f'#include "{header}"' for _, header in emulation.glue), ""]
    values = dict(emulation.defines)
    for define in level.defines:
        if not define.host:  # a host define's value is each kernel's own (-D at its build)
            lines += _define_lines(define, values[define.name])
    lines.append("")
    for kind in level.types:
        if kind.is_enum:
            lines += _enum_lines(kind)
        else:
            lines.append(f"using {emulation.namespace}::types::{kind.name};")
    entry = level.compute_entry
    if entry.namespace_macro is not None:
        lines += [
            "",
            f"#define {entry.namespace_macro} {emulation.entry_namespace}",
            "",
            f"#define {entry.function} {emulation.entry_function}()",
        ]
    return "\n".join(lines) + "\n"


def _mangled(function: str, namespace: str | None = None) -> str:
    """The Itanium C++ symbol of ``void [namespace::]function()``."""
    if namespace is None:
        return f"_Z{len(function)}{function}v"
    return f"_ZN{len(namespace)}{namespace}{len(function)}{function}Ev"


def descriptor(level: ApiLevel, emulation: Emulation) -> dict[str, object]:
    symbols = {}
    for kind in KernelKind:
        entry = level.entry(kind)
        if entry.namespace_macro is None:
            symbols[kind.value] = _mangled(entry.function)
        else:
            symbols[kind.value] = _mangled(emulation.entry_function, emulation.entry_namespace)
    return {"level": level.level, "entry_symbols": symbols}


def level_files(
    level: ApiLevel, emulation: Emulation, math_lines: Sequence[tuple[str, object]] | None = None, ctx: EmitContext | None = None
) -> list[GeneratedFile]:
    """The emulator's files of ``level`` (``math_lines``: the math header's lines, the same
    at every level, when already made; ``ctx``: the context that lays the math header out,
    recording each line's function of the math spec when it traces)."""
    base = f"emulator/{level.level}"
    sources = tuple(sorted({level.source, emulation.source}))
    files = [
        GeneratedFile(f"{base}/{TYPES_HEADER}", types_text(level, emulation), sources),
        GeneratedFile(f"{base}/{DESCRIPTOR}", json_text(descriptor(level, emulation), indent=2) + "\n", sources),
    ]
    files += [GeneratedFile(f"{base}/{h.path}", header_text(h, emulation), sources) for h in level.headers]
    math_sources = tuple(sorted({emulation.source, *([emulation.math.source] if emulation.math.source else [])}))
    if math_lines is None:
        math_lines = emulator_math.header_lines(emulation.math, emulation)
    # Laid out once per level: a traced emit matches each file to a body it recorded.
    math_header = ctx.laid_out(math_lines, math_sources) if ctx is not None else lines_text(math_lines)
    files.append(GeneratedFile(f"{base}/{emulator_math.HEADER}", math_header, math_sources))
    return files


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    del plan  # laid out in code: the layout is clang-format's, checked by a gate
    emulation = project.api.emulation
    if emulation is None:
        return []
    math_lines = emulator_math.header_lines(emulation.math, emulation)
    return [f for level in project.api.levels for f in level_files(level, emulation, math_lines, ctx)]
