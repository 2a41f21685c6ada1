"""`ttlgen resolve KERNEL.yaml`: resolve one kernel description with the resolver library.

The resolver is not reimplemented here: the tables are built from the *current* specs
exactly as `ttlgen build` builds them (:mod:`ttlgen.plan.tables`) and handed to
:mod:`ttlgen.resolver`. This module only parses the kernel description and prints.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ttlgen.errors import (
    Diagnostic,
    DiagnosticSink,
    ExitCode,
    Mark,
    SpecErrors,
    UsageError,
    describe_value,
    error_envelope,
)
from ttlgen.model import ops as ops_model
from ttlgen.model import targets as targets_model
from ttlgen.plan.tables import resolver_tables
from ttlgen.resolver import (
    STRATEGY_ATTRIBUTE,
    Catalog,
    DfbOperand,
    KernelDescription,
    Operand,
    Plan,
    ResolveFailure,
    TileOp,
    TranslationError,
    ValueOperand,
    runtime_fields,
)
from ttlgen.resolver import Diagnostic as ResolverDiagnostic
from ttlgen.spec.document import Positions
from ttlgen.spec.load import decode_utf8, load_specs
from ttlgen.spec.yaml_source import YamlLoadError, parse_yaml
from ttlgen.validate.documents import validate_documents

KERNEL_KEYS = ("target", "device_arch", "math_fidelity", "options", "attributes", "dfbs", "ops")
OP_KEYS = ("id", "op", "operands", "result", "attrs")
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


class KernelFormatError(Exception):
    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("\n".join(d.format() for d in diagnostics))
        self.diagnostics = diagnostics


class _Reader:
    """Checks a kernel description's shape, collecting located errors."""

    def __init__(self, file: str, positions: Positions) -> None:
        self.file = file
        self.positions = positions
        self.errors: list[Diagnostic] = []

    def mark(self, path: tuple[str | int, ...]) -> Mark:
        line, column = self.positions.value(path)
        return Mark(self.file, line, column, path)

    def key_mark(self, path: tuple[str | int, ...]) -> Mark:
        line, column = self.positions.key(path)
        return Mark(self.file, line, column, path)

    def error(self, path: tuple[str | int, ...], message: str, at_key: bool = False) -> None:
        self.errors.append(Diagnostic(self.key_mark(path) if at_key else self.mark(path), message))

    def mapping(self, value: Any, path: tuple[str | int, ...], allowed: Sequence[str] | None = None) -> dict[Any, Any]:
        if not isinstance(value, dict):
            self.error(path, f"expected a mapping, got {describe_value(value)}")
            return {}
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    self.error((*path, key), f"unknown key {key!r}; valid keys: {', '.join(allowed)}", at_key=True)
        return value

    def string(self, value: Any, path: tuple[str | int, ...]) -> str | None:
        if not isinstance(value, str):
            self.error(path, f"expected a string, got {describe_value(value)}")
            return None
        return value

    def integer(self, value: Any, path: tuple[str | int, ...]) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(path, f"expected an integer, got {describe_value(value)}")
            return None
        return value


