"""Wall time of `ttlgen build` and `ttlgen check` beside the floor: starting Python and
importing what ttlgen itself imports to run a command (yaml, jinja2, jsonschema_rs, typer).

Run: python bench/build.py [--runs N]

Every row generates the whole tree (there is no tree cache); the rows differ in what the
one cache that stays, Jinja's compiled templates, holds:

- "build after a spec edit": a kernel's summary edited in a copy of specs/, then `build`
  (warm template cache), what a developer runs after editing a spec;
- "check (no-op)": `check` of an up-to-date tree (warm template cache);
- "check, empty cache dir (CI)": `check` with a new, empty cache directory, as on a CI
  machine's first command.

Each row is printed in ms and as a ratio to the floor; each stays under 1 s on the 2-core
reference machine (issue 24). Rounds are interleaved (floor, then each row), and each
figure is the median over the rounds, so a noisy phase of the machine hits every row alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FLOOR = "import yaml, jinja2, jsonschema_rs, typer"

# As on a developer's machine, Python keeps bytecode caches: a shell that sets
# PYTHONDONTWRITEBYTECODE would charge every run for compiling ttlgen's own sources.
BASE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
EDITED = Path("kernels") / "elementwise.yaml"


def timed(argv: list[str], cwd: Path, env: dict[str, str], before: Callable[[], None] | None = None) -> float:
    if before is not None:
        before()
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="interleaved rounds (default 7)")
    args = parser.parse_args()
    ttlgen = [sys.executable, "-m", "ttlgen"]
    with tempfile.TemporaryDirectory(prefix="ttlgen-bench-") as scratch:
        work = Path(scratch)
        shutil.copytree(REPO / "specs", work / "specs")
        cache = work / "cache"
        env = {**BASE_ENV, "TTLGEN_CACHE_DIR": str(cache)}
        subprocess.run([*ttlgen, "build"], cwd=work, env=env, check=True, stdout=subprocess.DEVNULL)
        spec = work / "specs" / EDITED
        original = spec.read_text(encoding="utf-8")
        edits = [0]

        def edit() -> None:
            edits[0] += 1
            spec.write_text(original.replace("summary: ", f"summary: edit {edits[0]} ", 1), encoding="utf-8")

        empties = [0]

        def empty_cache() -> dict[str, str]:
            empties[0] += 1
            return {**BASE_ENV, "TTLGEN_CACHE_DIR": str(work / f"empty-{empties[0]}")}

        rows: dict[str, list[float]] = {"floor": [], "build after a spec edit": [], "check (no-op)": [], "check, empty cache dir (CI)": []}
        for _ in range(args.runs):
            rows["floor"].append(timed([sys.executable, "-c", FLOOR], work, env))
            rows["build after a spec edit"].append(timed([*ttlgen, "build"], work, env, edit))
            rows["check (no-op)"].append(timed([*ttlgen, "check"], work, env))
            rows["check, empty cache dir (CI)"].append(timed([*ttlgen, "check"], work, empty_cache()))
    floor = statistics.median(rows["floor"])
    print(f"{'row':32} {'median ms':>10} {'x floor':>8}")
    for name, samples in rows.items():
        median = statistics.median(samples)
        print(f"{name:32} {median * 1000:10.0f} {median / floor:8.2f}")


if __name__ == "__main__":
    main()
