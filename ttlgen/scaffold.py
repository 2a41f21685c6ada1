"""`ttlgen new`: the spec entries of a new architecture, kernel or op, written where they
belong, with every fact the user must state left empty at its own line.

A scaffold is made from an existing entry (``--like``) so it has every key the schema
asks for in the order a reader expects, with its comments. The facts that differ from
one architecture, kernel or op to the next are emptied (``summary:`` with nothing after
it), so the next `ttlgen validate` or `build` names each one at its line; facts that may
well carry over (a capacity, a relation table) are kept and listed for review. Nothing
is overwritten: a name or file that exists is refused before anything is written.

`new` reads the spec files as parsed, not the validated project: the names it must not
take are every name the files declare, and the entry it copies is text. So it works while
another scaffold's blanks are still empty; only the files it copies or extends must be
free of errors (it would copy them), and an op, which is made from its family's model,
needs a project that builds once the unfinished kernel, architecture and target files are
left aside. The text edits are line-based YAML: a TOML file is refused, never copied wrong.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ttlgen import cache, release_headers
from ttlgen.errors import Diagnostic, SpecErrors, UsageError, did_you_mean
from ttlgen.model import math_spec
from ttlgen.model.kernels import KIND as KERNEL_KIND
from ttlgen.model.ops import OPS_KIND, OpSemantics, Route
from ttlgen.model.project import Project, build_project
from ttlgen.model.spelling import KIND as SPELLING_KIND
from ttlgen.model.targets import ARCHITECTURE_KIND, NO_ARCHITECTURE, TARGET_KIND
from ttlgen.model.tt_metal_api import EMULATION_KIND, KernelKind
from ttlgen.spec.document import SpecDocument
from ttlgen.spec.load import load_specs
from ttlgen.validate.documents import validate_documents

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
# The spec suffixes whose text the line-based edits below understand (SPEC_SUFFIXES has TOML too).
_YAML = (".yaml", ".yml")


@dataclass(frozen=True)
class Scaffold:
    """A file to write, and what in it is left to the user."""

    path: Path
    text: str
    fill_in: tuple[str, ...]  # keys emptied: each is a validation error until stated
    review: tuple[str, ...]  # keys copied from the model entry: check they hold
    # An existing file's text the scaffold adds entries to (None: a new file). It is
    # rewritten only if it still holds exactly this.
    original: str | None = None
    added: str = ""  # what the scaffold adds to an existing file, for the report
    notes: tuple[str, ...] = ()  # what else to do, printed after the file


def _check_name(name: str, what: str, taken: Iterable[str], reserved: Mapping[str, str] | None = None) -> None:
    """Refuse ``name`` unless it is an identifier no spec declares and the model does not
    reserve (``reserved``: name -> what it stands for)."""
    if not _NAME.match(name):
        raise UsageError(f"{name!r} is not a valid {what} name: lower case letters, digits and '_', starting with a letter")
    if reserved and name in reserved:
        raise UsageError(f"{name!r} is reserved for {reserved[name]}; choose another {what} name")
    if name in set(taken):
        article = "an" if what[0] in "aeiou" else "a"
        raise UsageError(f"there is already {article} {what} named {name!r}; choose another name")


def _of_kind(documents: Sequence[SpecDocument], kind: str) -> list[SpecDocument]:
    return [d for d in documents if d.kind == kind]


def _mapping(value: object) -> dict[str, Any]:
    """A mapping of a file not yet validated, or empty when it is none."""
    return value if isinstance(value, dict) else {}


def _kernel_names(documents: Sequence[SpecDocument]) -> dict[str, SpecDocument]:
    return {name: doc for doc in _of_kind(documents, KERNEL_KIND) for name in _mapping(doc.data.get("kernels"))}


def _declared(documents: Sequence[SpecDocument], kind: str) -> dict[str, SpecDocument]:
    """Each ``name:`` a file of ``kind`` declares, with its file."""
    return {doc.data["name"]: doc for doc in _of_kind(documents, kind) if isinstance(doc.data.get("name"), str)}


def _op_names(documents: Sequence[SpecDocument]) -> list[str]:
    return [
        str(name)
        for doc in _of_kind(documents, OPS_KIND)
        for body in _mapping(doc.data.get("families")).values()
        for name in (_mapping(body).get("names") or [])
    ]


def _not_copyable(doc: SpecDocument) -> str | None:
    """Why a scaffold cannot be made from ``doc`` (None: it can)."""
    suffix = Path(doc.display).suffix
    if suffix not in _YAML:
        return f"{doc.display} is a {suffix.lstrip('.').upper()} spec file and ttlgen new copies and edits YAML only"
    errors = validate_documents([doc])
    if errors:
        return f"{doc.display} has {len(errors)} error(s), which a scaffold would copy (first: {errors[0].format().splitlines()[0]})"
    return None


def _copyable(doc: SpecDocument, fix: str) -> SpecDocument:
    why = _not_copyable(doc)
    if why is not None:
        raise UsageError(f"{why}; {fix}")
    return doc


def _errors(documents: Sequence[SpecDocument]) -> tuple[tuple[Diagnostic, ...], Project | None]:
    """Every error of the specs, and the project when there is none."""
    schema = validate_documents(documents)
    if schema:
        return tuple(schema), None
    try:
        return (), build_project(documents)
    except SpecErrors as exc:
        return exc.diagnostics, None


def _elsewhere(errors: Sequence[Diagnostic]) -> tuple[str, ...]:
    """What to tell a user whose specs already had errors before the scaffold was written."""
    if not errors:
        return ()
    files = sorted({d.mark.file for d in errors})
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return (f"note: the specs already had {len(errors)} error(s) before this scaffold (in {shown}); `ttlgen validate` lists them with its blanks",)


def _top_key(key: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(key)}:.*$", re.MULTILINE)


def _emptied(text: str, key: str, what: str, indent: str = "") -> str:
    """Every ``key:`` line (at ``indent``) with its value removed, the lines a folded or
    block value continues on too, and a note in its place."""
    lines = text.split("\n")
    out: list[str] = []
    skipping = False
    for line in lines:
        if skipping and line.strip() and len(line) - len(line.lstrip()) > len(indent):
            continue  # a continuation of the value removed
        skipping = False
        if line.startswith(f"{indent}{key}:") and not line[len(indent)].isspace():
            out.append(f"{indent}{key}:  # to fill in: {what}")
            skipping = True
            continue
        out.append(line)
    return "\n".join(out)


def _without_block(text: str, key: str) -> str:
    """``text`` without the top-level ``key:`` block and the comment lines just above it."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(f"{key}:")), None)
    if start is None:
        return text
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace() and not lines[i].startswith("#")), len(lines))
    while start > 0 and lines[start - 1].startswith("#") and not lines[start - 1].startswith("# yaml-language-server"):
        start -= 1
    return "\n".join(lines[:start] + lines[end:])


