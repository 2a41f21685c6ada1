"""A readable text summary of each kernel's plan, for review and for commands that print it.

One block per kernel: its target, the strategy chosen for each op with alternatives, the
kernel-wide DST width and sync with the DST capacity they give, the DFBs unpacked to DST,
whether the output was subblocked, and the runtime compute-config fields. Only the plan's
public fields are read; nothing is decided here.
"""

from __future__ import annotations

from collections.abc import Sequence

from ttlgen.model.kernels import Kernel, Store, walk_statements, walk_values
from ttlgen.plan.kernels import LoweredKernel
from ttlgen.plan.project import ProjectPlan


def plan_summary(plan: ProjectPlan) -> str:
    """Every kernel's summary, in the plan's order, separated by blank lines."""
    return "\n".join(kernel_summary(lowered) for lowered in plan.kernels)


def kernel_summary(lowered: LoweredKernel) -> str:
    kernel = lowered.kernel
    ops = _op_names(kernel)
    lines = [f"kernel {kernel.name}", f"  target: {kernel.target}"]
    if lowered.strategies:
        lines.append("  strategies:")
        lines.extend(f"    {op_id} {ops.get(op_id, '?')}: {strategy}" for op_id, strategy in lowered.strategies)
    else:
        lines.append("  strategies: none (no op has alternatives)")
    unpacked = [int(index) for index in lowered.plan_json.get("unpack_to_dest_fp32", [])]
    lines += [
        f"  dest width: {lowered.dest_width} bits",
        f"  sync: {lowered.sync}",
        f"  DST capacity: {lowered.dst_capacity} tiles",
        f"  unpack to DST: {'DFB ' + ', '.join(map(str, unpacked)) if unpacked else 'none'}",
        f"  subblocked: {'yes' if lowered.subblocked else 'no'}",
        "  compute config:",
    ]
    lines.extend(f"    {name}: {show_value(value)}" for name, value in lowered.compute_config.items())
    return "\n".join(lines) + "\n"


def _op_names(kernel: Kernel) -> dict[str, str]:
    """Op id (e.g. "op2") -> op name, for every op of the kernel body."""
    stores = (s for s in walk_statements(kernel.body) if isinstance(s, Store))
    return {expr.id: expr.op for store in stores for expr in walk_values(store.value)}


def show_value(value: object) -> str:
    """A plan or compute-config value as the summary prints it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return _runs(value) if value else "[] (empty)"
    return str(value)


def _runs(values: Sequence[object]) -> str:
    """A per-index list as runs of equal values: '0-1 A, 2-63 B (64 entries)'."""
    parts = []
    start = 0
    for index in range(1, len(values) + 1):
        if index == len(values) or values[index] != values[start]:
            where = str(start) if start == index - 1 else f"{start}-{index - 1}"
            parts.append(f"{where} {show_value(values[start])}")
            start = index
    return f"{', '.join(parts)} ({len(values)} entries)"
