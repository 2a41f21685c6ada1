"""CPU time of each in-process stage of the pipeline over the real specs, steady state:
load (YAML/TOML), schema check, model, plan, render (every generated file and MANIFEST).

Run: python bench/stages.py [--runs N]

Each round loads and builds everything anew, as a test or a command does (a new model:
nothing one round computed is reused by the next, the API levels' tables included); the
first round, which imports and compiles what the stages use, is left out. Each figure is
the thread's CPU time (other load on the machine slows it less than wall time), as the
median and the minimum over the rounds; "model+plan+render" is the core the test suite
pays for every tree it plans and renders.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ttlgen.emit._base import EmitContext, Templates  # noqa: E402
from ttlgen.emit._templates import default_templates_dir  # noqa: E402
from ttlgen.model.project import build_project  # noqa: E402
from ttlgen.pipeline import render  # noqa: E402
from ttlgen.plan.project import plan_project  # noqa: E402
from ttlgen.spec.load import load_specs  # noqa: E402
from ttlgen.validate.documents import validate_documents  # noqa: E402

STAGES = ("load", "schema", "model", "plan", "render")


def one_round() -> dict[str, float]:
    clock = time.thread_time
    times = [clock()]
    documents = load_specs(REPO / "specs", False)
    times.append(clock())
    assert not validate_documents(documents)
    times.append(clock())
    project = build_project(documents)
    times.append(clock())
    planned = plan_project(project)
    times.append(clock())
    render(project, planned, EmitContext(Templates(default_templates_dir())))
    times.append(clock())
    return {stage: after - before for stage, before, after in zip(STAGES, times[:-1], times[1:], strict=True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9, help="measured rounds (default 9)")
    args = parser.parse_args()
    one_round()
    rounds = [one_round() for _ in range(args.runs)]
    rows = {stage: [r[stage] for r in rounds] for stage in STAGES}
    rows["model+plan+render"] = [r["model"] + r["plan"] + r["render"] for r in rounds]
    print(f"{'stage':18} {'median ms':>10} {'min ms':>8}")
    for stage, samples in rows.items():
        print(f"{stage:18} {statistics.median(samples) * 1000:10.1f} {min(samples) * 1000:8.1f}")


if __name__ == "__main__":
    main()
