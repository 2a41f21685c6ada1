"""Shared helpers of the kernel tests: the spec'd kernels, generation, device runs."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import numpy as np

from ttlgen.plan.kernels import LoweredKernel
from ttlgen.run import RunReport, build_kernel, run_lowered

REPO = Path(__file__).resolve().parents[2]
SPECS = REPO / "specs"


@functools.cache
def all_kernels() -> dict[str, LoweredKernel]:
    """Every kernel of specs/, resolved and lowered (as `ttlgen build` does)."""
    from ttlgen.pipeline import plan_specs

    _, plan = plan_specs(SPECS)
    return {k.kernel.name: k for k in plan.kernels}


def kernel(name: str, **overrides: int) -> LoweredKernel:
    if not overrides:
        return all_kernels()[name]
    return build_kernel(SPECS, name, overrides)


def fresh_seed() -> int:
    return int(np.random.SeedSequence().generate_state(1)[0])


def run(name: str | LoweredKernel, seed: int | None = None, **kwargs: Any) -> RunReport:
    lowered = all_kernels()[name] if isinstance(name, str) else name
    report, _, _ = run_lowered(lowered, fresh_seed() if seed is None else seed, **kwargs)
    return report


def compute_source(name: str) -> str:
    """The generated compute.cpp body (without the generated-file header)."""
    from ttlgen.emit._base import EmitContext, default_templates_dir
    from ttlgen.emit._header import finalize
    from ttlgen.emit.kernels import kernel_files

    files = kernel_files(all_kernels()[name], EmitContext(default_templates_dir()))
    (compute,) = [f for f in files if f.path.endswith("compute.cpp")]
    return finalize(compute).decode("utf-8")


def calls(source: str, *names: str) -> list[str]:
    """The calls to any of ``names`` in source order, with their arguments."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\(([^;]*)\);")
    return [f"{m.group(1)}({m.group(2)})" for m in pattern.finditer(source)]
