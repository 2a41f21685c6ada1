"""`ttlgen resolve KERNEL`: resolve a kernel description, a kernel of the specs by name or
every kernel of a kernel spec file with the resolver library.

The resolver is not reimplemented here: the tables are built from the *current* specs
exactly as `ttlgen build` builds them (:mod:`ttlgen.plan.tables`) and handed to
:mod:`ttlgen.resolver`. This module only reads the kernel argument and prints.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ttlgen.errors import (
    Diagnostic,
    DiagnosticSink,
    ExitCode,
    Mark,
    SpecErrors,
    UsageError,
    did_you_mean,
    emit_json,
    error_envelope,
)
from ttlgen.model import ops as ops_model
from ttlgen.model import targets as targets_model
from ttlgen.model.project import DESCRIPTION_KIND
from ttlgen.plan.tables import resolver_tables
from ttlgen.resolver import (
    STRATEGY_ATTRIBUTE,
    Catalog,
    DfbOperand,
    KernelDescription,
    Operand,
    Plan,
    ResolveFailure,
    TargetEnvironment,
    TargetError,
    TileOp,
    TranslationError,
    ValueOperand,
    normalize_policy,
    resolve,
    runtime_fields,
)
from ttlgen.resolver import Diagnostic as ResolverDiagnostic
from ttlgen.spec.document import Positions, SpecDocument
from ttlgen.spec.files import SPEC_SUFFIXES, display_path
from ttlgen.spec.load import decode_utf8, identify, load_specs, parse_text, read_bytes
from ttlgen.validate.documents import validate_documents

STRATEGY_ATTR = "strategy"


def load_catalog(specs_dir: Path) -> Catalog:
    """The resolver over the tables of these specs; raises SpecErrors for bad specs."""
    documents = load_specs(specs_dir)
    diagnostics = validate_documents(documents)
    if diagnostics:
        raise SpecErrors(diagnostics)
    sink = DiagnosticSink()
    ops = ops_model.build(documents, sink)
    targets = targets_model.build(documents, sink, ops.vocabulary)
    sink.raise_if_any()
    return Catalog(resolver_tables(ops, targets).tables)


# ------------------------------------------------------------------ kernel description

DESCRIPTION_VERSION = "v1"
DESCRIPTION_ID = f"{DESCRIPTION_KIND}/{DESCRIPTION_VERSION}"
EMPTY_DESCRIPTION = "empty kernel description: expected a mapping with 'ops' (and 'dfbs', 'target', ...)"
_NOT_A_FILE = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


@dataclass(frozen=True)
class Description:
    """A parsed kernel description: the resolver's input, the settings around it, and
    where each of its values was written."""

    kernel: KernelDescription
    target: str | None
    device_arch: str | None
    math_fidelity: str | None
    options: dict[str, object]
    attributes: dict[str, object]
    document: SpecDocument


def kernel_argument(argument: Path) -> str | SpecDocument:
    """What KERNEL names: a kernel description or kernel spec file (read), or a kernel
    name (to look up in the specs); raises UsageError for a path that names neither.

    Told apart by ``stat``, which never opens the path: opening a FIFO would block until
    something writes to it. A path that exists but is no regular file is refused saying
    what it is (``/dev/null`` is a character device, not an empty description)."""
    try:
        mode = argument.stat().st_mode
    except FileNotFoundError:
        if argument.suffix in SPEC_SUFFIXES or "/" in str(argument):
            raise UsageError(f"cannot read the kernel description {argument}: no such file") from None
        return str(argument)
    except OSError as exc:
        raise UsageError(f"cannot read the kernel description {argument}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        what = next((name for test, name in _NOT_A_FILE if test(mode)), "not a regular file")
        raise UsageError(
            f"{argument} is {what}, not a regular file: give a kernel description, a kernel spec file or a kernel name"
        )
    return read_kernel_file(argument)


def read_kernel_file(path: Path) -> SpecDocument:
    """A kernel description or a kernel spec file as a located document, told apart by
    what it holds (its ``spec:`` value), read as YAML or TOML by its extension and within
    the limits of a spec file; raises SpecErrors, or UsageError for a spec of another kind."""
    from ttlgen.model.kernels import KIND as KERNEL_KIND

    file = display_path(path)
    raw = read_bytes(path, file)
    sha256 = hashlib.sha256(raw).hexdigest()
    text = decode_utf8(raw, file)
    if not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
        raise SpecErrors([Diagnostic(Mark(file, 1, 1), EMPTY_DESCRIPTION)])
    data, positions = parse_text(text, file, path.suffix)
    if data is None or data == {}:
        raise SpecErrors([Diagnostic(Mark(file, 1, 1), EMPTY_DESCRIPTION)])
    if isinstance(data, dict) and data.get("spec", DESCRIPTION_ID) != DESCRIPTION_ID:
        kind = identify(data, positions, file)  # a spec, with the header rules of one
        if kind.name != KERNEL_KIND:
            raise UsageError(f"{file} is a {kind.kind_id} spec, not a kernel spec or kernel description")
        document = SpecDocument(file, str(path), kind.name, kind.version, data, positions, sha256)
    else:  # a description, which may leave 'spec' out
        document = SpecDocument(file, file, DESCRIPTION_KIND, DESCRIPTION_VERSION, data, positions, sha256)
    problems = validate_documents([document])
    if problems:
        raise SpecErrors(problems)
    return document


def parse_kernel(doc: SpecDocument, catalog: Catalog) -> Description:
    """A schema-checked kernel description -> the resolver's input; raises SpecErrors with
    every problem, located. The schema (ttlgen.kernel_description/v1) checks the shape;
    names that depend on the specs (ops, element types, strategies, fidelities) are
    checked here."""
    data: dict[str, Any] = doc.data
    errors: list[Diagnostic] = []

    def unknown(path_: tuple[str | int, ...], what: str, name: str, known: Sequence[str]) -> None:
        errors.append(Diagnostic(doc.mark(path_), f"unknown {what} {name!r}{did_you_mean(name, known)}; known: {', '.join(known)}"))

    elements = [str(e.name) for e in catalog.tables.elements]
    strategies = [str(s.name) for s in catalog.tables.strategies]
    fidelities = [m.name for m in catalog.tables.runtime_enums.math_fidelity]
    op_names = sorted(catalog.tables.ops)

    def element(value: str, path_: tuple[str | int, ...]) -> str | None:
        if value in elements:
            return value
        unknown(path_, "element type", value, elements)
        return None

    dfbs: dict[int, str] = {}
    for key, value in data.get("dfbs", {}).items():
        found = element(value, ("dfbs", key))
        if found is not None:
            dfbs[int(key)] = found  # the schema admits ASCII decimal keys only
    fidelity = data.get("math_fidelity")
    if fidelity is not None and fidelity not in fidelities:
        unknown(("math_fidelity",), "math fidelity", fidelity, fidelities)
    ops: list[TileOp] = []
    first_id: dict[str, int] = {}
    for i, raw in enumerate(data["ops"]):
        base: tuple[str | int, ...] = ("ops", i)
        if raw["id"] in first_id:
            errors.append(Diagnostic(doc.mark((*base, "id")), f"duplicate op id {raw['id']!r} (first at ops[{first_id[raw['id']]}])"))
        first_id.setdefault(raw["id"], i)
        if raw["op"] not in catalog.tables.ops:
            errors.append(
                Diagnostic(
                    doc.mark((*base, "op")),
                    f"unknown op {raw['op']!r}: no ttlgen.ops spec declares it{did_you_mean(raw['op'], op_names)}",
                )
            )
        operands: list[Operand] = []
        for k, operand in enumerate(raw.get("operands", [])):
            if "value" in operand:
                operands.append(ValueOperand(operand["value"]))
            elif "map" in operand:
                try:
                    operands.append(DfbOperand(operand["dfb"], map=operand["map"]))
                except ValueError as exc:
                    errors.append(Diagnostic(doc.mark((*base, "operands", k, "map")), str(exc)))
            else:
                row, column = operand.get("tile", [0, 0])
                operands.append(DfbOperand(operand["dfb"], (row, column)))
        result = element(raw["result"], (*base, "result")) if "result" in raw else None
        # An integer attribute (an op's DST slot count) reaches the resolver as its text.
        attrs = {k: str(v) for k, v in raw.get("attrs", {}).items() if k != STRATEGY_ATTR}
        strategy = raw.get("attrs", {}).get(STRATEGY_ATTR)
        if strategy is not None and strategy not in strategies:
            unknown((*base, "attrs", STRATEGY_ATTR), "strategy", strategy, strategies)
        ops.append(TileOp(raw["id"], raw["op"], tuple(operands), result, attrs, strategy))
    if errors:
        raise SpecErrors(errors)
    return Description(
        KernelDescription(dfbs=dfbs, ops=tuple(ops), name=Path(doc.display).name),
        data.get("target"),
        data.get("device_arch"),
        fidelity,
        dict(data.get("options", {})),
        dict(data.get("attributes", {})),
        doc,
    )


# ---------------------------------------------------------------------------- command


@dataclass(frozen=True)
class _Outcome:
    """What one resolution printed: a plan (exit 0), a rejection (1) or bad input (2)."""

    code: ExitCode
    payload: dict[str, object]
    text: str
    errors: str = ""


def _check_target_option(catalog: Catalog, target: str | None) -> None:
    """Refuse a --target the catalog cannot select by the option's name: the value came
    from the command line, so no file location would lead the user to it."""
    if target is None:
        return
    try:
        catalog.select_target(target)
    except TargetError as exc:
        raise UsageError(f"--target: {exc.message}") from None  # the library's message suggests the closest names


def _architecture_of(catalog: Catalog) -> Callable[[str], str]:
    """``catalog.parse_architecture``, whose error for an unknown name also gives the closest
    names and the valid ones. The library's own text stays TT-Lang's, word for word (the
    generated C++ adapter prints the same); a description's reader needs the way out."""

    def parse(name: str) -> str:
        try:
            return catalog.parse_architecture(name)
        except TargetError as exc:
            architectures = catalog.tables.architectures
            typed = sorted(str(a.name) for a in architectures)
            runtime = sorted(a.runtime_name for a in architectures if a.runtime_name)
            hint = did_you_mean(name, [*typed, *runtime, *(r.lower() for r in runtime)])
            raise TargetError(
                f"{exc.message}{hint}; known architectures: {', '.join(typed)}, or the runtime's names for them: "
                f"{', '.join(runtime)} (or their lower case)"
            ) from None

    return parse


