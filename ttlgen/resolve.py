"""`ttlgen resolve KERNEL.yaml`: resolve one kernel description with the generated resolver.

The resolver is not reimplemented here: the ``ttl_kernel_config`` package is rendered
from the *current* specs (exactly what ``ttlgen build`` writes) and imported under a
name derived from its content hash, in memory, or from ``out_dir/<hash>/`` when a
cache directory is given. This module only parses the kernel description and prints.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ttlgen import cache
from ttlgen.emit._base import EmitContext, default_templates_dir
from ttlgen.emit._header import finalize
from ttlgen.emit.kernel_config import PACKAGE, render_package
from ttlgen.errors import (
    Diagnostic,
    DiagnosticSink,
    ExitCode,
    Mark,
    SpecErrors,
    UsageError,
    describe_value,
    format_key_path,
)
from ttlgen.model import ops as ops_model
from ttlgen.model import targets as targets_model
from ttlgen.spec.document import Positions
from ttlgen.spec.load import decode_utf8
from ttlgen.spec.yaml_source import YamlLoadError, parse_yaml

KERNEL_KEYS = ("target", "device_arch", "math_fidelity", "options", "attributes", "dfbs", "ops")
OP_KEYS = ("id", "op", "operands", "result", "attrs")
STRATEGY_ATTR = "strategy"

_LOADED: dict[str, types.ModuleType] = {}


# ------------------------------------------------------------------ generated package


class _InMemoryPackage(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a package from a {module name: source} mapping."""

    def __init__(self, name: str, sources: dict[str, str]) -> None:
        self.name = name
        self.sources = sources

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.sources:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=fullname == self.name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        source = self.sources[module.__name__]
        if module.__name__ == self.name:
            module.__path__ = []
        exec(compile(source, f"<{module.__name__}>", "exec"), module.__dict__)


def _models(specs_dir: Path) -> tuple[ops_model.OpsModel, targets_model.TargetsModel]:
    from ttlgen.pipeline import validate_specs

    documents = validate_specs(specs_dir)
    sink = DiagnosticSink()
    ops = ops_model.build(documents, sink)
    targets = targets_model.build(documents, sink, ops.vocabulary)
    sink.raise_if_any()
    return ops, targets


def render_sources(
    ops: ops_model.OpsModel, targets: targets_model.TargetsModel, templates_dir: Path | None = None
) -> dict[str, str]:
    """The package's files for these models, exactly as `ttlgen build` writes them."""
    ctx = EmitContext(templates_dir or default_templates_dir())
    prefix = PACKAGE + "/"
    return {
        file.path[len(prefix):]: finalize(file).decode("utf-8")
        for file in render_package(ops, targets, ctx)
    }


def package_sources(specs_dir: Path, templates_dir: Path | None = None) -> dict[str, str]:
    """Render the package for the specs: {file name in the package: text}."""
    ops, targets = _models(specs_dir)
    return render_sources(ops, targets, templates_dir)


def _package_cache() -> Path | None:
    # Importing from files lets Python keep the bytecode, which costs far less than
    # compiling the package's sources on every run; in memory when caching is off.
    return cache.cache_root() / "kernel_config" if cache.enabled() else None


def load_generated_package(specs_dir: Path, out_dir: Path | None = None) -> types.ModuleType:
    """Import the resolver generated from ``specs_dir`` (cached by content hash)."""
    return import_package(package_sources(specs_dir), out_dir or _package_cache())


def load_package_for_models(
    ops: ops_model.OpsModel, targets: targets_model.TargetsModel, templates_dir: Path | None = None
) -> types.ModuleType:
    """Import the resolver generated from already-built models (for other build steps,
    e.g. the kernel generator resolving each kernel's plan)."""
    return import_package(render_sources(ops, targets, templates_dir), _package_cache())


