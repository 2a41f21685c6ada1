"""The spec source of each line the kernel printer writes, from the kernel IR.

The printer turns a program's statements into lines; this module walks the same
statements, asks the printer for each one's lines, and gives each line the source of the
statement that produced it: a call the spelling spec position it was bound from
(``Call.origin``), a CB constant its dataflow buffer, a loop of the kernel body the kernel
spec's loop. A loop the lowering adds, a conditional and a closing brace belong to the
statement around them, and at the top to the kernel spec itself. The lines are checked
against what the printer prints for the whole program, so a change to the printer's
layout cannot make the map silently wrong. The lines that open and close the entry point
are the API level's entry, an include the level's header; ``program.json``'s lines are
the kernel spec's, and those of its plan and compute config also the relation rules that
allowed them (:meth:`LoweredKernel.deciders`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ttlgen.emit import _kernel_printer as printer
from ttlgen.emit._text import json_text
from ttlgen.emit.kernels import program as program_json
from ttlgen.errors import Mark
from ttlgen.model import kernel_names
from ttlgen.model.kernels import Kernel, Loop, walk_statements
from ttlgen.plan import kernel_ir as ir
from ttlgen.plan.kernels import LoweredKernel
from ttlgen.provenance.origins import Locator, SpecSource, describe, node_mark

LineSources = tuple[SpecSource, ...]  # one per line
PerLine = tuple[tuple[SpecSource, ...], ...]  # the sources of each line, the first the one that produced it
Headers = Mapping[tuple[str, str], Mark]  # (API level, header path) -> where the level declares it


class PrinterMismatch(Exception):
    """The printer's lines for a program differ from the statement-by-statement walk."""


@dataclass(frozen=True)
class _Kernel:
    kernel: Kernel
    locator: Locator

    @property
    def source(self) -> SpecSource:
        return SpecSource(self.locator.node(self.kernel.mark), f"kernel {self.kernel.name!r}")

    def call(self, call: ir.Call) -> SpecSource | None:
        if call.origin is None:
            return None
        return SpecSource(self.locator.node(call.origin), f"the spelling of {call.function}")

    def declared(self, stmt: ir.Declare) -> SpecSource | None:
        for dfb in self.kernel.dfbs:
            if kernel_names.cb(dfb.name) == stmt.name:
                return SpecSource(self.locator.node(dfb.mark), f"DFB {dfb.name!r}")
        if isinstance(stmt.value, ir.CallValue):
            return self.call(stmt.value.call)
        return None

    def loop(self, stmt: ir.For) -> SpecSource | None:
        if stmt.generated:
            return None
        for found in walk_statements(self.kernel.body):
            if isinstance(found, Loop) and found.var == stmt.var:
                # The body's item holds the statement; its ``loop`` key is the loop.
                mark = self.locator.node(found.mark)
                document = self.locator.by_file.get(mark.file)
                path = (*mark.path, "loop")
                if document is not None and path in document.positions.values:
                    mark = node_mark(document, path)
                return SpecSource(mark, f"loop {found.var!r}")
        return None


def _lines(k: _Kernel, stmt: ir.Stmt, indent: str, around: SpecSource) -> list[tuple[str, SpecSource]]:
    printed = printer.statements([stmt], indent)
    inner = indent + printer.INDENT
    if isinstance(stmt, ir.Call):
        own = k.call(stmt) or around
        return [(line, own) for line in printed]
    if isinstance(stmt, ir.Declare):
        own = k.declared(stmt) or around
        return [(line, own) for line in printed]
    if isinstance(stmt, ir.For):
        own = k.loop(stmt) or around
        body = [pair for s in stmt.body for pair in _lines(k, s, inner, own)]
        return _framed(printed, own, [body])
    if isinstance(stmt, ir.If):
        branches = [[pair for s in stmt.then for pair in _lines(k, s, inner, around)]]
        if stmt.orelse:
            branches.append([pair for s in stmt.orelse for pair in _lines(k, s, inner, around)])
        return _framed(printed, around, branches)
    return [(line, around) for line in printed]