def _select(catalog: Catalog, desc: Description, target: str | None) -> TargetEnvironment | Diagnostic:
    """The description's target environment, or the error at the value it is about: a bad
    --target at the option (UsageError), a name the file gives at that name, and a target
    and device of different architectures at the device (naming --target when it chose)."""
    _check_target_option(catalog, target)
    own: list[tuple[str, str | None, Callable[[str], object]]] = [("device_arch", desc.device_arch, _architecture_of(catalog))]
    if target is None:
        own.append(("target", desc.target, catalog.select_target))
    for key, name, select in own:
        if name is None:
            continue
        try:
            select(name)
        except TargetError as exc:
            return Diagnostic(desc.document.mark((key,)), exc.message)  # the library's message suggests the closest names
    try:
        return catalog.select_target(target if target is not None else desc.target, desc.device_arch)
    except TargetError as exc:
        # Each name is known: what fails is the pair (two architectures, or a device whose
        # default target is rejected).
        at = "target" if target is None and desc.target is not None else ("device_arch" if desc.device_arch else None)
        where = desc.document.mark((at,)) if at is not None else Mark(desc.document.display)
        origin = " (--target)" if target is not None else ""
        return Diagnostic(where, f"{exc.message}{origin}")


def _resolve_description(catalog: Catalog, desc: Description, target: str | None) -> _Outcome:
    where = desc.document.display
    env = _select(catalog, desc, target)
    if isinstance(env, Diagnostic):
        return _Outcome(ExitCode.BAD_INPUT, error_envelope([env.to_json()]), "", env.format())
    policy = normalize_policy(desc.options, desc.attributes, env.table.generation)
    if isinstance(policy, ResolveFailure):  # malformed options or attributes: bad input
        return _failure(ExitCode.BAD_INPUT, desc, policy)
    result: Plan | ResolveFailure = resolve(desc.kernel, env, policy)
    descriptor: dict[str, object] | None = None
    if isinstance(result, Plan):
        try:
            fields = runtime_fields(result, desc.math_fidelity)
            descriptor = fields.to_json() if fields is not None else None
        except TranslationError as exc:
            # The plan cannot be written in the runtime's descriptor: say so at the buffer
            # the runtime cannot hold (the largest unpack-to-DST index), else at the file.
            located = _translation_error(desc, result, str(exc))
            return _Outcome(ExitCode.FAILED, error_envelope([located.to_json()]), "", located.format())
    if isinstance(result, ResolveFailure):
        return _failure(ExitCode.FAILED, desc, result)
    return _plan_outcome(where, result, descriptor)