def _renamed(text: str, key: str, old: str, new: str) -> str:
    return _top_key(key).sub(lambda m: m.group(0).replace(f"{key}: {old}", f"{key}: {new}", 1), text)


def new_architecture(specs: Path, name: str, like: str | None) -> list[Scaffold]:
    """An architecture like ``like`` (default: the first supported one) and a target for
    each runtime API ``like`` is launched through, named after ``name``."""
    documents = load_specs(specs)
    declared = _declared(documents, ARCHITECTURE_KIND)
    target_docs = _declared(documents, TARGET_KIND)
    _check_name(name, "architecture", declared, {NO_ARCHITECTURE: "the environment without an architecture (a target with architecture: none)"})
    # A model is a declared architecture some target is launched on: not a rejected one,
    # which has no targets, nor the environment without an architecture.
    launched = {d.data.get("architecture") for d in target_docs.values()}
    architectures = sorted(a for a, d in declared.items() if a in launched and a != NO_ARCHITECTURE and d.data.get("rejected") is None)

    def unusable(architecture: str) -> str | None:
        copied = [declared[architecture], *(d for d in target_docs.values() if d.data.get("architecture") == architecture)]
        return next((why for d in copied if (why := _not_copyable(d)) is not None), None)

    model = like or next((a for a in architectures if unusable(a) is None), architectures[0] if architectures else None)
    if model is None or model not in architectures:
        raise UsageError(f"--like {model!r} is no supported architecture{did_you_mean(model or '', architectures)}; choose one of: {', '.join(architectures)}")
    why = unusable(model)
    if why is not None:
        others = [a for a in architectures if a != model and unusable(a) is None]
        raise UsageError(f"{why}; give --like another architecture" + (f", one of: {', '.join(others)}" if others else ""))
    targets = sorted((d for d in target_docs.values() if d.data.get("architecture") == model), key=lambda d: d.data["name"])

    def target_name(old: str) -> str:
        return name + old[len(model) :] if old.startswith(model) else f"{name}_{old}"

    scaffolds: list[Scaffold] = []
    arch_doc = declared[model]
    text = _renamed(_read(arch_doc), "name", model, name)
    default = arch_doc.data.get("default_target")
    if isinstance(default, str):
        text = _renamed(text, "default_target", default, target_name(default))
    fill_in = []
    for key, what in (("summary", "one line on the architecture"), ("runtime_name", "the name the runtime reports for a device of it"), ("display_name", "the name TT-Lang's diagnostics give it")):
        if _top_key(key).search(text):
            text = _emptied(text, key, what)
            fill_in.append(key)
    text = _without_block(text, "golden")
    review = tuple(k for k in ("dfb_capacity", "full_fp32") if k in arch_doc.data)
    scaffolds.append(Scaffold(specs / "targets" / "architectures" / f"{name}{Path(arch_doc.display).suffix}", text, tuple(fill_in), review))
    for doc in targets:
        old_name = doc.data["name"]
        new_name = target_name(old_name)
        if new_name in target_docs:
            raise UsageError(f"there is already a target named {new_name!r} (in {target_docs[new_name].display}); choose another architecture name")
        text = _renamed(_read(doc), "name", old_name, new_name)
        text = _renamed(text, "architecture", model, name)
        text = _emptied(text, "summary", "one line on the target")
        reviewed = "review" in text
        text = _emptied(text, "review", "why this architecture's contract is the shared table's", indent="    ")
        text = _without_block(text, "golden")
        keys = ("summary", *(("relations.*.review",) if reviewed else ()))
        scaffolds.append(Scaffold(specs / "targets" / f"{new_name}{Path(doc.display).suffix}", text, keys, ("runtime_api", "generation", "relations")))
    _refuse_existing(scaffolds)
    return _noting(scaffolds, _errors(documents)[0])


