"""Time of `ttlgen validate` against the size of one kernel's expression: a chain of n nested
unary ops (depth) and a balanced tree of binary ops over n leaves (width).

Run: python bench/kernel_size.py [--max N]

Each row is one spec tree (the real specs plus one kernel), timed in-process over the
load, validate, model and plan stages; "outcome" says whether the kernel was accepted or
refused and by what (a located limit, a DST capacity error). The growth column is the time
ratio to the row before it divided by the size ratio: about 1 for linear growth, 2 for
quadratic. Issue 28: a 45-deep chain and a 2^12-leaf tree each answer in under a second
(the tree is refused: one stored value holds at most 2048 tile ops, model/kernels.py).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from ttlgen.errors import SpecErrors
from ttlgen.pipeline import plan

REPO = Path(__file__).resolve().parent.parent
UNARIES = ("tile_neg", "tile_abs")


def chain(depth: int) -> str:
    text = "x"
    for level in range(depth):
        text = f"{{op: {UNARIES[level % 2]}, args: [{text}]}}"
    return text


def tree(leaves: int) -> str:
    level = ["x"] * leaves
    while len(level) > 1:
        pairs = [f"{{op: tile_add, args: [{a}, {b}]}}" for a, b in zip(level[::2], level[1::2], strict=False)]
        level = pairs + (level[-1:] if len(level) % 2 else [])
    return level[0]


def kernel_spec(value: str) -> str:
    return f"""spec: ttlgen.kernel/v1
kernels:
  sized:
    summary: a kernel whose one expression is sized by the benchmark
    target: blackhole
    dfbs:
      x: {{index: 0, dtype: f32, block: [1, 1], input: {{shape: [1, 2]}}}}
      out: {{index: 16, dtype: f32, block: [1, 1], output: {{shape: [1, 2]}}}}
    body:
      - loop:
          var: i
          count: 2
          body:
            - wait: x
            - reserve: out
            - store: {{to: out, value: {value}}}
            - pop: x
            - push: out
    tolerance: {{pcc: 0.99, max_rel: 0.5, derivation: benchmark only}}
"""


def measure(specs: Path, value: str) -> tuple[float, str]:
    (specs / "kernels" / "sized.yaml").write_text(kernel_spec(value), encoding="utf-8")
    start = time.perf_counter()
    try:
        plan(specs)
        outcome = "accepted"
    except SpecErrors as errors:
        first = errors.diagnostics[0]
        outcome = f"refused: {first.message[:60]}"
    return time.perf_counter() - start, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max", type=int, default=10_000, help="largest n (default 10,000)")
    args = parser.parse_args()
    sizes = [n for n in (10, 20, 45, 100, 1_000, 4_096, 10_000) if n <= args.max]
    with tempfile.TemporaryDirectory(prefix="ttlgen-size-") as scratch:
        specs = Path(scratch) / "specs"
        shutil.copytree(REPO / "specs", specs)
        print(f"{'shape':6} {'n':>6} {'seconds':>8} {'growth':>7}  outcome")
        for shape, make in (("depth", chain), ("width", tree)):
            previous: tuple[int, float] | None = None
            for n in sizes:
                seconds, outcome = measure(specs, make(n))
                growth = ""
                if previous is not None and previous[1] > 0:
                    growth = f"{(seconds / previous[1]) / (n / previous[0]):7.2f}"
                print(f"{shape:6} {n:6} {seconds:8.3f} {growth:>7}  {outcome}")
                previous = (n, seconds)


if __name__ == "__main__":
    main()
