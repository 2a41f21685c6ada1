"""`ttlgen run` and `ttlgen accuracy`: generated kernels on the device emulator.

A kernel is generated from the current specs (exactly what `ttlgen build` writes for it),
written to a scratch directory, compiled (cached by content hash) and run on fresh random
inputs with poisoned outputs. The result is compared with a float64 NumPy reference of
the kernel's body (the same block-level semantics the spec states), and judged against
the kernel spec's tolerance: ``pcc >= tolerance.pcc`` and
``max|out - ref| / scale <= tolerance.max_rel``, where the scale is max|ref|, or with
``relative_to: terms`` the largest value of the reference computed on the inputs'
magnitudes (the size of a sum's terms, which does not shrink when the sum cancels).
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ttlgen.accuracy_limits import (
    ACCURACY_METHODS,
    MAX_BLOCK,
    MAX_K,
    MAX_SEEDS,
    MAX_VALUES,
    MAX_WORK,
    table_work,
)
from ttlgen.emit import emulator_api
from ttlgen.emit._base import EmitContext, GeneratedFile, Templates
from ttlgen.emit._header import finalize
from ttlgen.emit._templates import default_templates_dir
from ttlgen.emit.kernels import emit_kernel
from ttlgen.errors import (
    DiagnosticSink,
    ExitCode,
    UsageError,
    did_you_mean,
    emit_json,
)
from ttlgen.model import kernels as kernels_model
from ttlgen.model import math_spec
from ttlgen.model.kernels import DfbRef, If, Kernel, Loop, Statement, Store, Sync, Value
from ttlgen.model.project import Project, build_project
from ttlgen.model.tt_metal_api import ApiModel
from ttlgen.plan.kernels import LoweredKernel, plan_kernels
from ttlgen.plan.project import ProjectPlan, plan_project
from ttlgen.plan.scaler_fill import Fill
from ttlgen.spec.document import SpecDocument

if TYPE_CHECKING:
    from ttlgen.device.calibration import Calibration

TILE = 32
FACE = TILE // 2  # a tile is 2x2 faces, each row-major (NUMERICS.md "Data layout")

F64 = npt.NDArray[np.float64]

# ------------------------------------------------------------------ reference semantics


def _tiles(x: F64) -> F64:
    """[R*32, C*32] -> [R, C, 32, 32]."""
    r, c = x.shape[0] // TILE, x.shape[1] // TILE
    return x.reshape(r, TILE, c, TILE).transpose(0, 2, 1, 3)


def _untiles(t: F64) -> F64:
    r, c = t.shape[0], t.shape[1]
    return t.transpose(0, 2, 1, 3).reshape(r * TILE, c * TILE)


def _bcast(x: F64, *, attrs: Mapping[str, str]) -> F64:
    t = _tiles(x).copy()
    kind = attrs["bcast"]
    if kind == "col":
        t[:] = t[:, :, :, :1]
    elif kind == "row":
        t[:] = t[:, :, :1, :]
    else:
        t[:] = t[:, :, :1, :1]
    return _untiles(t)


def _scaler_weights(scaler: F64, reduced: str) -> F64:
    """[R, C, 32, 32] tiles of the scaler that multiplies each input element: the first row
    of the scaler face holding the element, at the position of the reduced index within the
    face (reduce.h@0112bb1e: the scaler is read from the first row of each face)."""
    s = _tiles(scaler)
    r, c = np.meshgrid(np.arange(TILE), np.arange(TILE), indexing="ij")
    face_row0 = (r // FACE) * FACE
    index = c % FACE if reduced == "cols" else r % FACE
    weights: F64 = s[:, :, face_row0, (c // FACE) * FACE + index]
    return weights


def _reduce(x: F64, scaler: F64, *, attrs: Mapping[str, str]) -> F64:
    if attrs.get("pool") == "max":
        raise UsageError("no float64 reference for a MAX reduce (the emulator does not run it)")
    t = _tiles(x)
    s = _fit(scaler, x)
    out = np.zeros_like(t)
    dim = attrs["reduce_dim"]
    if dim == "row":
        out[:, :, :, 0] = (t * _scaler_weights(s, "cols")).sum(axis=3)
    elif dim == "col":
        out[:, :, 0, :] = (t * _scaler_weights(s, "rows")).sum(axis=2)
    else:
        # REDUCE_SCALAR reduces the columns, then the row of column sums, applying the
        # scaler in both passes (upstream's AVG scaler for it is 1/sqrt(N)).
        columns = (t * _scaler_weights(s, "rows")).sum(axis=2)
        out[:, :, 0, 0] = (columns * _scaler_weights(s, "cols")[:, :, 0, :]).sum(axis=2)
    return _untiles(out)


def _transpose(x: F64, *, attrs: Mapping[str, str]) -> F64:
    return _untiles(_tiles(x).transpose(0, 1, 3, 2).copy())


def _matmul(a: F64, b: F64, acc: F64 | None = None, *, attrs: Mapping[str, str]) -> F64:
    product: F64 = a @ b
    return product if acc is None else acc + product


def _fit(x: F64, like: F64) -> F64:
    """A one-tile operand broadcast over a larger block (tile-level)."""
    if x.shape == like.shape:
        return x
    return np.tile(x, (like.shape[0] // x.shape[0], like.shape[1] // x.shape[1]))


#: The float64 reference of each runtime primitive (math_spec.RUNTIME_PRIMITIVES): the
#: datapaths that are not expressions of the math spec, each ``f(*blocks, attrs=...)``.
PRIMITIVE_REFERENCES: dict[str, Callable[..., F64]] = {
    "copy": lambda x, *, attrs: x,
    "matmul": _matmul,
    "broadcast": _bcast,
    "reduce": _reduce,
    "transpose": _transpose,
}


def _erf(a: F64) -> F64:
    result: F64 = np.vectorize(math.erf, otypes=[np.float64])(a)
    return result


def _where(c: F64, a: F64, b: F64) -> F64:
    result: F64 = np.where(c != 0.0, a, b)
    return result


def _signbit(a: F64) -> F64:
    result: F64 = np.signbit(a).astype(np.float64)
    return result


#: Each function of the math language (math_spec.BUILTINS) in float64 NumPy.
NUMPY_FUNCTIONS: dict[str, Callable[..., F64]] = {
    "abs": np.abs,
    "acos": np.arccos,
    "asin": np.arcsin,
    "atan": np.arctan,
    "ceil": np.ceil,
    "cos": np.cos,
    "erf": _erf,
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "floor": np.floor,
    "log": np.log,
    "log1p": np.log1p,
    "max": np.fmax,
    "min": np.fmin,
    "pow": np.power,
    "sign": np.sign,
    "signbit": _signbit,
    "sin": np.sin,
    "sqrt": np.sqrt,
    "tan": np.tan,
    "tanh": np.tanh,
    "trunc": np.trunc,
    "where": _where,
}

_ARITHMETIC: dict[math_spec.Arithmetic, Callable[[F64, F64], F64]] = {
    math_spec.Arithmetic.ADD: np.add,
    math_spec.Arithmetic.SUB: np.subtract,
    math_spec.Arithmetic.MUL: np.multiply,
    math_spec.Arithmetic.DIV: np.divide,
}
_COMPARISONS: dict[math_spec.Comparison, Callable[[F64, F64], Any]] = {
    math_spec.Comparison.LT: np.less,
    math_spec.Comparison.LE: np.less_equal,
    math_spec.Comparison.GT: np.greater,
    math_spec.Comparison.GE: np.greater_equal,
    math_spec.Comparison.EQ: np.equal,
    math_spec.Comparison.NE: np.not_equal,
}


def evaluate(expr: math_spec.Expr, operands: Mapping[str, F64]) -> F64:
    """``expr`` over float64 arrays (every intermediate in float64, as the math spec's
    reference is defined); NaN and infinity propagate as IEEE arithmetic says."""
    with np.errstate(all="ignore"):
        return _evaluate(expr, operands)


def _evaluate(expr: math_spec.Expr, operands: Mapping[str, F64]) -> F64:
    if isinstance(expr, math_spec.Number):
        like = next(iter(operands.values()), None)  # none: a nullary function's one tile
        return np.float64(expr.value) + (np.zeros_like(like) if like is not None else np.zeros((TILE, TILE)))
    if isinstance(expr, math_spec.Operand):
        return operands[expr.name]
    if isinstance(expr, math_spec.Negate):
        return np.negative(_evaluate(expr.operand, operands))
    if isinstance(expr, math_spec.BinaryOp):
        return _ARITHMETIC[expr.op](_evaluate(expr.left, operands), _evaluate(expr.right, operands))
    if isinstance(expr, math_spec.Compare):
        truth = _COMPARISONS[expr.op](_evaluate(expr.left, operands), _evaluate(expr.right, operands))
        result: F64 = np.asarray(truth, dtype=np.float64)
        return result
    args = [_evaluate(a, operands) for a in expr.args]
    return np.asarray(NUMPY_FUNCTIONS[expr.function](*args), dtype=np.float64)


def function_reference(function: math_spec.MathFunction, approximate: bool = False) -> Callable[..., F64]:
    """The float64 reference of a math-spec function over whole blocks (a one-tile operand
    of a binary is broadcast over the other's block; a nullary function gives one tile),
    reading the op attributes it names from ``attrs`` (the kernel model's fp32 values);
    ``approximate``: its approximate form."""
    expr = function.approximate if approximate and function.approximate is not None else function.exact

    def apply(*args: F64, attrs: Mapping[str, str] | None = None) -> F64:
        if len(args) != function.arity:
            raise UsageError(f"{function.name!r} takes {function.arity} operand(s), got {len(args)}")
        shape = max(args, key=lambda a: a.size).shape if args else (TILE, TILE)
        names = {name: _fit(a, np.zeros(shape)) for name, a in zip(function.operands, args, strict=True)}
        given = attrs or {}
        for attribute in function.attributes:
            if attribute not in given:
                raise UsageError(f"{function.name!r} reads attribute {attribute!r}, which the op does not give")
            names[attribute] = np.full(shape, float(given[attribute]))
        return evaluate(expr, names)

    return apply


def reference_of(computes: math_spec.Computation, approximate: bool = False) -> Callable[..., F64]:
    """The float64 reference of what an op computes: ``f(*blocks, attrs=...)``;
    ``approximate``: the op's call selects the approximate form of its math."""
    if isinstance(computes, math_spec.MathFunction):
        return function_reference(computes, approximate)
    if computes.name not in PRIMITIVE_REFERENCES:
        raise UsageError(f"no float64 reference for the runtime primitive {computes.name!r}; add it to ttlgen.run.PRIMITIVE_REFERENCES")
    return PRIMITIVE_REFERENCES[computes.name]


def filled_block(kernel: Kernel, fill: Fill) -> F64:
    """The block the reader builds in L1 for ``fill``: zero but the first row of each face."""
    rows, cols = kernel.dfb(fill.dfb).block
    block = np.zeros((rows * TILE, cols * TILE))
    block[::FACE, :] = fill.value
    return block


class _Reference:
    """Executes a kernel body on float64 blocks, as the spec states it."""

    def __init__(
        self,
        kernel: Kernel,
        inputs: Mapping[str, F64],
        op_math: Mapping[str, math_spec.Computation],
        fills: Sequence[Fill] = (),
        approximate: frozenset[str] = frozenset(),
    ) -> None:
        self.kernel = kernel
        self.inputs = inputs
        self.op_math = op_math
        self.approximate = approximate
        self.filled = {f.dfb: filled_block(kernel, f) for f in fills}
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
        computes = self.op_math.get(v.op)
        if computes is None:
            raise UsageError(f"no float64 reference for op {v.op!r}: no binding in the emulation spec says what its tt-metal call computes")
        return reference_of(computes, v.op in self.approximate)(*args, attrs=dict(v.attrs))

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
            if name in self.filled:
                self.front[name] = self.filled[name]
            elif d.tensor is not None and d.tensor.role == "input":
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


def reference(
    kernel: Kernel,
    inputs: Mapping[str, F64],
    op_math: Mapping[str, math_spec.Computation],
    fills: Sequence[Fill] = (),
    approximate: frozenset[str] = frozenset(),
) -> dict[str, F64]:
    ref = _Reference(kernel, inputs, op_math, fills, approximate)
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
        elif d.tensor.bounds is not None:
            data = rng.uniform(*d.tensor.bounds, size=shape)
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
    """How one output compares with its float64 reference."""

    max_abs: float
    mean_abs: float
    pcc: float
    max_rel: float
    finite: bool


def compare(out: npt.NDArray[np.floating[Any]], ref: F64, scale_of: F64 | None = None) -> Metrics:
    """``max_rel`` divides the largest error by max|scale_of| (default: max|ref|)."""
    out64 = np.asarray(out, dtype=np.float64)
    finite = bool(np.all(np.isfinite(out64)))
    diff = np.abs(out64 - ref)
    max_abs = float(np.max(diff)) if finite else float("inf")
    mean_abs = float(np.mean(diff)) if finite else float("inf")
    scale = float(np.max(np.abs(ref if scale_of is None else scale_of))) or 1.0
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
    """The project and plan a run reads kernels from."""

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
    (lowered,) = plan_kernels([kernel], project.ops, project.targets, project.spelling, project.api)
    return lowered


def _write(files: Sequence[GeneratedFile], prefix: str, directory: Path) -> Path:
    """``files`` as `build` writes them, under ``directory`` in place of ``prefix``."""
    for f in files:
        path = directory / f.path[len(prefix) :]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(finalize(f))
    return directory


def write_kernel(lowered: LoweredKernel, directory: Path) -> Path:
    ctx = EmitContext(Templates(default_templates_dir()))
    return _write(emit_kernel(lowered, ctx), f"kernels/{lowered.kernel.name}/", directory)


def write_api_headers(api: ApiModel, level: str, directory: Path) -> Path | None:
    """The emulator's kernel-API headers of ``level`` generated from ``api`` (what `build`
    writes to generated/emulator/<level>), under ``directory``; None without an emulation."""
    found = api.level(level)
    if found is None or api.emulation is None:
        return None
    return _write(emulator_api.level_files(found, api.emulation), f"emulator/{level}/", directory)


def _program(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "program.json").read_text(encoding="utf-8"))
    return data


@dataclass(frozen=True)
class RunReport:
    """The result of one device run: metrics per output against the tolerance."""

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
            "tolerance": {"pcc": self.tolerance.pcc, "max_rel": self.tolerance.max_rel, "relative_to": self.tolerance.relative_to.value},
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
    api: ApiModel | None = None,
) -> tuple[RunReport, dict[str, npt.NDArray[np.float32]], dict[str, F64]]:
    """Run a generated kernel on the emulator (or, with ``hardware``, on a Tenstorrent
    device through ttnn); returns the report, the outputs and the float64 reference.
    With ``api`` (the model the kernel was generated from), the emulator compiles against
    kernel-API headers generated from it; else against the built ``generated/emulator/``.

    A report's verdict is on the kernel. What leaves nothing to judge raises UsageError
    instead: a kernel without a float64 reference (it is never compiled), a compiler or
    binutils tool that cannot be started."""
    from ttlgen.device import (
        CompileError,
        DeviceError,
        ProgramError,
        ToolchainError,
        run_program,
        run_program_on_device,
    )

    kernel = lowered.kernel
    rng = np.random.default_rng(seed)
    inputs = dict(inputs) if inputs is not None else make_inputs(kernel, rng)
    stored = _as_stored(kernel, lowered, inputs)

    def reference_of_inputs(values: Mapping[str, F64]) -> dict[str, F64]:
        return reference(kernel, values, dict(lowered.op_math), lowered.fills, lowered.approximate)

    expected = reference_of_inputs(stored)
    scales = expected
    if kernel.tolerance.relative_to is kernels_model.RelativeTo.TERMS:
        scales = reference_of_inputs({name: np.abs(value) for name, value in stored.items()})
    with tempfile.TemporaryDirectory(prefix="ttlgen-run-") as tmp:
        directory = write_kernel(lowered, Path(tmp) / "kernel")
        api_dir = write_api_headers(api, lowered.api_level, Path(tmp) / "api") if api is not None else None
        program = _program(directory)
        if program_overrides is not None:
            program = program_overrides(program)
        (directory / "program.json").write_text(json.dumps(program, indent=2) + "\n", encoding="utf-8")
        try:
            if hardware:
                result = run_program_on_device(directory, inputs)
            else:
                result = run_program(directory, inputs, program=program, numerics=numerics, api_dir=api_dir)
        except ToolchainError as exc:
            raise UsageError(str(exc)) from None
        except (DeviceError, CompileError, ProgramError) as exc:
            message = exc.message if isinstance(exc, DeviceError) else str(exc)
            report = RunReport(kernel.name, seed, False, {}, kernel.tolerance, lowered.plan_json, lowered.subblocked, f"{type(exc).__name__}: {message}")
            return report, {}, expected
    metrics = {name: compare(result.outputs[name], expected[name], scales[name]) for name in expected}
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
    of_terms = " of the terms' size" if report.tolerance.relative_to is kernels_model.RelativeTo.TERMS else ""
    for name, m in sorted(report.outputs.items()):
        out.write(
            f"  {name}: max_abs={m.max_abs:.3e} mean_abs={m.mean_abs:.3e} pcc={m.pcc:.6f} "
            f"max_rel={m.max_rel:.3e} (tolerance: pcc >= {report.tolerance.pcc}, max_rel <= {report.tolerance.max_rel:.1e}{of_terms})\n"
        )


