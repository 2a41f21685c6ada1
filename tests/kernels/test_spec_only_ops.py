"""Adding an op whose math the specs state is a spec edit, and every op is complete.

The op -> math map comes from the specs (the emulation spec says what each tt-metal call
computes), and the math of each function is stated once (specs/ops/math.yaml): the emulator's
fp32 header is generated from it and the float64 reference interprets it. So a new op whose
math the language states (a unary and a binary below) is spec edits alone: its math, the
API's declarations of its functions, their emulator bindings, its name in an op family, its
spelling and a kernel (tests/test_scaffold.py goes there from `ttlgen new op`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kernel_helpers import all_kernels

from tests.conftest import run_cli
from ttlgen.device.formats import to_bf16
from ttlgen.model.kernels import Store, walk_statements, walk_values
from ttlgen.model.project import Project
from ttlgen.model.tt_metal_api import KernelKind
from ttlgen.pipeline import load_project
from ttlgen.run import build_kernel, compare, make_inputs, reference, reference_of, run_lowered

# Families whose ops the lowering expresses through kernel-level steps (copy, pack, DST
# slots), never as an op of a kernel body: they have no spelling of their own.
KERNEL_STEP_FAMILIES = frozenset(["Copy", "DstIndex", "Store", "Fill"])

def test_every_op_has_a_spelling_an_emulator_routine_and_a_reference(project: Project) -> None:
    emulation = project.api.emulation
    assert emulation is not None
    ops = [op for op in project.ops.ops if not set(op.primitive.names) & KERNEL_STEP_FAMILIES]
    assert len(ops) >= 15
    for op in ops:
        keys = op.spelling_keys
        assert all(project.spelling.has_spelling(op.name, key) for key in keys), f"{op.name}: no spelling"
        for level in project.spelling.levels:
            for key in keys:
                spelling = level.spelling(op.name, key)
                assert spelling is not None
                if spelling.absent is not None:
                    assert not spelling.forms(), f"{op.name}: absent at {level.level}, yet spelled"
                    continue
                found = project.api.level(level.level)
                assert found is not None
                for form in spelling.forms():
                    declared = found.forms(form.function, KernelKind.COMPUTE)
                    assert declared, f"{op.name}: {form.function} is not declared at {level.level}"
                    for api_form in declared:
                        assert emulation.binding(api_form) is not None, f"{op.name}: {form.function} has no emulator routine at {level.level}"
        if all(level.spelling(op.name, key).absent for level in project.spelling.levels for key in keys):  # type: ignore[union-attr]
            continue  # no release has a function for it: nothing computes it
        math = project.spelling.math_of(op.name)
        assert math is not None, f"{op.name}: no binding says what its call computes"
        assert callable(reference_of(math)), f"{op.name}: no float64 reference for {math.name!r}"


def test_every_shipped_kernel_runs_against_references_from_the_specs() -> None:
    for lowered in all_kernels().values():
        body = lowered.kernel.body
        used = {v.op for s in walk_statements(body) if isinstance(s, Store) for v in walk_values(s.value)}
        assert {op for op, _ in lowered.op_math} == used, lowered.kernel.name
        for _, math in lowered.op_math:
            reference_of(math)  # a UsageError when there is none


# ------------------------------------------------------------------ math added by spec alone

# A unary with an approximate form and a binary, neither of which the shipped specs state:
# their math, their API functions (as a release would declare them), their emulator
# bindings, their ops, spellings and a kernel are spec edits; nothing else changes.
NEW_MATH = """\
  cube: {unary: "x * x * x", approximate: "x * x * x * (1 - 1 / 16)"}
  hypot: {binary: "sqrt(x * x + y * y)"}
"""
NEW_FUNCTIONS = """\
      - signature: void cube_tile_init()
        configures: [sfpu]
      - template <bool approximation = false> void cube_tile(uint32_t idst)
      - signature: void hypot_binary_tile_init()
        configures: [sfpu]
      - void hypot_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
"""
NEW_BINDINGS = """\
  cube_tile_init: api::no_op()
  cube_tile: {computes: cube, approximate: approximation, call: "compute::sfpu_unary(function, idst)"}
  hypot_binary_tile_init: api::no_op()
  hypot_binary_tile: {computes: hypot, call: "compute::sfpu_binary(function, idst0, idst1, odst)"}
"""
CUBE_HYPOT_KERNEL = """\
spec: ttlgen.kernel/v1
kernels:
  cube_hypot_bf16:
    summary: out = hypot(cube(x), y) over bf16 tiles.
    target: blackhole
    dfbs:
      x: {index: 0, dtype: bf16, block: [1, 2], input: {shape: [2, 2]}}
      y: {index: 1, dtype: bf16, block: [1, 2], input: {shape: [2, 2]}}
      out: {index: 16, dtype: bf16, block: [1, 2], output: {shape: [2, 2]}}
    body:
      - loop:
          var: i
          count: 2
          body:
            - wait: [x, y]
            - reserve: out
            - store: {to: out, value: {op: tile_hypot, args: [{op: tile_cube, args: [x]}, y]}}
            - pop: [x, y]
            - push: out
    tolerance: {pcc: 0.999, max_rel: 2.0e-2, derivation: "bf16: two SFPU results truncated to a 16-bit DST (2^-7 each) and the bf16 pack"}
