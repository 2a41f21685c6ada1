"""Tests against tt-metal as released (the pinned ttnn wheels): what they need, and when
they may skip.

They need the package index (pip downloads the pinned wheels) and, for the hardware path,
a Python 3.12 interpreter. Where either is missing they skip with the reason; with
$TTLGEN_REQUIRE_UPSTREAM set (CI sets it, .ci/run), a skip would hide that the check did not
run, so it fails instead.

The wheels, their extracted headers and the ttnn environment are slow to make (seconds to
a minute) and keyed by the pinned sha256, so the suite keeps using the user's upstream
cache, as it does the emulator's builds, rather than the private cache root of the run
(tests/conftest.py moves $TTLGEN_CACHE_DIR when the session starts, after this module is
imported).
"""

from __future__ import annotations

import os

import pytest
from upstream_helpers import CompiledMutant, Edit, mutant_dir, project, targets

from ttlgen import cache
from ttlgen.upstream import fetch, jit
from ttlgen.upstream.compile import Outcome, Target, compile_units, units
from ttlgen.upstream.project import architectures

os.environ.setdefault(fetch.CACHE_ENV, str(cache.cache_root() / "upstream"))



@pytest.fixture(scope="session")
def compiled_mutant(tmp_path_factory: pytest.TempPathFactory) -> CompiledMutant:
    """``compiled_mutant(edit)``: a copy of the first generated kernel whose compute source
    ``edit`` changes (given the kernel's API level and the source), compiled against the real
    headers of its level as tt-metal's JIT compiles it on TRISC0 (unpack) of the first
    architecture: the outcome and what it was compiled against; a skip when ``edit`` changes
    no kernel. tests/upstream/test_compile.py and test_mutants.py make some of the same
    mutants (the same kernel, level and changed source): each is copied and compiled once
    per process, in a directory that lives as long as the process, since the outcome names
    its files and the mutant tests compile them again against the emulator's headers."""
    root = tmp_path_factory.mktemp("mutants")
    made: dict[tuple[str, str, str], tuple[Outcome, Target]] = {}

    def compiled(edit: Edit) -> tuple[Outcome, Target]:
        for kernel, target in targets():
            level = project().api.level(target.level)
            assert level is not None
            changed = edit(level, kernel.source("compute").read_text(encoding="utf-8"))
            if changed is None:
                continue
            key = (kernel.name, target.level, changed)
            if key not in made:
                mutant = mutant_dir(root / f"mutant{len(made)}", kernel, lambda _text, changed=changed: changed)
                assert mutant is not None
                arch = architectures(project())[0][0]
                (unit,) = units([(mutant, target)], [arch], [jit.UNPACK])
                (outcome,) = compile_units([unit], batch=False)
                made[key] = (outcome, target)
            return made[key]
        pytest.skip("no generated kernel has a call this mutation applies to")

    return compiled