def run_command(kernel: str, seed: int | None, as_json: bool, specs_dir: Path) -> int:
    """`ttlgen run KERNEL`: exit 0 when the kernel passes, 1 when it fails; bad input
    raises SpecErrors or UsageError."""
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    models = _models(specs_dir)
    lowered = build_kernel(specs_dir, kernel, models=models)
    report, _, _ = run_lowered(lowered, seed, api=models.project.api)
    if as_json:
        emit_json(report.to_json())
    else:
        _print_report(report, sys.stdout)
    return ExitCode.OK if report.passed else ExitCode.FAILED


# ------------------------------------------------------------------------ accuracy

@dataclass(frozen=True)
class AccuracyRow:
    """One row of the accuracy table, averaged over seeds."""

    method: str
    k: int
    block: int
    subblocked: bool
    seeds: tuple[int, ...]
    max_abs: float  # each metric averaged over the seeds
    mean_abs: float
    pcc: float
    max_vs_k1: float  # relative to the row of the smallest K of the same method and block
    mean_vs_k1: float

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "k": self.k,
            "block": self.block,
            "subblocked": self.subblocked,
            "seeds": list(self.seeds),
            "max_abs": self.max_abs,
            "mean_abs": self.mean_abs,
            "pcc": self.pcc,
            "one_minus_pcc": 1.0 - self.pcc,
            "max_vs_k1": self.max_vs_k1,
            "mean_vs_k1": self.mean_vs_k1,
        }