def parse_kernel(path: Path, catalog: Catalog) -> tuple[KernelDescription, dict[str, Any], Positions]:
    """Kernel description -> (KernelDescription, settings, positions); raises KernelFormatError."""
    file = str(path)
    try:
        text = decode_utf8(path.read_bytes(), file)
        data, positions = parse_yaml(text, file)
    except SpecErrors as exc:
        raise KernelFormatError(list(exc.diagnostics)) from None
    except YamlLoadError as exc:
        raise KernelFormatError([exc.diagnostic]) from None
    except OSError as exc:
        raise KernelFormatError([Diagnostic(Mark(file), f"cannot read the kernel description: {exc.strerror}")]) from None
    r = _Reader(file, positions)
    top = r.mapping(data, (), KERNEL_KEYS)
    if isinstance(data, dict) and "ops" not in data:
        r.error((), "missing required key 'ops'")
    settings: dict[str, Any] = {}
    for key in ("target", "device_arch", "math_fidelity"):
        if key in top:
            settings[key] = r.string(top[key], (key,))
    settings["options"] = r.mapping(top.get("options", {}), ("options",))
    settings["attributes"] = r.mapping(top.get("attributes", {}), ("attributes",))
    elements = {e.name: e.name for e in catalog.tables.elements}
    known_types = ", ".join(elements)
    strategies = [s.name for s in catalog.tables.strategies]
    dfbs: dict[int, str] = {}
    for key, value in r.mapping(top.get("dfbs", {}), ("dfbs",)).items():
        index = key if isinstance(key, int) and not isinstance(key, bool) else None
        if isinstance(key, str) and key.isdigit():
            index = int(key)
        if index is None:
            r.error(("dfbs", key), f"a dataflow buffer index is a non-negative integer, got {key!r}", at_key=True)
            continue
        if value not in elements:
            r.error(("dfbs", key), f"unknown element type {describe_value(value)}; known: {known_types}")
            continue
        dfbs[index] = elements[value]
    raw_ops = top.get("ops", [])
    if not isinstance(raw_ops, list):
        r.error(("ops",), f"expected a list, got {describe_value(raw_ops)}")
        raw_ops = []
    ops: list[TileOp] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_ops):
        base: tuple[str | int, ...] = ("ops", i)
        body = r.mapping(raw, base, OP_KEYS)
        if not body:
            continue
        for required in ("id", "op"):
            if required not in body:
                r.error(base, f"missing required key {required!r}")
        op_id = r.string(body.get("id", ""), (*base, "id")) if "id" in body else None
        op_name = r.string(body.get("op", ""), (*base, "op")) if "op" in body else None
        if op_id is not None:
            if op_id in seen:
                r.error((*base, "id"), f"duplicate op id {op_id!r}")
            seen.add(op_id)
        operands: list[Operand] = []
        raw_operands = body.get("operands", [])
        if not isinstance(raw_operands, list):
            r.error((*base, "operands"), f"expected a list, got {describe_value(raw_operands)}")
            raw_operands = []
        for k, raw_operand in enumerate(raw_operands):
            opath = (*base, "operands", k)
            operand = r.mapping(raw_operand, opath)
            if "value" in operand:
                for key in operand:
                    if key != "value":
                        r.error((*opath, key), f"unknown key {key!r} in a value operand; valid keys: value", at_key=True)
                value = r.string(operand["value"], (*opath, "value"))
                if value is not None:
                    operands.append(ValueOperand(value))
            elif "dfb" in operand:
                for key in operand:
                    if key not in ("dfb", "tile"):
                        r.error((*opath, key), f"unknown key {key!r} in a dataflow-buffer operand; valid keys: dfb, tile", at_key=True)
                dfb = r.integer(operand["dfb"], (*opath, "dfb"))
                tile = operand.get("tile", [0, 0])
                if not (isinstance(tile, list) and len(tile) == 2 and all(isinstance(t, int) and not isinstance(t, bool) for t in tile)):
                    r.error((*opath, "tile"), f"a tile coordinate is a list of two integers, got {describe_value(tile)}")
                    tile = [0, 0]
                if dfb is not None:
                    operands.append(DfbOperand(dfb, (tile[0], tile[1])))
            elif operand:
                r.error(opath, "an operand is {dfb: N, tile: [i, j]} or {value: ID}")
        result = None
        if "result" in body:
            if body["result"] in elements:
                result = elements[body["result"]]
            else:
                r.error((*base, "result"), f"unknown element type {describe_value(body['result'])}; known: {known_types}")
        attrs: dict[str, str] = {}
        strategy: str | None = None
        for key, value in r.mapping(body.get("attrs", {}), (*base, "attrs")).items():
            attr = r.string(value, (*base, "attrs", key))
            if attr is None:
                continue
            if key == STRATEGY_ATTR:
                if attr not in strategies:
                    r.error((*base, "attrs", key), f"{attr!r} is not one of {', '.join(strategies)}")
                strategy = attr
            else:
                attrs[str(key)] = attr
        if op_id is not None and op_name is not None:
            ops.append(TileOp(op_id, op_name, tuple(operands), result, attrs, strategy))
    if r.errors:
        raise KernelFormatError(r.errors)
    return KernelDescription(dfbs=dfbs, ops=tuple(ops), name=path.name), settings, positions


# ---------------------------------------------------------------------------- command


def run_resolve(
    kernel_path: Path,
    target: str | None,
    as_json: bool,
    specs_dir: Path,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Resolve one kernel description; returns the exit code (0 ok, 1 rejected, 2 bad input)."""
    try:
        catalog = load_catalog(specs_dir)
        kernel, settings, positions = parse_kernel(kernel_path, catalog)
    except SpecErrors as exc:
        return _bad_input(exc.diagnostics, as_json, stdout, stderr)
    except UsageError as exc:
        return _bad_input([Diagnostic(Mark(str(specs_dir)), str(exc))], as_json, stdout, stderr)
    except KernelFormatError as exc:
        return _bad_input(exc.diagnostics, as_json, stdout, stderr)
    where = str(kernel_path)
    chosen = target if target is not None else settings.get("target")
    result = catalog.resolve_kernel(
        kernel,
        target=chosen,
        device_arch=settings.get("device_arch"),
        options=settings["options"],
        attributes=settings["attributes"],
    )
    descriptor: dict[str, object] | None = None
    if isinstance(result, Plan):
        try:
            fields = runtime_fields(result, settings.get("math_fidelity"))
            descriptor = fields.to_json() if fields is not None else None
        except TranslationError as exc:
            result = ResolveFailure((ResolverDiagnostic(None, None, str(exc)),))
    if isinstance(result, ResolveFailure):
        if as_json:
            locate = _Locator(where, positions, kernel)
            stdout.write(json.dumps(error_envelope(locate.record(e) for e in result.errors), indent=2) + "\n")
        else:
            stderr.write(result.format(where) + "\n")
        return ExitCode.FAILED
    plan = result
    if as_json:
        payload = {
            "status": "ok",
            "target": plan.target,
            "plan": plan.to_json(),
            "warnings": [w.to_json() for w in plan.warnings],
            "descriptor": descriptor,
        }
        stdout.write(json.dumps(payload, indent=2) + "\n")
        return ExitCode.OK
    for warning in plan.warnings:
        stderr.write(warning.format(where) + "\n")
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
    stdout.write("\n".join(lines) + "\n")
    return ExitCode.OK


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


def _bad_input(diagnostics: Sequence[Diagnostic], as_json: bool, stdout: IO[str], stderr: IO[str]) -> int:
    if as_json:
        stdout.write(json.dumps(error_envelope(d.to_json() for d in diagnostics), indent=2) + "\n")
    else:
        stderr.write("\n".join(d.format() for d in diagnostics) + "\n")
    return ExitCode.BAD_INPUT
