"""The edits of tests/user_edits.py (a new op, architecture and target, and kernels, as a
user adds them) still apply to the real specs and give specs that validate.

This keeps the experiment runnable: ``python -m tests.user_edits DIR`` applies them to a
copy of the repository and shows that, after ``ttlgen build`` and the snapshot update, the
whole suite passes with no test edited by hand.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli
from tests.user_edits import EDIT_NAMES, apply_user_edits
from ttlgen.model.project import Project
from ttlgen.pipeline import load_project


def test_the_user_edits_apply_to_the_real_specs_and_validate(spec_copy: Path, project: Project) -> None:
    # New names, also when the specs already hold what an earlier run of the edits added.
    taken = {k.name for k in project.kernels.kernels} | {t.name for t in project.targets.targets} | {op.name for op in project.ops.ops}
    suffix = next(
        s for s in ("", *(f"_{i}" for i in range(2, 100)))
        if not any(n.endswith(f"_user{s}") or n in (f"blackhole_next{s}", f"tile_log1p{s}", f"tile_ge{s}") for n in taken)
    )
    apply_user_edits(spec_copy, EDIT_NAMES, suffix)
    result = run_cli("validate", "--specs", spec_copy)
    assert result.exit_code == 0, result.stderr
    edited = load_project(spec_copy)
    assert {f"tile_log1p{suffix}", f"tile_ge{suffix}"} <= {op.name for op in edited.ops.ops}
