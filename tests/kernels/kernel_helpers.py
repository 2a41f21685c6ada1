"""Shared helpers of the kernel tests: the spec'd kernels, generation, device runs."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ttlgen.plan.kernels import LoweredKernel
from ttlgen.run import RunReport, _Models, build_kernel, run_lowered

REPO = Path(__file__).resolve().parents[2]
SPECS = REPO / "specs"


@functools.cache
def all_kernels() -> dict[str, LoweredKernel]:
    """Every kernel of specs/, resolved and lowered (as `ttlgen build` does)."""
    from tests.conftest import real_plan

    return {k.kernel.name: k for k in real_plan()[1].kernels}


@functools.cache
def _real_models() -> _Models:
    """What `build_kernel` reads kernels from, for the real specs: the model and plan the
    process already holds (tests/conftest.py: real_plan) and the documents they were made from."""
    from tests.conftest import real_documents, real_plan

    project, plan = real_plan()
    return _Models(project, plan, real_documents())


def kernel(name: str, **overrides: int) -> LoweredKernel:
    if not overrides:
        return all_kernels()[name]
    # The kernel built again from its spec document with the overrides, as `ttlgen run` and
    # `accuracy` do, over the real specs' model rather than one made anew for each call.
    return build_kernel(SPECS, name, overrides, models=_real_models())


def pin_api_level(specs: Path, level: str) -> None:
    """Make the shipped targets' runtime API (ComputeConfigDescriptor) pin the runtime version
    whose kernels use tt-metal API ``level``: every shipped kernel is then generated at it."""
    path = specs / "targets" / "runtime_apis.yaml"
    text = path.read_text(encoding="utf-8")
    pinned = "    pinned_runtime_version: current\n"
    assert text.count(pinned) == 2  # ComputeConfigDescriptor first, then ComputeGen1Config
    path.write_text(text.replace(pinned, f"    pinned_runtime_version: {level}\n", 1), encoding="utf-8")
    # A runtime of an older level may hold fewer circular buffers than an architecture has
    # buffer indices, which validation refuses: the copy's architectures get as many
    # indices as that runtime holds.
    import yaml

    versions = yaml.safe_load(text)["apis"]["ComputeConfigDescriptor"]["runtime_versions"]
    buffers = next(v["num_circular_buffers"] for v in versions.values() if v["kernel_api"] == level)
    for arch in (specs / "targets" / "architectures").glob("*.yaml"):
        arch_text = arch.read_text(encoding="utf-8")
        capacity = yaml.safe_load(arch_text).get("dfb_capacity", 0)
        if capacity > buffers:
            arch.write_text(arch_text.replace(f"dfb_capacity: {capacity}\n", f"dfb_capacity: {buffers}\n"), encoding="utf-8")
            # The goldens pinning the capacity follow it (validate checks them).
            for spec in (specs / "targets").rglob("*.yaml"):
                pinned = spec.read_text(encoding="utf-8")
                golden = re.sub(rf"(dfb_capacity:\n\s+value:) {capacity}\n", rf"\1 {buffers}\n", pinned)
                if golden != pinned:
                    spec.write_text(golden, encoding="utf-8")


def legacy_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``root``, holding ``root/specs`` (a copy of the real specs with their runtime API pinned
    to API level `legacy`, pin_api_level) and ``root/out``, what `ttlgen build` writes from it:
    made once per test process for the tests that only read them (tests/kernels/test_api_levels.py,
    tests/upstream/test_compile.py)."""
    return _legacy_build(tmp_path_factory.getbasetemp() / "legacy-build")


def _legacy_build(root: Path) -> Path:
    # Not functools.cache: this module is imported under two names (kernel_helpers beside
    # the kernel tests, tests.kernels.kernel_helpers elsewhere), each with its own globals.
    # The directory is the test process's own (its base temporary directory).
    import shutil

    from tests.conftest import run_cli

    done = root / "built"
    if not done.exists():
        shutil.rmtree(root, ignore_errors=True)  # what a failed attempt left
        specs = root / "specs"
        shutil.copytree(SPECS, specs)
        pin_api_level(specs, "legacy")
        result = run_cli("build", "--specs", specs, "--out", root / "out")
        assert result.exit_code == 0, result.stderr
        done.touch()
    return root


_REDUCE_KERNEL = """\
spec: ttlgen.kernel/v1
kernels:
  {name}:
    summary: A reduce of two tiles, its scaler tile built by the reader.
    target: {target}
{policy}    dfbs:
      x: {{index: 0, dtype: {dtype}, block: [1, 1], input: {{shape: [1, 2]}}}}
      scaler: {{index: 2, dtype: {dtype}, block: [1, 1], fill: scaler}}
      out: {{index: 16, dtype: {dtype}, block: [1, 1], output: {{shape: [1, 2]}}}}
    body:
      - wait: scaler
      - loop:
          var: i
          count: 2
          body:
            - wait: x
            - reserve: out
            - store: {{to: out, value: {{op: tile_reduce, attrs: {{reduce_dim: {dim}, pool: {pool}}}, args: [x, scaler]}}}}
            - pop: x
            - push: out
      - pop: scaler
    tolerance: {tolerance}
"""


def reduce_kernel_spec(
    name: str, target: str, pool: str = "sum", dim: str = "row", dtype: str = "bf16",
    tolerance: str = '{pcc: 0.999, max_rel: 1.0e-2, derivation: "one DST rounding and one pack of each result"}',
    options: str | None = None,
) -> str:
    """A kernel spec file with one kernel: ``tile_reduce`` of each of two tiles of ``x``
    into ``out``, with policy ``options`` (a YAML flow mapping) when given."""
    policy = f"    policy:\n      options: {options}\n" if options else ""
    return _REDUCE_KERNEL.format(name=name, target=target, pool=pool, dim=dim, dtype=dtype, tolerance=tolerance, policy=policy)


def fresh_seed() -> int:
    return int(np.random.SeedSequence().generate_state(1)[0])


def run(name: str | LoweredKernel, seed: int | None = None, **kwargs: Any) -> RunReport:
    lowered = all_kernels()[name] if isinstance(name, str) else name
    report, _, _ = run_lowered(lowered, fresh_seed() if seed is None else seed, **kwargs)
    return report


def compute_source(name: str) -> str:
    """The generated compute.cpp body (without the generated-file header)."""
    from ttlgen.emit._base import EmitContext, Templates
    from ttlgen.emit._header import finalize
    from ttlgen.emit._templates import default_templates_dir
    from ttlgen.emit.kernels import emit_kernel

    files = emit_kernel(all_kernels()[name], EmitContext(Templates(default_templates_dir())))
    (compute,) = [f for f in files if f.path.endswith("compute.cpp")]
    return finalize(compute).decode("utf-8")


def l1_acc_flags(name: str) -> list[int]:
    """The packer L1-accumulation switches of a compute program, in program order."""
    from ttlgen.model.spelling import ArgKind
    from ttlgen.plan import kernel_ir as ir

    flags = []
    for stmt in ir.walk(all_kernels()[name].compute.body):
        if isinstance(stmt, ir.Call) and stmt.step is ir.Step.L1_ACC:
            flag = stmt.arg(ArgKind.FLAG)
            assert isinstance(flag, ir.Const)
            flags.append(flag.value)
    return flags
