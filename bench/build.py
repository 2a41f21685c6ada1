"""Wall time of `ttlgen build` (cold, into an empty tree) and a no-op `ttlgen check`,
beside the floor: starting Python and importing the runtime dependencies.

Run: python bench/build.py [--runs N]
Targets on the 2-core reference machine: build <= 1.7x floor, check < 1.0x floor.
A no-op check answers from the tree cache (content hashes of every input, see
ttlgen/tree_cache.py), and a build into an empty tree of inputs the cache has seen copies
the stored blobs; the --no-cache rows show the full generation both avoid.
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
FLOOR = "import yaml, jinja2, jsonschema, typer"


# As on a developer's machine, Python keeps bytecode caches: a shell that sets
# PYTHONDONTWRITEBYTECODE would charge every run for compiling ttlgen's own sources.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str], cwd: Path, before: Callable[[], None] | None = None) -> float:
    if before is not None:
        before()
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=ENV, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    # The output tree sits on the project's own file system, as generated/ does (a tmpfs
    # or overlay /tmp can be several times slower or faster at creating files).
    with tempfile.TemporaryDirectory(dir=REPO, prefix=".bench-") as tmp:
        out = Path(tmp) / "generated"
        build = [sys.executable, "-m", "ttlgen", "build", "--specs", str(REPO / "specs"), "--out", str(out)]
        check = [sys.executable, "-m", "ttlgen", "check", "--specs", str(REPO / "specs"), "--out", str(out)]
        full_check = [*check, "--no-cache"]
        full_build = [*build, "--no-cache"]
        floor = [sys.executable, "-c", FLOOR]

        def clear() -> None:
            shutil.rmtree(out, ignore_errors=True)

        # Warm the OS file cache and Python's bytecode cache once, as a developer's machine is.
        timed(floor, REPO)
        timed(build, REPO, clear)
        floor_t = [timed(floor, REPO) for _ in range(args.runs)]
        build_t = [timed(build, REPO, clear) for _ in range(args.runs)]
        timed(build, REPO, clear)
        check_t = [timed(check, REPO) for _ in range(args.runs)]
        full_t = [timed(full_check, REPO) for _ in range(args.runs)]
        full_build_t = [timed(full_build, REPO, clear) for _ in range(args.runs)]

    f, b, c, n = median_ms(floor_t), median_ms(build_t), median_ms(check_t), median_ms(full_t)
    nb = median_ms(full_build_t)
    rows = [
        ("python + import deps (floor)", f, 1.0, "-"),
        ("ttlgen build (cold, empty out)", b, b / f, "<= 1.7x"),
        ("ttlgen check (no-op)", c, c / f, "< 1.0x"),
        ("ttlgen check --no-cache", n, n / f, "-"),
        ("ttlgen build --no-cache (empty out)", nb, nb / f, "-"),
    ]
    print(f"median of {args.runs} runs")
    print(f"{'command':34} {'ms':>9} {'x floor':>8} {'target':>8}")
    for name, ms, ratio, target in rows:
        print(f"{name:34} {ms:9.1f} {ratio:8.2f} {target:>8}")


if __name__ == "__main__":
    main()
