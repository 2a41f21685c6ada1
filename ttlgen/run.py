"""`ttlgen run` and `ttlgen accuracy`: generated kernels on the device emulator.

A kernel is generated from the current specs (exactly what `ttlgen build` writes for it),
written to a scratch directory, compiled (cached by content hash) and run on fresh random
inputs with poisoned outputs. The result is compared with a float64 NumPy reference of
the kernel's body (the same block-level semantics the spec states), and judged against
the kernel spec's tolerance: ``pcc >= tolerance.pcc`` and
``max|out - ref| / max|ref| <= tolerance.max_rel``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from ttlgen.emit._base import EmitContext, default_templates_dir
from ttlgen.emit._header import finalize
from ttlgen.emit.kernels import kernel_files
from ttlgen.errors import DiagnosticSink, ExitCode, SpecErrors, UsageError, did_you_mean
from ttlgen.model import kernels as kernels_model
from ttlgen.model.kernels import DfbRef, If, Kernel, Loop, Statement, Store, Sync, Value
from ttlgen.model.project import Project, build_project
from ttlgen.plan.kernels import LoweredKernel, plan_kernels
from ttlgen.plan.project import ProjectPlan, plan_project
from ttlgen.spec.document import SpecDocument

TILE = 32

F64 = npt.NDArray[np.float64]

# ------------------------------------------------------------------ reference semantics


def _tiles(x: F64) -> F64:
    """[R*32, C*32] -> [R, C, 32, 32]."""
    r, c = x.shape[0] // TILE, x.shape[1] // TILE
    return x.reshape(r, TILE, c, TILE).transpose(0, 2, 1, 3)


def _untiles(t: F64) -> F64:
    r, c = t.shape[0], t.shape[1]
    return t.transpose(0, 2, 1, 3).reshape(r * TILE, c * TILE)


def _bcast(x: F64, attrs: Mapping[str, str]) -> F64:
    t = _tiles(x).copy()
    kind = attrs["bcast"]
    if kind == "col":
        t[:] = t[:, :, :, :1]
    elif kind == "row":
        t[:] = t[:, :, :1, :]
    else:
        t[:] = t[:, :, :1, :1]
    return _untiles(t)


def _reduce(x: F64, scaler: F64, attrs: Mapping[str, str]) -> F64:
    t = _tiles(x)
    s = _tiles(scaler)[0, 0, 0, 0]
    out = np.zeros_like(t)
    dim = attrs["reduce_dim"]
    if dim == "row":
        out[:, :, :, 0] = t.sum(axis=3) * s
    elif dim == "col":
        out[:, :, 0, :] = t.sum(axis=2) * s
    else:
        out[:, :, 0, 0] = t.sum(axis=(2, 3)) * s
    return _untiles(out)


def _transpose(x: F64, attrs: Mapping[str, str]) -> F64:
    return _untiles(_tiles(x).transpose(0, 1, 3, 2).copy())


def _matmul(a: F64, b: F64, acc: F64 | None = None) -> F64:
    product: F64 = a @ b
    return product if acc is None else acc + product


def _fit(x: F64, like: F64) -> F64:
    """A one-tile operand broadcast over a larger block (tile-level)."""
    if x.shape == like.shape:
        return x
    return np.tile(x, (like.shape[0] // x.shape[0], like.shape[1] // x.shape[1]))


def _binary(fn: Callable[[F64, F64], F64]) -> Callable[..., F64]:
    def apply(a: F64, b: F64) -> F64:
        big = a if a.size >= b.size else b
        return fn(_fit(a, big), _fit(b, big))

    return apply


#: float64 semantics of each op a kernel may use; an op missing here cannot be `run`.
REFERENCE: dict[str, Callable[..., F64]] = {
    "tile_add": _binary(np.add),
    "tile_sub": _binary(np.subtract),
    "tile_mul": _binary(np.multiply),
    "tile_max": _binary(np.maximum),
    "tile_exp": np.exp,
    "tile_log": np.log,
    "tile_sqrt": np.sqrt,
    "tile_rsqrt": lambda x: 1.0 / np.sqrt(x),
    "tile_tanh": np.tanh,
    "tile_sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tile_neg": np.negative,
    "tile_abs": np.abs,
    "tile_relu": lambda x: np.maximum(x, 0.0),
    "tile_matmul_block": _matmul,
}
WITH_ATTRS: dict[str, Callable[..., F64]] = {
    "tile_bcast": _bcast,
    "tile_reduce": _reduce,
    "tile_transpose": _transpose,
}


class _Reference:
    """Executes a kernel body on float64 blocks, as the spec states it."""

    def __init__(self, kernel: Kernel, inputs: Mapping[str, F64]) -> None:
        self.kernel = kernel
        self.inputs = inputs
        self.outputs = {
            d.name: np.full((d.tensor.shape[0] * TILE, d.tensor.shape[1] * TILE), np.nan)
            for d in kernel.dfbs
            if d.tensor is not None and d.tensor.role == "output"
        }
        self.counter = {d.name: 0 for d in kernel.dfbs}
        self.front: dict[str, F64] = {}
        self.queue: dict[str, list[F64]] = {d.name: [] for d in kernel.dfbs}
        self.reserved: dict[str, F64 | None] = {}

    def _block(self, name: str, tensor: F64) -> tuple[slice, slice]:
        d = self.kernel.dfb(name)
        assert d.tensor is not None
        br, bc = d.block
        grid_cols = d.tensor.shape[1] // bc
        n = self.counter[name] % ((d.tensor.shape[0] // br) * grid_cols)
        r0, c0 = (n // grid_cols) * br, (n % grid_cols) * bc
        return slice(r0 * TILE, (r0 + br) * TILE), slice(c0 * TILE, (c0 + bc) * TILE)

    def value(self, v: Value) -> F64:
        if isinstance(v, DfbRef):
            if v.dfb in self.front:
                return self.front[v.dfb]
            raise UsageError(f"reference: {v.dfb!r} is read without a wait")
        args = [self.value(a) for a in v.args]
        if v.op in REFERENCE:
            return REFERENCE[v.op](*args)
        if v.op in WITH_ATTRS:
            return WITH_ATTRS[v.op](*args, dict(v.attrs))
        raise UsageError(f"no float64 reference for op {v.op!r}; add it to ttlgen.run.REFERENCE")

    def run(self, body: Sequence[Statement], env: dict[str, tuple[int, int]]) -> None:
        for stmt in body:
            if isinstance(stmt, Sync):
                for name in stmt.dfbs:
                    self.sync(stmt.action, name)
            elif isinstance(stmt, Store):
                val = self.value(stmt.value)
                val = _fit(val, np.zeros((self.kernel.dfb(stmt.target).block[0] * TILE, self.kernel.dfb(stmt.target).block[1] * TILE)))
                prev = self.reserved.get(stmt.target)
                self.reserved[stmt.target] = val if (not stmt.accumulate or prev is None) else prev + val
            elif isinstance(stmt, Loop):
                for i in range(stmt.count):
                    self.run(stmt.body, {**env, stmt.var: (i, stmt.count)})
            elif isinstance(stmt, If):
                i, count = env[stmt.var]
                hit = {"first": i == 0, "not_first": i != 0, "last": i == count - 1, "not_last": i != count - 1}[stmt.condition]
                self.run(stmt.then if hit else stmt.orelse, env)

    def sync(self, action: str, name: str) -> None:
        d = self.kernel.dfb(name)
        if action == "wait":
            if d.tensor is not None and d.tensor.role == "input":
                rows, cols = self._block(name, self.inputs[name])
                self.front[name] = self.inputs[name][rows, cols]
                self.counter[name] += 1
            elif self.queue[name]:
                self.front[name] = self.queue[name].pop(0)
            else:
                raise UsageError(f"reference: wait on {name!r}, which nothing has pushed (the kernel would deadlock)")
        elif action == "pop":
            self.front.pop(name, None)
        elif action == "reserve":
            self.reserved[name] = None
        else:
            block = self.reserved.pop(name, None)
            shape = (d.block[0] * TILE, d.block[1] * TILE)
            data = np.full(shape, np.nan) if block is None else block
            if d.tensor is not None and d.tensor.role == "output":
                rows, cols = self._block(name, self.outputs[name])
                self.outputs[name][rows, cols] = data
                self.counter[name] += 1
            else:
                self.queue[name].append(data)


def reference(kernel: Kernel, inputs: Mapping[str, F64]) -> dict[str, F64]:
    ref = _Reference(kernel, inputs)
    ref.run(kernel.body, {})
    return ref.outputs


# ------------------------------------------------------------------------- inputs


def make_inputs(kernel: Kernel, rng: np.random.Generator) -> dict[str, npt.NDArray[np.float32]]:
    out: dict[str, npt.NDArray[np.float32]] = {}
    for d in kernel.dfbs:
        if d.tensor is None or d.tensor.role != "input":
            continue
        shape = (d.tensor.shape[0] * TILE, d.tensor.shape[1] * TILE)
        if d.tensor.distribution == "ones":
            data = np.ones(shape)
        elif d.tensor.distribution == "positive":
            data = rng.uniform(0.5, 2.0, size=shape)
        else:
            data = rng.standard_normal(shape)
        out[d.name] = data.astype(np.float32)
    return out


def _as_stored(kernel: Kernel, lowered: LoweredKernel, inputs: Mapping[str, npt.NDArray[np.float32]]) -> dict[str, F64]:
    """The inputs as the device holds them (converted to each buffer's format)."""
    from ttlgen.device import formats

    stored = {}
    for t in lowered.inputs:
        raw = formats.encode(inputs[t.name], t.format, "nearest_even")
        stored[t.name] = formats.decode(raw, t.format, t.shape[0], t.shape[1]).astype(np.float64)
    return stored


# ------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class Metrics:
    max_abs: float
    mean_abs: float
    pcc: float
    max_rel: float
    finite: bool


def compare(out: npt.NDArray[np.floating[Any]], ref: F64) -> Metrics:
    out64 = np.asarray(out, dtype=np.float64)
    finite = bool(np.all(np.isfinite(out64)))
    diff = np.abs(out64 - ref)
    max_abs = float(np.max(diff)) if finite else float("inf")
    mean_abs = float(np.mean(diff)) if finite else float("inf")
    scale = float(np.max(np.abs(ref))) or 1.0
    if finite and np.std(out64) > 0 and np.std(ref) > 0:
        pcc = float(np.corrcoef(out64.ravel(), ref.ravel())[0, 1])
    elif finite and np.array_equal(out64, ref):
        pcc = 1.0
    else:
        pcc = 0.0
    return Metrics(max_abs, mean_abs, pcc, max_abs / scale, finite)


# ------------------------------------------------------------------------ building


@dataclass(frozen=True)
class _Models:
    project: Project
    plan: ProjectPlan
    documents: tuple[SpecDocument, ...]  # to rebuild a kernel with parameter overrides


def _models(specs_dir: Path) -> _Models:
    from ttlgen.pipeline import validate_specs

    documents = validate_specs(specs_dir)
    project = build_project(documents)
    return _Models(project, plan_project(project), tuple(documents))


def build_kernel(specs_dir: Path, name: str, overrides: Mapping[str, int] | None = None, models: _Models | None = None) -> LoweredKernel:
    """Generate one kernel from the specs (with optional parameter overrides)."""
    models = models or _models(specs_dir)
    project = models.project
    planned = {lowered.kernel.name: lowered for lowered in models.plan.kernels}
    if name not in planned:
        raise UsageError(f"unknown kernel {name!r}; kernels: {', '.join(sorted(planned)) or 'none'}{did_you_mean(name, planned)}")
    lowered: LoweredKernel = planned[name]
    if not overrides:
        return lowered
    doc = next(d for d in models.documents if d.source == lowered.kernel.source)
    sink = DiagnosticSink()
    kernel = kernels_model.build_kernel(doc, name, project.ops, project.spelling, sink, overrides)
    sink.raise_if_any()
    (lowered,) = plan_kernels([kernel], project.ops, project.targets, project.spelling)
    return lowered


def write_kernel(lowered: LoweredKernel, directory: Path) -> Path:
    ctx = EmitContext(default_templates_dir())
    prefix = f"kernels/{lowered.kernel.name}/"
    for f in kernel_files(lowered, ctx):
        path = directory / f.path[len(prefix) :]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(finalize(f))
    return directory


def _program(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "program.json").read_text(encoding="utf-8"))
    return data