def new_kernel(specs: Path, name: str, like: str | None) -> list[Scaffold]:
    """A kernel spec file holding one kernel like ``like`` (default: the first kernel)."""
    documents = load_specs(specs)
    found = _kernel_names(documents)
    kernels = sorted(found)
    _check_name(name, "kernel", kernels)
    model = like or next((k for k in kernels if _not_copyable(found[k]) is None), kernels[0] if kernels else None)
    if model is None or model not in found:
        raise UsageError(f"--like {model!r} is no kernel of the specs{did_you_mean(model or '', kernels)}")
    doc = _copyable(found[model], "give --like a kernel of a YAML kernel spec without errors")
    lines = _read(doc).split("\n")
    start = doc.key_mark(("kernels", model)).line - 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = _entry_end(lines, start, indent)
    entry = "\n".join(lines[start:end]).replace(f"{model}:", f"{name}:", 1)
    entry = _emptied(entry, "summary", "what the kernel computes", indent=" " * (indent + 2))
    # The file's head up to its spec: line (the schema comment, the spec itself), which a
    # file that validates has at the top level.
    spec_line = doc.key_mark(("spec",)).line
    text = "\n".join([*lines[:spec_line], "kernels:", entry, ""])
    path = specs / "kernels" / f"{name}{Path(doc.display).suffix}"
    scaffold = Scaffold(path, text, ("summary",), ("target", "dfbs", "body", "tolerance"))
    _refuse_existing([scaffold])
    return _noting([scaffold], _errors(documents)[0])