Progress = Callable[[int, int, str, int, int], None]


def accuracy_rows(
    ks: Sequence[int],
    blocks: Sequence[int],
    specs_dir: Path = Path("specs"),
    seeds: Sequence[int] = (0,),
    progress: Progress | None = None,
) -> list[AccuracyRow]:
    """One row per (method, K, block) of the matmul kernels that declare an accuracy_method,
    each metric averaged over ``seeds`` (the inputs of a seed are the same for every method).
    ``progress(done, total, method, k, block)`` is called before each row runs."""
    models = _models(specs_dir)
    by_method: dict[str, str] = {}
    for kernel in models.project.kernels.kernels:
        if kernel.accuracy_method and kernel.accuracy_method not in by_method:
            by_method[kernel.accuracy_method] = kernel.name
    missing = [m for m in ACCURACY_METHODS if m not in by_method]
    if missing:
        raise UsageError(f"no kernel spec declares accuracy_method {', '.join(missing)}")
    ks, blocks = sorted(set(ks)), sorted(set(blocks))
    total = len(ACCURACY_METHODS) * len(blocks) * len(ks)
    rows: list[AccuracyRow] = []
    for method in ACCURACY_METHODS:
        for block in blocks:
            base: tuple[float, float] | None = None
            for k in ks:
                if progress is not None:
                    progress(len(rows), total, method, k, block)
                lowered = build_kernel(specs_dir, by_method[method], {"k_tiles": k, "block": block}, models)
                metrics: list[Metrics] = []
                for seed in seeds:
                    inputs = make_inputs(lowered.kernel, np.random.default_rng(seed))
                    report, _, _ = run_lowered(lowered, seed, inputs, api=models.project.api)
                    if report.error:
                        raise UsageError(f"{method} K={k} block={block} seed={seed}: {report.error}")
                    metrics.extend(report.outputs.values())
                max_abs = float(np.mean([m.max_abs for m in metrics]))
                mean_abs = float(np.mean([m.mean_abs for m in metrics]))
                pcc = float(np.mean([m.pcc for m in metrics]))
                if base is None:
                    base = (max_abs or 1e-30, mean_abs or 1e-30)
                rows.append(
                    AccuracyRow(method, k, block, lowered.subblocked, tuple(seeds), max_abs, mean_abs, pcc,
                                max_abs / base[0], mean_abs / base[1])
                )
    return rows


