"""Adding an op whose math the emulator already has is a spec edit, and every op is complete.

The op -> math map comes from the specs (the emulation spec says what each tt-metal call
computes), the emulator's math library is one table (ttlgen/device/include/ttlemu/math.hpp)
and the float64 references are another (ttlgen.run.MATH) with the same names, so a new SFPU
unary such as silu or square needs its name in an ops family, its spelling and a kernel: no code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kernel_helpers import all_kernels

from tests.conftest import REPO, run_cli
from tests.spec_patch import apply_edits
from tests.user_edits import op_edits, unused_sfpu_unaries
from ttlgen.model.kernels import Store, walk_statements, walk_values
from ttlgen.model.project import Project
from ttlgen.model.tt_metal_api import MATH_FUNCTION, KernelKind
from ttlgen.run import MATH

MATH_LIBRARY = REPO / "ttlgen" / "device" / "include" / "ttlemu" / "math.hpp"
# Families whose ops the lowering expresses through kernel-level steps (copy, pack, DST
# slots), never as an op of a kernel body: they have no spelling of their own.
KERNEL_STEP_FAMILIES = frozenset(["Copy", "DstIndex", "Store", "Fill"])

def _library_unaries() -> set[str]:
    return set(re.findall(r"^\s*X\((\w+), ", MATH_LIBRARY.read_text(encoding="utf-8"), re.MULTILINE))


@pytest.mark.device
def test_an_sfpu_unary_the_emulator_computes_is_added_through_specs_alone(spec_copy: Path, project: Project) -> None:
    # Whichever such unary the specs do not use yet (silu and square today): its name in the
    # SFPU unary family, its spelling and a kernel are the whole change (tests/user_edits.py).
    unused = unused_sfpu_unaries(project)
    if not unused:
        pytest.skip("the specs already use every SFPU unary the emulator computes")
    function, math = unused[0]
    apply_edits(spec_copy, op_edits(math, function), case="a new SFPU unary")
    result = run_cli("run", f"{math}_bf16", "--specs", spec_copy, "--seed", "7")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.startswith(f"{math}_bf16 (seed 7): PASS")


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
        assert math in MATH, f"{op.name}: no float64 reference for {math!r}"


def test_every_shipped_kernel_runs_against_references_from_the_specs() -> None:
    for lowered in all_kernels().values():
        body = lowered.kernel.body
        used = {v.op for s in walk_statements(body) if isinstance(s, Store) for v in walk_values(s.value)}
        assert {op for op, _ in lowered.op_math} == used, lowered.kernel.name
        assert all(math in MATH for _, math in lowered.op_math)


def test_the_math_library_and_the_references_name_the_same_unaries(project: Project) -> None:
    emulation = project.api.emulation
    assert emulation is not None
    library = _library_unaries()
    assert {"exp", "silu", "relu"} <= library
    assert library <= set(MATH)
    for name, bindings in emulation.bindings:
        for binding in bindings:
            if binding.computes is None:
                continue
            assert binding.computes in MATH, f"{name}: no reference for {binding.computes!r}"
            uses_table = any(getattr(a, "text", None) == MATH_FUNCTION for a in binding.call.args)
            if uses_table and binding.call.function.endswith("sfpu_unary"):
                assert binding.computes in library, f"{name}: {binding.computes!r} is not in math.hpp"