def _noting(scaffolds: list[Scaffold], errors: Sequence[Diagnostic]) -> list[Scaffold]:
    """``scaffolds``, the last one noting the errors the specs had before them."""
    notes = _elsewhere(errors)
    if notes and scaffolds:
        scaffolds[-1] = replace(scaffolds[-1], notes=(*scaffolds[-1].notes, *notes))
    return scaffolds


def _read(doc: SpecDocument) -> str:
    return Path(doc.display).read_text(encoding="utf-8")


def _refuse_existing(scaffolds: Sequence[Scaffold]) -> None:
    for scaffold in scaffolds:
        if scaffold.original is None and scaffold.path.exists():
            raise UsageError(f"{scaffold.path} exists; ttlgen new never overwrites a file")


def write(scaffolds: Sequence[Scaffold]) -> None:
    for scaffold in scaffolds:
        if scaffold.original is not None:
            if scaffold.path.read_text(encoding="utf-8") != scaffold.original:
                raise UsageError(f"{scaffold.path} changed while ttlgen new ran; nothing more was written to it")
            cache.write_atomically(scaffold.path, scaffold.text.encode("utf-8"))
            continue
        with scaffold.path.open("x", encoding="utf-8") as handle:  # "x": a file that appeared since is kept
            handle.write(scaffold.text.rstrip("\n") + "\n")


def report(scaffolds: Sequence[Scaffold]) -> str:
    out = []
    for scaffold in scaffolds:
        out.append(f"added {scaffold.added} to {scaffold.path}" if scaffold.original is not None else f"wrote {scaffold.path}")
        if scaffold.fill_in:
            out.append(f"  to fill in: {', '.join(scaffold.fill_in)}")
        if scaffold.review:
            out.append(f"  copied, to check: {', '.join(scaffold.review)}")
        out.extend(f"  {note}" for note in scaffold.notes)
    out.append("then run `ttlgen validate`: it names each fact still missing at its line")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------- new op

# What `--kind unary` and `--kind binary` name: an op family whose primitive is this, whose
# operands are this many and routed to DST, run by one strategy (an SFPU unary or binary).
_KINDS = {"unary": ("ElementwiseUnary", 1), "binary": ("ElementwiseBinary", 2)}


def _families(project: Project) -> dict[str, list[OpSemantics]]:
    found: dict[str, list[OpSemantics]] = {}
    for op in project.ops.ops:
        found.setdefault(op.family, []).append(op)
    return found


def _family_of_kind(project: Project, kind: str) -> str:
    families = _families(project)
    if kind in _KINDS:
        primitive, operands = _KINDS[kind]
        for family, ops in sorted(families.items()):
            op = ops[0]
            if (
                op.primitive.fixed == primitive and len(op.operands) == operands and len(op.strategies) == 1
                and all(r is Route.DST for r in op.strategies[0].routes) and op.result_in_dst
                and op.result_element_attribute is None and op.by_producer is None and not op.attributes
            ):
                return family
        raise UsageError(f"no op family of the specs is a plain {kind} (primitive {primitive}, {operands} DST operand(s), one strategy); give --kind a family name")
    if kind not in families:
        known = [*_KINDS, *sorted(families)]
        raise UsageError(f"--kind {kind!r} is neither unary, binary nor an op family{did_you_mean(kind, known)}; kinds: {', '.join(known)}")
    return kind


def _entry_end(lines: Sequence[str], start: int, indent: int = 0) -> int:
    """The index after the last non-blank line of the entry at line ``start``, indented
    ``indent``: it ends before the next line that is no comment and is indented no deeper."""
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].strip() and not lines[i].lstrip().startswith("#") and len(lines[i]) - len(lines[i].lstrip()) <= indent),
        len(lines),
    )
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _inserted(text: str, key: str, entry: str) -> str:
    """``text`` with ``entry``'s lines at the end of top-level ``key``'s block."""
    lines = text.split("\n")
    end = _entry_end(lines, next(i for i, line in enumerate(lines) if line.startswith(f"{key}:")))
    return "\n".join([*lines[:end], *entry.rstrip("\n").split("\n"), *lines[end:]])