"""


def _insert_after(path: Path, anchor: str, text: str) -> None:
    content = path.read_text(encoding="utf-8")
    assert content.count(anchor) == 1, f"{path}: {anchor!r}"
    path.write_text(content.replace(anchor, anchor + text, 1), encoding="utf-8")


def _add_cube_and_hypot(specs: Path, cube_call: str = "cube_tile({dst})") -> None:
    """The spec edits that add tile_cube and tile_hypot, with their math, at every level."""
    math = specs / "ops" / "math.yaml"
    math.write_text(math.read_text(encoding="utf-8").rstrip("\n") + "\n" + NEW_MATH, encoding="utf-8")
    for level in ("current", "legacy"):
        content = (specs / "tt_metal" / f"{level}.yaml").read_text(encoding="utf-8")
        header = content.index("  api/compute/compute_kernel_api.h:\n")
        functions = content.index("    functions:\n", header) + len("    functions:\n")
        (specs / "tt_metal" / f"{level}.yaml").write_text(content[:functions] + NEW_FUNCTIONS + content[functions:], encoding="utf-8")
    emulation = specs / "tt_metal" / "emulation.yaml"
    emulation.write_text(emulation.read_text(encoding="utf-8").rstrip("\n") + "\n" + NEW_BINDINGS, encoding="utf-8")
    ops = specs / "ops" / "elementwise.yaml"
    content = ops.read_text(encoding="utf-8")
    for family, op in (("  sfpu_binary:\n", "tile_hypot"), ("  sfpu_unary:\n", "tile_cube")):
        names = content.index("    names: [", content.index(family)) + len("    names: [")
        content = content[:names] + f"{op}, " + content[names:]
    ops.write_text(content, encoding="utf-8")
    _insert_after(
        specs / "ops" / "tt_metal_spelling.yaml",
        "ops:\n",
        f'  tile_cube:\n    sfpu: {{init: cube_tile_init(), call: "{cube_call}"}}\n'
        "  tile_hypot:\n    sfpu: {init: hypot_binary_tile_init(), call: \"hypot_binary_tile({lhs.dst}, {rhs.dst}, {dst})\"}\n",
    )
    (specs / "kernels" / "cube_hypot.yaml").write_text(CUBE_HYPOT_KERNEL, encoding="utf-8")


@pytest.mark.device
def test_functions_added_to_the_math_spec_alone_run_on_the_emulator_against_their_reference(spec_copy: Path) -> None:
    _add_cube_and_hypot(spec_copy)
    result = run_cli("run", "cube_hypot_bf16", "--specs", spec_copy, "--seed", "5")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.startswith("cube_hypot_bf16 (seed 5): PASS")


@pytest.mark.device
def test_the_emulator_and_the_reference_follow_the_approximate_form_a_call_selects(spec_copy: Path) -> None:
    # The approximate cube is 6% below the exact one, 3x the kernel's tolerance.
    _add_cube_and_hypot(spec_copy, cube_call="cube_tile<true>({dst})")
    project = load_project(spec_copy)
    lowered = build_kernel(spec_copy, "cube_hypot_bf16")
    assert lowered.approximate == {"tile_cube"}
    inputs = make_inputs(lowered.kernel, np.random.default_rng(5))
    report, outputs, _ = run_lowered(lowered, 5, inputs, api=project.api)
    assert report.passed, report.error or report.outputs
    # Against the exact form's reference the same output misses the tolerance.
    stored = {name: to_bf16(data).astype(np.float64) for name, data in inputs.items()}
    exact = reference(lowered.kernel, stored, dict(lowered.op_math), lowered.fills)
    assert compare(outputs["out"], exact["out"]).max_rel > 2 * lowered.kernel.tolerance.max_rel


def test_a_call_selects_the_approximate_form_by_its_template_argument_or_the_default(spec_copy: Path) -> None:
    _add_cube_and_hypot(spec_copy)
    for level in ("current", "legacy"):
        path = spec_copy / "tt_metal" / f"{level}.yaml"
        path.write_text(path.read_text(encoding="utf-8").replace("<bool approximation = false>", "<bool approximation = APPROX>"), encoding="utf-8")
    # APPROX takes the emulator's value (emulation.yaml `defines`): false.
    assert build_kernel(spec_copy, "cube_hypot_bf16").approximate == frozenset()
    emulation = spec_copy / "tt_metal" / "emulation.yaml"
    emulation.write_text(emulation.read_text(encoding="utf-8").replace('APPROX: "false"', 'APPROX: "true"'), encoding="utf-8")
    assert build_kernel(spec_copy, "cube_hypot_bf16").approximate == {"tile_cube"}