def _ints(text: str, what: str, limit: int) -> list[int]:
    """A comma-separated list of integers 1..limit (at most MAX_VALUES of them), or a UsageError
    naming the option, the offending item and the limit."""
    expected = f"expected comma-separated integers 1..{limit}"
    items = [item.strip() for item in text.split(",")]
    if len(items) > MAX_VALUES:
        raise UsageError(f"--{what}: {len(items)} values, at most {MAX_VALUES} ({expected})")
    values: list[int] = []
    for item in items:
        if not item:
            raise UsageError(f"--{what}: empty item in {text!r} ({expected})")
        digits = item.lstrip("0")
        if not (item.isascii() and item.isdigit()) or not digits:
            raise UsageError(f"--{what}: {item!r} is not a positive integer ({expected})")
        # Compared as text first, so that a huge number is never converted.
        if len(digits) > len(str(limit)) or int(digits) > limit:
            raise UsageError(f"--{what}: {item} exceeds the limit of {limit} ({expected})")
        values.append(int(digits))
    return values


def _hardware_columns(row: AccuracyRow, calibration: Calibration) -> dict[str, Any]:
    from ttlgen.device.calibration import ratios

    hw = calibration.row(row.method, row.k, row.block)
    if hw is None:
        return {"hardware": None, "ratio": None}
    r = ratios(row.max_abs, row.mean_abs, row.pcc, hw)
    return {
        "hardware": {"max_abs": hw.max_abs, "mean_abs": hw.mean_abs, "pcc": hw.pcc, "one_minus_pcc": hw.one_minus_pcc},
        "ratio": {"max_abs": r.max_abs, "mean_abs": r.mean_abs, "one_minus_pcc": r.one_minus_pcc, "within_targets": r.within_targets()},
    }