def _named(doc: SpecDocument, family: str, name: str) -> str:
    """The ops spec's text with ``name`` after the last name of ``family``'s list."""
    text = _read(doc)
    lines = text.split("\n")
    names = doc.data["families"][family]["names"]
    last = doc.mark(("families", family, "names", len(names) - 1))
    row, column = last.line - 1, last.column - 1
    line = lines[row]
    if line[:column].strip() == "-":  # a block list: one name per line
        lines.insert(row + 1, f"{line[:column - 2]}- {name}")
    else:
        at = column + len(str(names[-1]))
        lines[row] = f"{line[:at]}, {name}{line[at:]}"
    return "\n".join(lines)


@dataclass(frozen=True)
class _Fit:
    """How a new op of a family is made: its emulator bindings copied from those of the
    family's op ``model`` (its ``init`` and ``call`` at the first API level spelling it), whose
    call passes the emulator a function of the math spec taking ``arity`` operands and
    ``attributes``, which a new op states as its own math."""

    model: OpSemantics
    init: str | None
    call: str
    arity: int
    attributes: tuple[str, ...]


def _fit(project: Project, model: OpSemantics, spelling: str) -> _Fit | str:
    """How a new op like ``model`` is made, or why none can be: an op's math is a spec edit
    only where the emulator takes it from the math spec, i.e. where each call of the family
    binds a routine taking a function of one of the emulation's math tables; a runtime
    primitive, a function of the glue's own (C++) or a routine taking no function would
    compute the model's math, not the new op's. ``spelling``: the spelling spec, as shown."""
    emulation = project.api.emulation
    if emulation is None:
        return "the specs have no emulation spec, whose bindings a new op's are made like"
    spelled = [(level.level, key, s) for level in project.spelling.levels for key in model.spelling_keys if (s := level.spelling(model.name, key)) is not None]
    if not spelled:
        return f"its op {model.name!r} has no entry under `ops:` of {spelling} (the generated kernel makes its calls itself, under `kernel:`), so there is no op call a new op's could be made like"
    calls = [(level, key, s.init, s.call) for level, key, s in spelled if s.absent is None]
    if not calls:
        return f"no API level has a function for its op {model.name!r} (`absent:` in {spelling} at every level), so there is no call a new op's could be made like"
    math = emulation.math
    by_function = dict(emulation.bindings)
    found: set[tuple[int, tuple[str, ...]]] = set()
    for level, key, _, call in calls:
        where = f"its {key} call {call.function} (API level {level!r})"
        bindings = by_function.get(call.function, ())
        if not bindings:
            return f"{where} has no emulator binding"
        for binding in bindings:
            text, routine = binding.call.text, binding.call.function
            computation = math.computation(binding.computes) if binding.computes else None
            if computation is None:
                return f"{where} binds {text}, which computes no math of {math.file}"
            if isinstance(computation, math_spec.Primitive):
                return (
                    f"{where} computes the runtime primitive {computation.name!r} ({computation.meaning}), a datapath of the emulator's "
                    f"own C++, not an expression a new op could state in {math.file}"
                )
            if not binding.passes_function:
                return f"{where} binds {text}, a routine that takes no math function: the emulator would compute what {routine} does, whatever math a new op stated"
            arity = emulation.table_arity(routine)
            if arity is None:
                return (
                    f"{where} binds {text}, whose `function` is one of the emulator glue's own ({emulation.namespace}::math::{routine.rpartition('::')[2]}, "
                    f"C++), not a function of {math.file}: a new op's would need C++ in the emulator glue"
                )
            found.add((arity, computation.attributes))
    if len(found) > 1:
        return f"its calls take math functions of different forms ({', '.join(math_spec.FORMS[a] for a, _ in sorted(found))}), which one new function cannot be"
    ((arity, attributes),) = found
    _, _, init, call = calls[0]
    return _Fit(model, init.function if init is not None else None, call.function, arity, attributes)


def _scaffoldable(project: Project, spelling: str) -> list[str]:
    return [family for family, ops in sorted(_families(project).items()) if isinstance(_fit(project, ops[0], spelling), _Fit)]


def _function_of(fit: _Fit, base: str) -> str:
    """tt-metal's usual name of an op's function: <base>_tile, <base>_binary_tile for a binary."""
    return f"{base}_binary_tile" if fit.arity > 1 else f"{base}_tile"