def _translation_error(desc: Description, plan: Plan, message: str) -> Diagnostic:
    keys = [("dfbs", str(index)) for index in reversed(plan.unpack_to_dest_fp32)]
    path = next((key for key in keys if key in desc.document.positions.values), None)
    if path is None:
        return Diagnostic(Mark(desc.document.display), message)
    return Diagnostic(desc.document.key_mark(path), message)


def _failure(code: ExitCode, desc: Description, failure: ResolveFailure) -> _Outcome:
    """The errors' records, and the errors as a compiler prints them, each at the line of
    its op or operand."""
    locate = _Locator(desc.document.display, desc.document.positions, desc.kernel)
    text = "\n".join(e.format_located(locate.where) for e in failure.errors)
    return _Outcome(code, error_envelope(locate.record(e) for e in failure.errors), "", text)


def _plan_outcome(where: str, plan: Plan, descriptor: dict[str, object] | None) -> _Outcome:
    payload: dict[str, object] = {
        "status": "ok",
        "target": plan.target,
        "plan": plan.to_json(),
        "warnings": [w.to_json() for w in plan.warnings],
        "descriptor": descriptor,
    }
    lines = [f"{where}: kernel configuration for target {plan.target!r}"]
    for op_id, strategy in plan.strategies:
        lines.append(f"  op {op_id!r}: {STRATEGY_ATTRIBUTE} = {strategy}")
    lines.append(f"  fp32_dest_acc_en = {str(plan.fp32_dest_acc_en).lower()}")
    lines.append(f"  dst_full_sync_en = {str(plan.dst_full_sync_en).lower()}")
    lines.append(f"  ttl.unpack_to_dest_fp32 = {list(plan.unpack_to_dest_fp32)}")
    if descriptor is not None:
        lines.append("  runtime descriptor:")
        for key, value in descriptor.items():
            lines.append(f"    {key} = {_compact(value)}")
    warnings = "\n".join(w.format(where) for w in plan.warnings)
    return _Outcome(ExitCode.OK, payload, "\n".join(lines), warnings)


