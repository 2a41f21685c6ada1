"""Where the test suite's CPU goes: the README's test command, run with a plugin that takes
each test's CPU time (its worker process's and its waited-for children's: subprocesses,
compilers, git), then a table per test file, costliest first.

Run: python bench/suite_cost.py [--top N] [pytest arguments ...]

Wall time on 2 cores is at best half the total, so the total is what a faster suite must
cut. The plugin is this file itself (``-p suite_cost``, found through PYTHONPATH); each
worker writes its rows to a temporary directory named by SUITE_COST_DIR.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
_rows: list[tuple[str, float, float]] = []


def _cpu() -> tuple[float, float]:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    before = _cpu()
    yield
    after = _cpu()
    _rows.append((item.nodeid, after[0] - before[0], after[1] - before[1]))


def pytest_sessionfinish(session: Any) -> None:
    folder = os.environ.get("SUITE_COST_DIR")
    if folder:
        Path(folder, f"rows-{os.getpid()}.json").write_text(json.dumps(_rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=30, help="files to list (default 30)")
    args, pytest_args = parser.parse_known_args()
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "SUITE_COST_DIR": folder, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))}
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "suite_cost", "-n", "auto", "-q", *pytest_args]
        subprocess.run(command, cwd=REPO, env=env, check=False)
        rows = [row for path in Path(folder).glob("rows-*.json") for row in json.loads(path.read_text())]
    per_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for nodeid, own, kids in rows:
        entry = per_file[nodeid.split("::")[0]]
        entry[0] += own
        entry[1] += kids
        entry[2] += 1
    total_own, total_kids = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"\n{len(rows)} tests, {total_own + total_kids:.0f} s CPU ({total_own:.0f} s in pytest's workers, {total_kids:.0f} s in their children)")
    print(f"{'CPU s':>8} {'own s':>8} {'children s':>11} {'tests':>6}  file")
    for path, (own, kids, count) in sorted(per_file.items(), key=lambda item: -(item[1][0] + item[1][1]))[: args.top]:
        print(f"{own + kids:8.1f} {own:8.1f} {kids:11.1f} {count:6d}  {path}")


if __name__ == "__main__":
    main()
