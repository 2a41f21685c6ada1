"""Wall time of `ttlgen build` and `ttlgen check` beside the floor: starting Python and
importing the runtime dependencies (yaml, jinja2, jsonschema, jsonschema_rs, typer).

Run: python bench/build.py [--runs N]
Targets on the 2-core reference machine (issue 8): a build that generates <= 1.7x floor, a
no-op check < 1.0x floor. The rows:

- "build after a spec edit": what a developer runs after editing a spec. The edit (a kernel's
  summary in specs/kernels/elementwise.yaml, in a copy of specs/) changes the inputs, so the
  tree cache misses; the edited file is validated again (by jsonschema-rs: jsonschema is
  only imported to locate errors, ttlgen/validate/accept.py) and its
  kernels are lowered and printed again, with the emitters that read kernels, while every
  other part of the tree comes from the part records (ttlgen/incremental.py). This is the
  generating build the 1.7x target is about.
- "build after a comment edit": the same with a comment line added instead, which leaves the
  document's data unchanged (its schema validity is known) but still changes its text, so
  its parts are generated again.
- "build --no-cache, empty out": the same generation into an empty tree, tree cache bypassed.
- "build, inputs seen before": a build into an empty tree whose exact inputs the tree cache
  has seen (a fresh clone, a switched branch): it copies the recorded file contents and
  generates nothing, like ccache. Not the generating build.
- "check (no-op)" answers from the tree cache (content hashes of every input, see
  ttlgen/tree_cache.py); "check --no-cache" generates and compares.
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
FLOOR = "import yaml, jinja2, jsonschema, jsonschema_rs, typer"


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
        # A cache of its own: the runs below fill it (the warm-up run, then each row's own
        # runs), so no row answers from what an earlier benchmark or build recorded.
        ENV["TTLGEN_CACHE_DIR"] = str(Path(tmp) / "cache")
        out = Path(tmp) / "generated"
        specs = Path(tmp) / "specs"
        shutil.copytree(REPO / "specs", specs)
        edited = specs / "kernels" / "elementwise.yaml"
        original = edited.read_text(encoding="utf-8")
        edits = iter(range(1_000_000))

        def cli(*args: str) -> list[str]:
            return [sys.executable, "-m", "ttlgen", *args, "--specs", str(specs), "--out", str(out)]

        build, check = cli("build"), cli("check")
        floor = [sys.executable, "-c", FLOOR]

        def clear() -> None:
            shutil.rmtree(out, ignore_errors=True)

        summary = "out = a + b over bf16 tiles (FPU add_tiles)."
        assert summary in original, f"{edited} no longer holds the summary the edit changes"

        def edit() -> None:
            edited.write_text(original.replace(summary, f"{summary} Edit {next(edits)}."), encoding="utf-8")

        def comment() -> None:
            edited.write_text(original + f"# bench edit {next(edits)}\n", encoding="utf-8")

        # Warm the OS file cache and Python's bytecode cache once, as a developer's machine is.
        timed(floor, REPO)
        timed(build, REPO, clear)
        # Rows are timed round by round, so noise on a shared machine hits every row alike;
        # within a round the last edit build records the inputs the "seen before" build then finds.
        names = ["floor", "edit", "comment", "no-cache", "seen", "check", "check --no-cache"]
        samples: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(args.runs):
            samples["floor"].append(timed(floor, REPO))
            samples["edit"].append(timed(build, REPO, edit))
            samples["comment"].append(timed(build, REPO, comment))
            samples["no-cache"].append(timed([*build, "--no-cache"], REPO, clear))
            samples["seen"].append(timed(build, REPO, clear))
            samples["check"].append(timed(check, REPO))
            samples["check --no-cache"].append(timed([*check, "--no-cache"], REPO))

    rows = [
        ("python + import deps (floor)", "floor", "-"),
        ("build after a spec edit", "edit", "<= 1.7x"),
        ("build after a comment edit", "comment", "-"),
        ("build --no-cache, empty out", "no-cache", "-"),
        ("build, inputs seen before", "seen", "-"),
        ("check (no-op)", "check", "< 1.0x"),
        ("check --no-cache", "check --no-cache", "-"),
    ]
    print(f"median of {args.runs} interleaved rounds; x floor: the median of each round's ratio")
    print(f"{'command':34} {'ms':>9} {'x floor':>8} {'target':>8}")
    for label, name, target in rows:
        ratios = [t / f for t, f in zip(samples[name], samples["floor"], strict=True)]
        print(f"{label:34} {median_ms(samples[name]):9.1f} {statistics.median(ratios):8.2f} {target:>8}")


if __name__ == "__main__":
    main()