@dataclass(frozen=True)
class RunReport:
    kernel: str
    seed: int
    passed: bool
    outputs: dict[str, Metrics]
    tolerance: kernels_model.Tolerance
    plan: dict[str, Any]
    subblocked: bool
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "seed": self.seed,
            "status": "pass" if self.passed else "fail",
            "error": self.error,
            "plan": self.plan,
            "subblocked": self.subblocked,
            "tolerance": {"pcc": self.tolerance.pcc, "max_rel": self.tolerance.max_rel},
            "outputs": {
                name: {"max_abs": m.max_abs, "mean_abs": m.mean_abs, "pcc": m.pcc, "max_rel": m.max_rel}
                for name, m in sorted(self.outputs.items())
            },
        }


def run_lowered(
    lowered: LoweredKernel,
    seed: int,
    inputs: Mapping[str, npt.NDArray[np.float32]] | None = None,
    numerics: Any = None,
    program_overrides: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    hardware: bool = False,
) -> tuple[RunReport, dict[str, npt.NDArray[np.float32]], dict[str, F64]]:
    """Run a generated kernel on the emulator (or, with ``hardware``, on a Tenstorrent
    device through ttnn); returns the report, the outputs and the float64 reference."""
    from ttlgen.device import (
        CompileError,
        DeviceError,
        ProgramError,
        run_program,
        run_program_on_device,
    )

    kernel = lowered.kernel
    rng = np.random.default_rng(seed)
    inputs = dict(inputs) if inputs is not None else make_inputs(kernel, rng)
    try:
        expected = reference(kernel, _as_stored(kernel, lowered, inputs))
    except UsageError as exc:
        return RunReport(kernel.name, seed, False, {}, kernel.tolerance, lowered.plan_json, lowered.subblocked, str(exc)), {}, {}
    with tempfile.TemporaryDirectory(prefix="ttlgen-run-") as tmp:
        directory = write_kernel(lowered, Path(tmp))
        program = _program(directory)
        if program_overrides is not None:
            program = program_overrides(program)
        (directory / "program.json").write_text(json.dumps(program, indent=2) + "\n", encoding="utf-8")
        try:
            if hardware:
                result = run_program_on_device(directory, inputs)
            else:
                result = run_program(directory, inputs, program=program, numerics=numerics)
        except (DeviceError, CompileError, ProgramError) as exc:
            message = exc.message if isinstance(exc, DeviceError) else str(exc)
            report = RunReport(kernel.name, seed, False, {}, kernel.tolerance, lowered.plan_json, lowered.subblocked, f"{type(exc).__name__}: {message}")
            return report, {}, expected
    metrics = {name: compare(result.outputs[name], expected[name]) for name in expected}
    tol = kernel.tolerance
    passed = all(m.finite and m.pcc >= tol.pcc and m.max_rel <= tol.max_rel for m in metrics.values())
    report = RunReport(kernel.name, seed, passed, metrics, tol, lowered.plan_json, lowered.subblocked)
    return report, result.outputs, expected


