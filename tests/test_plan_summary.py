"""The plan summary of every shipped kernel, snapshotted so a review shows how plans change.

A change to a spec, the resolver or the lowering that changes a kernel's strategies, DST
width, sync, unpack set, subblocking or compute config shows up here as a few readable lines
(tests/__snapshots__/test_plan_summary/), besides the generated kernels it rewrites.
"""

from __future__ import annotations

from syrupy.assertion import SnapshotAssertion

from tests.conftest import TextSnapshot
from ttlgen.plan.project import ProjectPlan
from ttlgen.plan.summary import kernel_summary, plan_summary


def test_plan_summary_of_the_shipped_kernels(plan: ProjectPlan, snapshot: SnapshotAssertion) -> None:
    assert plan_summary(plan) == snapshot(extension_class=TextSnapshot)


def test_summary_shows_the_unpack_set_and_the_runtime_list_as_runs(plan: ProjectPlan) -> None:
    (joint,) = [k for k in plan.kernels if k.kernel.name == "joint_resolution_f32"]
    text = kernel_summary(joint)
    assert "  unpack to DST: DFB 0, 1\n" in text
    assert "    unpack_to_dest_mode: 0-1 UnpackToDestFp32, 2-63 Default (64 entries)\n" in text
    assert "    op1 tile_add: sfpu\n" in text