def _framed(printed: list[str], own: SpecSource, branches: list[list[tuple[str, SpecSource]]]) -> list[tuple[str, SpecSource]]:
    """An opening line, each branch's lines after a line of its own, a closing line."""
    if len(printed) != sum(1 + len(branch) for branch in branches) + 1:
        raise PrinterMismatch(f"the kernel printer wrote {len(printed)} lines for a block of {len(branches)} branch(es)")
    out: list[tuple[str, SpecSource]] = []
    at = 0
    for branch in branches:
        out.append((printed[at], own))
        out += branch
        at += 1 + len(branch)
    out.append((printed[at], own))
    return out


def _check(lines: list[tuple[str, SpecSource]], expected: str, what: str) -> LineSources:
    if "\n".join(line for line, _ in lines) != expected:
        raise PrinterMismatch(f"the kernel printer's lines of {what} differ from its statements' lines")
    return tuple(source for _, source in lines)


def body_sources(lowered: LoweredKernel, program: ir.Program, locator: Locator) -> LineSources:
    k = _Kernel(lowered.kernel, locator)
    lines = [pair for stmt in program.body for pair in _lines(k, stmt, printer.INDENT, k.source)]
    return _check(lines, printer.print_program(program).body, f"the {program.kind.value} body of {lowered.kernel.name}")


def function_sources(lowered: LoweredKernel, function: ir.Function, locator: Locator) -> LineSources:
    """A helper function: its body by statement, its other lines to its first spelled call."""
    k = _Kernel(lowered.kernel, locator)
    calls = [k.call(c) for c in ir.calls(function.body)]
    own = next((c for c in calls if c is not None), k.source)
    body = [pair for stmt in function.body for pair in _lines(k, stmt, printer.INDENT, own)]
    printed = printer.function(function).split("\n")
    head = len(printed) - len(body) - 1
    lines = [(line, own) for line in printed[:head]] + body + [(printed[-1], own)]
    return _check(lines, "\n".join(printed), f"function {function.name} of {lowered.kernel.name}")


def text_sources(lowered: LoweredKernel, locator: Locator, headers: Headers) -> list[tuple[printer.PrintedProgram, dict[str, LineSources]]]:
    """Each program of the kernel as the templates get it, and each text they print of it
    (the body, a helper function, an entry line, an include) with the source of each of its
    lines. A render prints one program: the texts of another are not its own (both entry
    points may open with the same line)."""
    out = []
    for program in (lowered.compute, lowered.reader, lowered.writer):
        printed = printer.print_program(program)
        texts: dict[str, LineSources] = {}
        if printed.body:
            texts[printed.body] = body_sources(lowered, program, locator)
        for function, text in zip(program.functions, printed.functions, strict=True):
            texts[text] = function_sources(lowered, function, locator)
        entry = program.entry
        if entry.mark is not None:
            source = SpecSource(locator.node(entry.mark), f"{program.kind.value} entry point {entry.function!r}")
            texts.update((line, (source,)) for line in (*printed.begin, *printed.end))
        for include in printed.includes:
            mark = headers.get((lowered.api_level, include))
            if mark is not None:
                texts[include] = (SpecSource(locator.node(mark), f"header {include!r}"),)
        out.append((printed, texts))
    return out


# The keys of program.json whose values the relation rules decide, and the attribute each prints.
_DECIDED_KEYS = {"_plan": "plan_json", "compute_config": "compute_config"}


def json_sources(lowered: LoweredKernel, locator: Locator) -> tuple[str, PerLine]:
    """``program.json`` as its template prints it, with the sources of each line: the kernel
    spec, and for the plan and the compute config also the relation rules that allowed them."""
    data = program_json(lowered)
    text = json_text(data, 2)
    kernel = SpecSource(locator.node(lowered.kernel.mark), f"kernel {lowered.kernel.name!r}")
    top = {f'  "{key}": ': key for key in data}
    out: list[tuple[SpecSource, ...]] = []
    key = ""
    for line in text.split("\n"):
        key = next((k for head, k in top.items() if line.startswith(head)), key)
        deciders = lowered.deciders(_DECIDED_KEYS[key]) if key in _DECIDED_KEYS else ()
        out.append((kernel, *(SpecSource(locator.node(r.mark), describe(r)) for r in deciders)))
    return text, tuple(out)