def _print_report(report: RunReport, out: IO[str]) -> None:
    status = "PASS" if report.passed else "FAIL"
    out.write(f"{report.kernel} (seed {report.seed}): {status}\n")
    if report.error:
        out.write(f"  {report.error}\n")
    strategies = ", ".join(f"{k}={v}" for k, v in report.plan.get("strategies", {}).items()) or "none"
    out.write(
        f"  plan: fp32_dest_acc_en={report.plan.get('fp32_dest_acc_en')} dst_full_sync_en={report.plan.get('dst_full_sync_en')} "
        f"unpack_to_dest_fp32={report.plan.get('unpack_to_dest_fp32')} strategies: {strategies}"
        f"{' (subblocked)' if report.subblocked else ''}\n"
    )
    for name, m in sorted(report.outputs.items()):
        out.write(
            f"  {name}: max_abs={m.max_abs:.3e} mean_abs={m.mean_abs:.3e} pcc={m.pcc:.6f} "
            f"max_rel={m.max_rel:.3e} (tolerance: pcc >= {report.tolerance.pcc}, max_rel <= {report.tolerance.max_rel:.1e})\n"
        )


def run_command(
    kernel: str,
    seed: int | None = None,
    as_json: bool = False,
    specs_dir: Path = Path("specs"),
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """`ttlgen run KERNEL`: exit 0 when the kernel passes, 1 when it fails, 2 on bad input."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        lowered = build_kernel(specs_dir, kernel)
    except (SpecErrors, UsageError) as exc:
        text = exc.render() if isinstance(exc, SpecErrors) else f"ttlgen: {exc}"
        if as_json:
            stdout.write(json.dumps({"status": "error", "message": text}, indent=2) + "\n")
        else:
            stderr.write(text + "\n")
        return ExitCode.BAD_INPUT
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    report, _, _ = run_lowered(lowered, seed)
    if as_json:
        stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
    else:
        _print_report(report, stdout)
    return ExitCode.OK if report.passed else ExitCode.FAILED


# ------------------------------------------------------------------------ accuracy

ACCURACY_METHODS = ("l1_acc", "dst_roundtrip", "fp32_dest")


def accuracy_rows(
    ks: Sequence[int], blocks: Sequence[int], specs_dir: Path = Path("specs"), seed: int = 0
) -> list[dict[str, Any]]:
    """One row per (method, K, block) of the matmul kernels that declare an accuracy_method."""
    models = _models(specs_dir)
    by_method: dict[str, str] = {}
    for kernel in models.project.kernels.kernels:
        if kernel.accuracy_method and kernel.accuracy_method not in by_method:
            by_method[kernel.accuracy_method] = kernel.name
    missing = [m for m in ACCURACY_METHODS if m not in by_method]
    if missing:
        raise UsageError(f"no kernel spec declares accuracy_method {', '.join(missing)}")
    rows: list[dict[str, Any]] = []
    for method in ACCURACY_METHODS:
        for block in blocks:
            base: tuple[float, float] | None = None
            for k in ks:
                lowered = build_kernel(specs_dir, by_method[method], {"k_tiles": k, "block": block}, models)
                rng = np.random.default_rng(seed)
                inputs = make_inputs(lowered.kernel, rng)
                report, _, _ = run_lowered(lowered, seed, inputs)
                if report.error:
                    raise UsageError(f"{method} K={k} block={block}: {report.error}")
                (m,) = report.outputs.values()
                if base is None:
                    base = (m.max_abs or 1e-30, m.mean_abs or 1e-30)
                rows.append(
                    {
                        "method": method,
                        "k": k,
                        "block": block,
                        "subblocked": lowered.subblocked,
                        "max_abs": m.max_abs,
                        "mean_abs": m.mean_abs,
                        "pcc": m.pcc,
                        "max_vs_k1": m.max_abs / base[0],
                        "mean_vs_k1": m.mean_abs / base[1],
                    }
                )
    return rows


def _ints(text: str, what: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"--{what}: expected comma-separated positive integers, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise UsageError(f"--{what}: expected comma-separated positive integers, got {text!r}")
    return values


def accuracy_command(
    k: str = "1,4,16,64",
    block: str = "2,16",
    as_json: bool = False,
    specs_dir: Path = Path("specs"),
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """`ttlgen accuracy`: the error-vs-K table of the generated matmul kernels."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        rows = accuracy_rows(_ints(k, "k"), _ints(block, "block"), specs_dir)
    except (SpecErrors, UsageError) as exc:
        stderr.write((exc.render() if isinstance(exc, SpecErrors) else f"ttlgen: {exc}") + "\n")
        return ExitCode.BAD_INPUT
    if as_json:
        stdout.write(json.dumps({"rows": rows}, indent=2) + "\n")
        return ExitCode.OK
    stdout.write(f"{'method':<14}{'K':>5}{'block':>7}{'subblocked':>12}{'max_abs':>12}{'mean_abs':>12}{'pcc':>11}{'max/K1':>9}{'mean/K1':>9}\n")
    for r in rows:
        stdout.write(
            f"{r['method']:<14}{r['k']:>5}{r['block']:>7}{'yes' if r['subblocked'] else 'no':>12}"
            f"{r['max_abs']:>12.3e}{r['mean_abs']:>12.3e}{r['pcc']:>11.6f}{r['max_vs_k1']:>9.2f}{r['mean_vs_k1']:>9.2f}\n"
        )
    return ExitCode.OK
