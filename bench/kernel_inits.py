"""Init and data-format reconfiguration calls each generated compute kernel executes per
packed tile, without and with the hoisting pass (ttlgen/plan/hoist.py).

Run: python bench/kernel_inits.py [--specs DIR] [--level LEVEL]
"Before" is the lowering with hoisting and the redundant-reconfiguration pass
(ttlgen/plan/data_formats.py) off: every init and reconfiguration where the lowering puts
it, as the kernels were generated before issue 9; "after" is what `ttlgen build` writes. Counts come from walking each compute program as it runs
(ttlgen/plan/init_counts.py): inits are the start-up, op, copy and uninit calls,
reconfigurations the unpacker and packer data-format calls; "in loops" counts both kinds
executed inside a loop, the part that grows with the number of tiles.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ttlgen.pipeline import load_project  # noqa: E402
from ttlgen.plan.init_counts import count  # noqa: E402
from ttlgen.plan.kernels import plan_kernels  # noqa: E402


def table(specs: Path) -> list[tuple[str, str, tuple[float, float, float], tuple[float, float, float], int]]:
    project = load_project(specs)
    args = (project.kernels.kernels, project.ops, project.targets, project.spelling, project.api)
    before = {k.kernel.name: count(k.compute) for k in plan_kernels(*args, hoist_inits=False)}
    rows = []
    for k in plan_kernels(*args):
        b, a = before[k.kernel.name], count(k.compute)
        rows.append((
            k.kernel.name, k.api_level,
            (b.inits_per_tile, b.reconfigs_per_tile, b.looped_per_tile),
            (a.inits_per_tile, a.reconfigs_per_tile, a.looped_per_tile),
            a.tiles,
        ))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=Path, default=REPO / "specs")
    parser.add_argument("--level", help="generate at this API level (pins the shipped runtime API's version)")
    opts = parser.parse_args()
    specs = opts.specs
    with tempfile.TemporaryDirectory() as tmp:
        if opts.level:
            specs = Path(tmp) / "specs"
            shutil.copytree(opts.specs, specs)
            path = specs / "targets" / "runtime_apis.yaml"
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace("pinned_runtime_version: current", f"pinned_runtime_version: {opts.level}", 1), encoding="utf-8")
        rows = table(specs)
    print(f"{'kernel':<28}{'level':>8}{'tiles':>7}{'inits/tile':>16}{'reconfigs/tile':>16}{'in loops/tile':>16}")
    print(f"{'':<43}" + f"{'before':>8}{'after':>8}" * 3)
    for name, level, before, after, tiles in rows:
        cells = "".join(f"{b:>8.2f}{a:>8.2f}" for b, a in zip(before, after, strict=True))
        print(f"{name:<28}{level:>8}{tiles:>7}{cells}")
    n = len(rows)
    means = "".join(f"{sum(r[2][j] for r in rows) / n:>8.2f}{sum(r[3][j] for r in rows) / n:>8.2f}" for j in range(3))
    print(f"{'mean':<43}{means}")


if __name__ == "__main__":
    main()