def _spelling_entry(fit: _Fit, name: str, function: str) -> str:
    """The op's spelling with its init and call left to fill in, keyed as its family's ops."""
    op = fit.model
    dst_operands = [o.name for o, r in zip(op.operands, op.strategies[0].routes, strict=False) if r is Route.DST]
    # A unary works in place ({dst} is its operand's slot); a binary names both operands.
    args = [*(f"{{{o}.dst}}" for o in dst_operands), "{dst}"] if len(dst_operands) > 1 else ["{dst}"]
    args += [f"{{attr.{a}}}" for a in fit.attributes]
    lines = [f"  {name}:"]
    for key in op.spelling_keys:
        lines += [
            f"    {key}:",
            f"      init:  # to fill in: its tt-metal init, e.g. {function}_init()",
            f"      call:  # to fill in: its tt-metal call, e.g. {function}({', '.join(args)})",
        ]
    return "\n".join(lines)


def _binding_entry(project: Project, fit: _Fit, function: str, math: str) -> tuple[str, tuple[str, ...]]:
    """Emulator bindings of ``function`` and its init, made like those of the calls of the
    family's op: the call computes ``math``, the new op's own (text, functions)."""
    emulation = project.api.emulation
    assert emulation is not None  # a _Fit is made only from an emulation's bindings
    bindings = dict(emulation.bindings)
    lines = []
    functions = []
    for model, suffix in ((fit.init, "_init"), (fit.call, "")):
        found = bindings.get(model, ()) if model is not None else ()
        if not found:
            continue
        raw = found[0]
        new = f"{function}{suffix}"
        call = raw.call.text
        functions.append(new)
        lines.append(f"  {new}: {{computes: {math}, call: \"{call}\"}}" if raw.computes else f"  {new}: {call}")
    return "\n".join(lines), tuple(functions)


def _math_entry(project: Project, fit: _Fit, math: str) -> Scaffold | None:
    """The math spec with ``math`` to state in the form the family's calls pass it (its
    operands and the attributes it reads), when it lacks the function (None: it has it)."""
    if project.math.function(math) is not None or project.math.display is None:
        return None
    path = Path(project.math.display)
    original = path.read_text(encoding="utf-8")
    form = math_spec.FORMS[fit.arity]
    attributes = [f"its attribute {a}" for a in fit.attributes]
    reads = " and ".join([*math_spec.OPERANDS[form], *attributes]) or "nothing (a constant)"
    entry = f"  {math}:\n    {form}:  # to fill in: what it computes, an expression of {reads}"
    review: tuple[str, ...] = ()
    if fit.attributes:
        entry += f"\n    attributes: [{', '.join(fit.attributes)}]"
        review = (f"functions.{math}.attributes",)
    return Scaffold(path, _inserted(original, "functions", entry), (f"functions.{math}.{form}",), review, original, f"the math of {math!r}")


