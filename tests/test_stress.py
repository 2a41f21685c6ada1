"""The standing stress suite: builds killed at random moments, builds, checks and diffs of
one tree racing each other, and inputs at the size limits. Small seeded sizes by default;
TTLGEN_STRESS=N multiplies every campaign by N (TTLGEN_LONG_TESTS=1 by 2). The kills and
races are about what the tree goes through, not what it holds: they build the real specs
without their kernels (tests/tree_support.py).

Related campaigns live beside their subject: kills at every file-system step in
tests/test_write_faults.py, Ctrl-C in tests/test_interrupts.py, a spec saved during
builds in tests/test_spec_saved_during_builds.py, hostile text in tests/injection/, the
spec fuzzer in tests/test_spec_fuzz.py.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import LONG_TESTS, REPO, real_project, run_cli
from tests.tree_support import forked_ttlgen, small_render, small_specs, tree, write_built
from ttlgen.pipeline import plan
from ttlgen.write import recover

SCALE = int(os.environ.get("TTLGEN_STRESS", "2" if LONG_TESTS else "1"))


def ttlgen(*args: str | Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ttlgen", *map(str, args)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "TTLGEN_CACHE_DIR": str(tmp_path / "cache")}


def test_a_build_killed_at_random_moments_leaves_the_old_or_the_new_tree(tmp_path: Path, env: dict[str, str]) -> None:
    specs = small_specs(tmp_path / "specs")
    out = write_built(tmp_path / "generated")
    fresh = tree(out)
    rng = random.Random(24)
    for _ in range(3 * SCALE):
        (out / "docs" / "komorebi-abi.md").write_text("stale\n")
        stale = tree(out)
        child = ttlgen("build", "--specs", specs, "--out", out, env=env)
        time.sleep(rng.uniform(0.05, 1.2))
        child.send_signal(signal.SIGKILL)
        child.wait()
        recover(out)  # what every command does first
        assert tree(out) in (stale, fresh)
        assert [p.name for p in tmp_path.iterdir() if ".ttlgen-" in p.name] == []


def test_builds_checks_and_diffs_of_one_tree_racing_each_other_all_answer(tmp_path: Path) -> None:
    specs = small_specs(tmp_path / "specs")
    out = write_built(tmp_path / "generated")
    commands = ["build", "check", "diff"] * (2 * SCALE)
    random.Random(28).shuffle(commands)
    (out / "docs" / "komorebi-abi.md").write_text("stale\n")
    # Processes of their own, forked from this one (tests/tree_support.py).
    logs = [tmp_path / f"{number}-{command}.log" for number, command in enumerate(commands)]
    children = [
        forked_ttlgen(command, "--specs", specs, "--out", out, cwd=tmp_path, stderr=log)
        for command, log in zip(commands, logs, strict=True)
    ]
    for command, child, log in zip(commands, children, logs, strict=True):
        child.join(timeout=120)
        stderr = log.read_text(encoding="utf-8")
        log.unlink()
        # check and diff answer "no" (1) before the build swaps the tree in and "yes" after;
        # never a mixed tree, a traceback or a failure to read.
        assert child.exitcode in (0, 1) if command != "build" else child.exitcode == 0, stderr
        assert "Traceback" not in stderr
    assert tree(out) == small_render()
    assert [p.name for p in tmp_path.iterdir() if ".ttlgen-" in p.name] == []


def test_a_line_near_the_file_size_limit_is_read_or_refused_quickly(spec_copy: Path) -> None:
    kernel = spec_copy / "kernels" / "long_line.yaml"
    kernel.write_text("spec: ttlgen.kernel/v1\n# " + "x" * 1_000_000 + "\nkernels: {}\n")
    start = time.process_time()
    result = run_cli("validate", "--specs", spec_copy)
    assert time.process_time() - start < 5.0
    assert result.exit_code == 2
    assert result.stderr.startswith("specs/kernels/long_line.yaml:")


def _sized_kernel(value: str) -> str:
    return (
        "spec: ttlgen.kernel/v1\n"
        "kernels:\n"
        "  sized:\n"
        "    summary: one expression of the size under test\n"
        "    target: blackhole\n"
        "    dfbs:\n"
        "      x: {index: 0, dtype: f32, block: [1, 1], input: {shape: [1, 2]}}\n"
        "      out: {index: 16, dtype: f32, block: [1, 1], output: {shape: [1, 2]}}\n"
        # In a loop, as kernels are: hoisting looks at every call of a loop's body.
        f"    body: [{{loop: {{var: i, count: 2, body: [{{wait: x}}, {{reserve: out}}, {{store: {{to: out, value: {value}}}}}, {{pop: x}}, {{push: out}}]}}}}]\n"
        "    tolerance: {pcc: 0.99, max_rel: 0.5, derivation: stress only}\n"
    )


def _tree(leaves: int, op: str) -> str:
    level = ["x"] * leaves
    while len(level) > 1:
        level = [f"{{op: {op}, args: [{a}, {b}]}}" for a, b in zip(level[::2], level[1::2], strict=False)] + (level[-1:] if len(level) % 2 else [])
    return level[0]


@pytest.fixture
def sized_specs(spec_copy: Path) -> Path:
    """The real specs with the sized kernel as their only kernel, so planning it is most of
    what a measurement times."""
    for kernel_spec in (spec_copy / "kernels").glob("*.yaml"):
        kernel_spec.unlink()
    return spec_copy


def _plan_seconds(specs: Path, value: str) -> float:
    (specs / "kernels" / "sized.yaml").write_text(_sized_kernel(value))
    start = time.process_time()
    plan(specs)
    return time.process_time() - start


def _binary_op() -> str:
    # The sized specs' ops are the real ones (only their kernels are gone).
    project = real_project()
    # A plain elementwise binary: both operands routed by its strategy (tile_accumulate's
    # contribution, routed by its producer, cannot read x twice in two unpack modes).
    return next(
        op.name for op in project.ops.ops if len(op.operands) == 2 and op.primitive.fixed == "ElementwiseBinary" and op.by_producer is None
    )


def _unary_op() -> str:
    project = real_project()
    return next(op.name for op in project.ops.ops if len(op.operands) == 1 and op.primitive.fixed == "ElementwiseUnary")


def test_planning_grows_linearly_with_the_width_of_an_expression(sized_specs: Path) -> None:
    op = _binary_op()
    tries = 3 if LONG_TESTS else 2
    own = min(_plan_seconds(sized_specs, "x") for _ in range(3))

    def cost(value: str) -> float:  # the best of a few tries, less the specs' own planning
        return min(_plan_seconds(sized_specs, value) for _ in range(tries)) - own

    leaves = 512 if LONG_TESTS else 256
    small, large = cost(_tree(leaves, op)), cost(_tree(4 * leaves, op))
    # Four times the leaves: about four times the time (noise aside); sixteen would be quadratic.
    assert large < 10 * max(small, 0.05), (small, large)


def test_a_deep_chain_of_unary_ops_plans_at_once(sized_specs: Path) -> None:
    op = _unary_op()
    value = "x"
    for _ in range(45):
        value = f"{{op: {op}, args: [{value}]}}"
    # Counting DST slots twice per operand took 2^45 steps here.
    assert _plan_seconds(sized_specs, value) < 5.0


def test_a_value_of_more_tile_ops_than_the_limit_is_refused_at_the_value(sized_specs: Path) -> None:
    from ttlgen.model.kernels import OPS_PER_VALUE_LIMIT

    op = _binary_op()
    (sized_specs / "kernels" / "sized.yaml").write_text(_sized_kernel(_tree(OPS_PER_VALUE_LIMIT + 2, op)))
    start = time.process_time()
    result = run_cli("validate", "--specs", sized_specs)
    assert result.exit_code == 2
    assert result.stderr.startswith("specs/kernels/sized.yaml:9:"), result.stderr
    assert f"holds {OPS_PER_VALUE_LIMIT + 1} tile ops, more than the {OPS_PER_VALUE_LIMIT}" in result.stderr
    # Refused before planning: well under what planning that many ops takes.
    assert time.process_time() - start < 2.0