def _resolve_kernels(specs_dir: Path, kernel: str | SpecDocument, target: str | None) -> list[tuple[str, _Outcome]]:
    """A kernel of the specs by name, or every kernel of a kernel spec file, resolved as
    `ttlgen build` resolves them (element types inferred per sub-expression)."""
    from ttlgen.model.kernels import build_kernel
    from ttlgen.pipeline import load_project
    from ttlgen.plan.resolution import Resolver

    project = load_project(specs_dir)
    if isinstance(kernel, SpecDocument):
        sink = DiagnosticSink()
        kernels = [build_kernel(kernel, name, project.ops, project.spelling, sink) for name in kernel.data["kernels"]]
        sink.raise_if_any()
    else:
        by_name = {k.name: k for k in project.kernels.kernels}
        if kernel not in by_name:
            names = sorted(by_name)
            raise UsageError(
                f"{kernel!r} is neither a file nor a kernel of {specs_dir}{did_you_mean(kernel, names)}; kernels: {', '.join(names)}"
            )
        kernels = [by_name[kernel]]
    resolver = Resolver(project.ops, project.targets)
    _check_target_option(resolver.catalog, target)
    outcomes = []
    for k in kernels:
        if target is not None:
            k = dataclasses.replace(k, target=target)
        sink = DiagnosticSink()
        plan = resolver.resolve(k, sink)
        where = str(k.mark)
        if plan is None:
            text = "\n".join(d.format() for d in sink.diagnostics)
            payload = error_envelope(d.to_json() for d in sink.diagnostics)
            outcomes.append((k.name, _Outcome(ExitCode.FAILED, payload, "", text)))
            continue
        try:
            fields = runtime_fields(plan, k.math_fidelity)
        except TranslationError as exc:
            located = Diagnostic(k.target_mark, f"kernel {k.name!r}: {exc}")
            outcomes.append((k.name, _Outcome(ExitCode.FAILED, error_envelope([located.to_json()]), "", located.format())))
            continue
        outcomes.append((k.name, _plan_outcome(where, plan, fields.to_json() if fields is not None else None)))
    return outcomes