def new_op(specs: Path, name: str, kind: str, function: str | None = None) -> list[Scaffold]:
    """A new op: its name in the family ``kind`` names (``unary``, ``binary`` or a family), its
    spelling with init and call to fill in, emulator bindings of the API function it calls
    (``function``, by default tt-metal's usual name for the op) made like its family's, and
    its math to state when the math spec lacks it."""
    documents = load_specs(specs)
    _check_name(name, "op", _op_names(documents))
    project, errors = _op_project(documents)
    family = _family_of_kind(project, kind)
    model = _families(project)[family][0]
    spelling_doc = _one(documents, SPELLING_KIND)
    fit = _fit(project, model, spelling_doc.display)
    if isinstance(fit, str):
        can = ", ".join(_scaffoldable(project, spelling_doc.display)) or "none"
        raise UsageError(f"ops of family {family!r} cannot be scaffolded: {fit}; add one by hand (CONTRIBUTING.md), or give --kind a family that can be: {can}")
    base = name.removeprefix("tile_")
    math = base
    function = function or _function_of(fit, base)
    if not _NAME.match(function):
        raise UsageError(f"--function {function!r} is no C++ function name (lower case letters, digits and '_')")
    scaffolds: list[Scaffold] = []
    by_file = {d.display: d for d in documents}
    edit = "add the op by hand (CONTRIBUTING.md)"
    ops_doc = _copyable(by_file[model.mark.file], edit)
    original = _read(ops_doc)
    scaffolds.append(Scaffold(Path(ops_doc.display), _named(ops_doc, family, name), (), (), original, f"{name!r} to family {family!r}"))
    _copyable(spelling_doc, edit)
    if name in spelling_doc.data["ops"]:
        raise UsageError(f"{spelling_doc.display} already spells an op named {name!r}; remove it or choose another name")
    original = _read(spelling_doc)
    keys = tuple(f"ops.{name}.{key}.{part}" for key in model.spelling_keys for part in ("init", "call"))
    scaffolds.append(Scaffold(Path(spelling_doc.display), _inserted(original, "ops", _spelling_entry(fit, name, function)), keys, (), original, f"the spelling of {name!r}"))
    bindings, functions = _binding_entry(project, fit, function, math)
    emulation_doc = next(iter(_of_kind(documents, EMULATION_KIND)), None)
    if bindings and emulation_doc is not None:
        _copyable(emulation_doc, edit)
        taken = [f for f in functions if f in emulation_doc.data["functions"]]
        if taken:
            raise UsageError(f"{emulation_doc.display} already binds {', '.join(map(repr, taken))}; an op scaffold adds bindings only for functions without one")
        original = _read(emulation_doc)
        notes = []
        for level in project.api.levels:
            undeclared = [f for f in functions if not level.forms(f, KernelKind.COMPUTE)]
            if not undeclared:
                continue
            release = level.release
            found = {f: release_headers.declaring_header(release.sha256, ("api/compute/",), f) for f in undeclared} if release else {}
            have = [f for f, h in found.items() if isinstance(h, str)]
            adds = " ".join(f"--add {f}" for f in (have or undeclared))
            where = f" ({release.name} declares {', '.join(have)})" if have and release else ""
            notes.append(f"API level {level.level!r} does not declare {', '.join(undeclared)}{where}: `ttlgen upstream import --level {level.level} {adds}`")
        scaffolds.append(
            Scaffold(
                Path(emulation_doc.display), _inserted(original, "functions", f"  # {name}\n{bindings}"), (),
                tuple(f"functions.{f}" for f in functions), original, f"emulator bindings of {', '.join(functions)}", tuple(notes),
            )
        )
    stated = _math_entry(project, fit, math)
    if stated is not None:
        _copyable(by_file[str(stated.path)], edit)
        scaffolds.append(stated)
    return _noting(scaffolds, errors)


def _one(documents: Sequence[SpecDocument], kind: str) -> SpecDocument:
    found = _of_kind(documents, kind)
    if not found:
        raise UsageError(f"no spec file is a {kind} spec, which ttlgen new op adds to")
    return found[0]


# The files `new kernel` and `new arch` write: an op is made without them while their blanks
# are empty, as no op's model depends on a kernel, an architecture or a target.
_UNFINISHED_KINDS = frozenset({KERNEL_KIND, ARCHITECTURE_KIND, TARGET_KIND})


def _op_project(documents: Sequence[SpecDocument]) -> tuple[Project, tuple[Diagnostic, ...]]:
    """The project an op is modelled on, and the errors of the specs: when they have errors
    only in kernel, architecture and target files, the project of the others."""
    errors, project = _errors(documents)
    if project is not None:
        return project, errors
    kinds = {d.display: d.kind for d in documents}
    blocking = [e for e in errors if kinds.get(e.mark.file) not in _UNFINISHED_KINDS]
    if not blocking:
        bad = {e.mark.file for e in errors}
        try:
            return build_project([d for d in documents if d.display not in bad]), errors
        except SpecErrors as exc:
            blocking = list(exc.diagnostics)
    files = sorted({e.mark.file or "?" for e in blocking})
    raise UsageError(
        f"a new op is made from the model of the op family it extends, and the specs have {len(blocking)} error(s) "
        f"outside unfinished kernel, architecture and target files (in {', '.join(files)}); fix them first: `ttlgen validate` lists them"
    )
