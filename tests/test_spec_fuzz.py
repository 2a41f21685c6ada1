"""Seeded mutations of the real specs never get a traceback, a misplaced or unlocated error,
a changed tree after a failed build, a hang, or generated code that does not compile or
import (the mutator and the judge: tests/spec_fuzz.py).

The default run is CHUNKS x TRIALS_PER_CHUNK trials with fixed seeds, so a failure
reproduces: ``python -c "from tests.spec_fuzz import run_trials; print(run_trials([SEED])[0].describe())"``;
TTLGEN_LONG_TESTS=1 runs more chunks of them. TTLGEN_FUZZ_TRIALS=10000 (and optionally
TTLGEN_FUZZ_SEED, TTLGEN_FUZZ_JOBS) runs a long campaign instead, in worker processes;
`python -m tests.spec_fuzz --help` runs one alone.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from tests.conftest import LONG_TESTS
from tests.spec_fuzz import Judge, Mutation, Outcome, Trial, run_campaign, run_trials, table

# Seeds 0..3, and with TTLGEN_LONG_TESTS=1 also 4..7 in a second chunk: each chunk has trials
# that are rejected and trials that build (the assertion below), at a fraction of a
# campaign's cost (the second holds a spec rewritten as TOML, whose build recompiles every
# kernel: most of the cost of both); TTLGEN_FUZZ_TRIALS runs the long one.
CHUNKS = 2 if LONG_TESTS else 1
TRIALS_PER_CHUNK = 4
# Where a chunk that lacks a rejected or a built trial takes further seeds from.
SPARE_SEEDS = 1_000_000
SPARES_PER_CHUNK = 50
LONG_RUN = int(os.environ.get("TTLGEN_FUZZ_TRIALS", "0"))
FIRST_SEED = int(os.environ.get("TTLGEN_FUZZ_SEED", "0"))


def judge(trials: list[Trial]) -> None:
    failures = [t for t in trials if t.outcome.failed and not t.outcome.open_elsewhere]
    elsewhere = [t for t in trials if t.outcome.open_elsewhere]
    if elsewhere:
        warnings.warn(
            f"{len(elsewhere)} fuzz trial(s) in classes owned by other work (see tests/spec_fuzz.py):\n"
            + "\n".join(t.describe() for t in elsewhere[:5]),
            stacklevel=2,
        )
    assert not failures, table(trials) + "\n" + "\n".join(t.describe() for t in failures[:20])


@pytest.mark.skipif(LONG_RUN > 0, reason="TTLGEN_FUZZ_TRIALS runs the long campaign instead")
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_mutated_specs_are_rejected_in_place_or_build_code_that_compiles(chunk: int) -> None:
    first = FIRST_SEED + chunk * TRIALS_PER_CHUNK
    trials = run_trials(range(first, first + TRIALS_PER_CHUNK))
    judge(trials)
    # The mutations reach every stage: some are rejected, some still build. What a seed does
    # depends on the specs it mutates, so after a spec edit a chunk may have only one kind:
    # it then goes on with seeds of its own until it has both (each judged the same).
    wanted = {Outcome.REJECTED, Outcome.BUILT}
    spare = iter(range(SPARE_SEEDS + chunk * SPARES_PER_CHUNK, SPARE_SEEDS + (chunk + 1) * SPARES_PER_CHUNK))
    while not wanted <= {t.outcome for t in trials} and (seed := next(spare, None)) is not None:
        more = run_trials([seed])
        judge(more)
        trials += more
    assert wanted <= {t.outcome for t in trials}, table(trials)


@pytest.mark.skipif(LONG_RUN == 0, reason="set TTLGEN_FUZZ_TRIALS to run a long campaign")
def test_long_fuzz_campaign() -> None:
    trials = run_campaign(LONG_RUN, FIRST_SEED, jobs=int(os.environ.get("TTLGEN_FUZZ_JOBS", "1")))
    print(table(trials))  # shown with -s: the counts per outcome, then every trial that failed
    for trial in trials:
        if trial.outcome.failed:
            print(trial.describe())
    judge(trials)


def test_the_judge_knows_a_file_converted_to_toml_and_deleted_by_the_kind_it_had(tmp_path: Path) -> None:
    # The converted file is in neither tree: only its YAML original tells what reads it.
    judge = Judge()
    architecture = next(rel for rel, kind in judge.kinds.items() if kind == "ttlgen.architecture")
    target = next(rel for rel, kind in judge.kinds.items() if kind == "ttlgen.target")
    (tmp_path / "specs" / target).parent.mkdir(parents=True)
    (tmp_path / "specs" / target).write_text("spec: ttlgen.target/v1\n", encoding="utf-8")
    converted = architecture.rsplit(".", 1)[0] + ".toml"
    mutations = [Mutation("convert + TOML", converted, "the same data"), Mutation("delete file", converted, "removed")]
    error = {"file": f"specs/{target}", "line": 1, "column": 1, "message": "unknown architecture"}
    assert judge.misplaced(tmp_path, mutations, [error]) is None