def run_resolve(kernel_path: Path, target: str | None, as_json: bool, specs_dir: Path) -> int:
    """Resolve one kernel description, a kernel of the specs by name, or every kernel of a
    kernel spec file; returns the exit code (0 ok, 1 rejected, 2 bad input), raises
    SpecErrors or UsageError for bad specs or a bad argument."""
    # The argument is read before the specs: a description too large or malformed
    # to resolve is refused without the cost of loading them.
    kernel = kernel_argument(kernel_path)
    if isinstance(kernel, SpecDocument) and kernel.kind == DESCRIPTION_KIND:
        catalog = load_catalog(specs_dir)
        outcomes = [("", _resolve_description(catalog, parse_kernel(kernel, catalog), target))]
    else:
        outcomes = _resolve_kernels(specs_dir, kernel, target)
    if as_json:
        if len(outcomes) == 1:
            emit_json(outcomes[0][1].payload)
        else:
            emit_json({"kernels": {name: o.payload for name, o in outcomes}})
    else:
        for _, outcome in outcomes:
            if outcome.errors:
                sys.stderr.write(outcome.errors + "\n")
            if outcome.text:
                sys.stdout.write(outcome.text + "\n")
    return max(o.code for _, o in outcomes)


class _Locator:
    """Places the resolver's diagnostics in the kernel description: at the op, or at the
    op's operand, or at the file for a function-level diagnostic."""

    def __init__(self, file: str, positions: Positions, kernel: KernelDescription) -> None:
        self.file = file
        self.positions = positions
        self.index = {op.id: i for i, op in enumerate(kernel.ops)}

    def mark(self, op: str | None, operand: int | None) -> Mark:
        if op is None or op not in self.index:
            return Mark(self.file)
        path: tuple[str | int, ...] = ("ops", self.index[op])
        if operand is not None and ("ops", self.index[op], "operands", operand) in self.positions.values:
            path = (*path, "operands", operand)
        line, column = self.positions.value(path)
        return Mark(self.file, line, column, path)

    def where(self, op: str | None, operand: int | None) -> str:
        return str(self.mark(op, operand))

    def record(self, error: ResolverDiagnostic) -> dict[str, object]:
        """The error record every command prints, with the resolver's op and operand."""
        notes = []
        for note in error.notes:
            located = Diagnostic(self.mark(note.op, note.operand), note.message).to_json()
            notes.append({**located, "op": note.op, "operand": note.operand})
        located = Diagnostic(self.mark(error.op, error.operand), error.message).to_json()
        return {**located, "notes": notes, "op": error.op, "operand": error.operand}


def _compact(value: object) -> str:
    if isinstance(value, list) and value and all(v == value[0] for v in value):
        return f"[{value[0]}] * {len(value)}"
    if isinstance(value, list) and len(value) > 8:
        special = {i: v for i, v in enumerate(value) if v != value[-1]}
        return f"{len(value)} entries, {value[-1]} except {special}"
    return json.dumps(value)