def import_package(files: dict[str, str], out_dir: Path | None = None) -> types.ModuleType:
    """Import a rendered package under a name derived from its content hash: in memory,
    or from ``out_dir/<hash>/ttl_kernel_config`` when a cache directory is given."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    key = digest.hexdigest()[:16]
    root = None
    if out_dir is not None:
        root = out_dir / key / "ttl_kernel_config"
        try:
            root.mkdir(parents=True, exist_ok=True)
            for file, text in files.items():
                target = root / file
                if not target.exists() or target.read_text(encoding="utf-8") != text:
                    # Write then rename: another process may be importing the same package.
                    partial = target.with_name(f".{target.name}.{os.getpid()}")
                    partial.write_text(text, encoding="utf-8")
                    os.replace(partial, target)
        except OSError:
            root = None  # an unusable cache only costs speed: import from memory
    if key in _LOADED:
        return _LOADED[key]
    name = f"_ttlgen_kernel_config_{key}"
    if root is not None:
        spec = importlib.util.spec_from_file_location(name, root / "__init__.py", submodule_search_locations=[str(root)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    else:
        sources = {
            (name if file == "__init__.py" else f"{name}.{file.removesuffix('.py')}"): text
            for file, text in files.items()
            if file.endswith(".py")
        }
        finder = _InMemoryPackage(name, sources)
        sys.meta_path.insert(0, finder)
        try:
            module = importlib.import_module(name)
        finally:
            sys.meta_path.remove(finder)
    _LOADED[key] = module
    return module


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




def parse_kernel(path: Path, kc: types.ModuleType) -> tuple[Any, dict[str, Any]]:
    """Kernel description -> (KernelDescription, settings); raises KernelFormatError."""
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
    elements = {e.value: e for e in kc.ElementType}
    known_types = ", ".join(elements)
    dfbs: dict[int, Any] = {}
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
    ops = []
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
        operands = []
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
                    operands.append(kc.ValueOperand(value))
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
                    operands.append(kc.DfbOperand(dfb, (tile[0], tile[1])))
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
                if attr not in {s.value for s in kc.Strategy}:
                    r.error((*base, "attrs", key), f"{attr!r} is not one of {', '.join(s.value for s in kc.Strategy)}")
                strategy = attr
            else:
                attrs[str(key)] = attr
        if op_id is not None and op_name is not None:
            ops.append(kc.TileOp(op_id, op_name, tuple(operands), result, attrs, strategy))
    if r.errors:
        raise KernelFormatError(r.errors)
    return kc.KernelDescription(dfbs=dfbs, ops=tuple(ops), name=path.name), settings


# ---------------------------------------------------------------------------- command


def run_resolve(
    kernel_path: Path,
    target: str | None,
    as_json: bool,
    specs_dir: Path,
    out_dir: Path | None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Resolve one kernel description; returns the exit code (0 ok, 1 rejected, 2 bad input).

    ``out_dir``: optional cache directory for the rendered package (default: in memory).
    """
    try:
        kc = load_generated_package(specs_dir, out_dir)
    except SpecErrors as exc:
        return _bad_input(list(exc.diagnostics), as_json, stdout, stderr)
    except UsageError as exc:
        return _bad_input([Diagnostic(Mark(str(specs_dir)), str(exc))], as_json, stdout, stderr)
    try:
        kernel, settings = parse_kernel(kernel_path, kc)
    except KernelFormatError as exc:
        return _bad_input(exc.diagnostics, as_json, stdout, stderr)
    where = str(kernel_path)
    chosen = target if target is not None else settings.get("target")
    result = kc.resolve_kernel(
        kernel,
        target=chosen,
        device_arch=settings.get("device_arch"),
        options=settings["options"],
        attributes=settings["attributes"],
    )
    descriptor: dict[str, object] | None = None
    if isinstance(result, kc.Plan):
        try:
            fields = kc.runtime_fields(result, settings.get("math_fidelity"))
            descriptor = fields.to_json() if fields is not None else None
        except kc.TranslationError as exc:
            result = kc.ResolveFailure((kc.Diagnostic(None, None, str(exc)),))
    if isinstance(result, kc.ResolveFailure):
        if as_json:
            stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
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
        lines.append(f"  op {op_id!r}: {kc.STRATEGY_ATTRIBUTE} = {strategy.value}")
    lines.append(f"  fp32_dest_acc_en = {str(plan.fp32_dest_acc_en).lower()}")
    lines.append(f"  dst_full_sync_en = {str(plan.dst_full_sync_en).lower()}")
    lines.append(f"  ttl.unpack_to_dest_fp32 = {list(plan.unpack_to_dest_fp32)}")
    if descriptor is not None:
        lines.append("  runtime descriptor:")
        for key, value in descriptor.items():
            lines.append(f"    {key} = {_compact(value)}")
    stdout.write("\n".join(lines) + "\n")
    return ExitCode.OK


def _compact(value: object) -> str:
    if isinstance(value, list) and value and all(v == value[0] for v in value):
        return f"[{value[0]}] * {len(value)}"
    if isinstance(value, list) and len(value) > 8:
        special = {i: v for i, v in enumerate(value) if v != value[-1]}
        return f"{len(value)} entries, {value[-1]} except {special}"
    return json.dumps(value)


def _bad_input(diagnostics: list[Diagnostic], as_json: bool, stdout: IO[str], stderr: IO[str]) -> int:
    if as_json:
        payload = {"status": "error", "errors": [
            {"op": None, "operand": None, "message": d.message, "notes": [],
             "file": d.mark.file, "line": d.mark.line, "column": d.mark.column,
             "path": format_key_path(d.mark.path) if d.mark.path else None}
            for d in diagnostics
        ]}
        stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        stderr.write("\n".join(d.format() for d in diagnostics) + "\n")
    return ExitCode.BAD_INPUT