def _progress_writer(stderr: IO[str]) -> Progress:
    tty = stderr.isatty()

    def show(done: int, total: int, method: str, k: int, block: int) -> None:
        line = f"ttlgen accuracy: row {done + 1}/{total}: {method} K={k} block={block}"
        stderr.write(f"\r{line}\x1b[K" if tty else line + "\n")
        stderr.flush()

    return show


def accuracy_command(
    k: str,
    block: str,
    as_json: bool,
    specs_dir: Path,
    hardware: bool,
    seeds: int,
    progress: bool | None,
) -> int:
    """`ttlgen accuracy`: the error-vs-K table of the generated matmul kernels; with
    ``hardware``, beside the hardware measurements that exist for its rows. Bad input
    raises SpecErrors or UsageError."""
    ks, blocks = _ints(k, "k", MAX_K), _ints(block, "block", MAX_BLOCK)
    if not 1 <= seeds <= MAX_SEEDS:
        raise UsageError(f"--seeds: {seeds} is outside 1..{MAX_SEEDS}")
    work = table_work(ks, blocks, seeds)
    if work > MAX_WORK:
        raise UsageError(
            f"the table is too large: K x block^2 x seeds summed over its rows is {work}, "
            f"the limit is {MAX_WORK} (eight rows at K = {MAX_K}, block = {MAX_BLOCK}); "
            "ask for fewer K values, blocks or seeds"
        )
    calibration: Calibration | None = None
    if hardware:
        from ttlgen.device.calibration import CalibrationError, load_calibration

        try:
            calibration = load_calibration()
        except CalibrationError as exc:
            raise UsageError(str(exc)) from None
    show = progress if progress is not None else not as_json
    try:
        rows = accuracy_rows(ks, blocks, specs_dir, tuple(range(seeds)), _progress_writer(sys.stderr) if show else None)
    finally:
        if show and sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")  # the progress line was rewritten in place
    if as_json:
        doc: dict[str, Any] = {"rows": [r.to_json() | (_hardware_columns(r, calibration) if calibration else {}) for r in rows]}
        if calibration is not None:
            doc["hardware"] = {"source": calibration.source, "conditions": dict(calibration.conditions)}
        emit_json(doc)
        return ExitCode.OK
    head = f"{'method':<14}{'K':>5}{'block':>7}{'subblocked':>12}{'max_abs':>12}{'mean_abs':>12}{'1-pcc':>11}{'max/K1':>9}{'mean/K1':>9}"
    if calibration is not None:
        head += f"  |{'hw max':>9}{'hw mean':>9}{'hw 1-pcc':>11}  |{'max x':>7}{'mean x':>8}{'1-pcc x':>9}"
    sys.stdout.write(head + "\n")
    for r in rows:
        line = (
            f"{r.method:<14}{r.k:>5}{r.block:>7}{'yes' if r.subblocked else 'no':>12}"
            f"{r.max_abs:>12.3e}{r.mean_abs:>12.3e}{1.0 - r.pcc:>11.3e}{r.max_vs_k1:>9.2f}{r.mean_vs_k1:>9.2f}"
        )
        if calibration is not None:
            cols = _hardware_columns(r, calibration)
            hw, ratio = cols["hardware"], cols["ratio"]
            if hw is None:
                line += f"  |{'-':>9}{'-':>9}{'-':>11}  |{'-':>7}{'-':>8}{'-':>9}"
            else:
                line += (
                    f"  |{hw['max_abs']:>9.3f}{hw['mean_abs']:>9.3f}{hw['one_minus_pcc']:>11.3e}"
                    f"  |{ratio['max_abs']:>7.2f}{ratio['mean_abs']:>8.2f}{ratio['one_minus_pcc']:>9.2f}"
                )
        sys.stdout.write(line + "\n")
    if calibration is not None:
        sys.stdout.write(f"\nhardware rows: {calibration.source}\n")
        sys.stdout.write("  " + calibration.conditions_text() + "\n")
        sys.stdout.write("  x = emulated / hardware (1-pcc x: ratio of 1 - PCC)\n")
    return ExitCode.OK
