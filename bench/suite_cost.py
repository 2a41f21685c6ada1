"""Where the test suite's CPU goes: the README's test command, run with a plugin that takes
each test's CPU time (its worker process's and its waited-for children's: subprocesses,
compilers, git), then a table per test file, costliest first; then the workers' CPU in each
stage of the pipeline (load, validate, model, plan, render: every call, from any test or
in-process CLI run), and in each command the tests run in-process (``run_cli``).

Run: python bench/suite_cost.py [--top N] [pytest arguments ...]

Wall time on 2 cores is at best half the total, so the total is what a faster suite must
cut. The plugin is this file itself (``-p suite_cost``, found through PYTHONPATH); each
worker writes its rows to a temporary directory named by SUITE_COST_DIR.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
_rows: list[tuple[str, float, float]] = []
# (table, name) -> [calls, CPU s]: pipeline stages and in-process CLI commands.
_spent: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0])


def _cpu() -> tuple[float, float]:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _own_cpu() -> float:
    return _cpu()[0]


def _timed(table: str, name: str | Callable[[tuple[Any, ...]], str], function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, adding each call's CPU to ``_spent`` under ``name`` (or what it makes of
    the call's arguments)."""
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = _own_cpu()
        try:
            return function(*args, **kwargs)
        finally:
            entry = _spent[table, name(args) if callable(name) else name]
            entry[0] += 1
            entry[1] += _own_cpu() - start

    return timed


def _wrap_stages() -> None:
    """Wrap each stage where it is defined, before conftest.py or a test module imports it
    by name: this runs when pytest loads the plugin, before it loads any conftest.py."""
    from typer.testing import CliRunner

    from ttlgen.model import project as model
    from ttlgen.plan import project as plan
    from ttlgen.spec import load
    from ttlgen.validate import documents

    for module, attribute, stage in (
        (load, "load_specs", "load"), (documents, "validate_documents", "validate"),
        (model, "build_project", "model"), (plan, "plan_project", "plan"),
    ):  # fmt: skip
        setattr(module, attribute, _timed("stage", stage, getattr(module, attribute)))
    from ttlgen import pipeline  # binds the wrapped stages

    pipeline.render = _timed("stage", "render", pipeline.render)

    def command(args: tuple[Any, ...]) -> str:
        argv = args[2] if len(args) > 2 else None
        return str(argv[0]) if argv else "(none)"

    CliRunner.invoke = _timed("cli", command, CliRunner.invoke)  # type: ignore[method-assign]


if os.environ.get("SUITE_COST_DIR"):  # in pytest's processes, not in this script's
    _wrap_stages()


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
        Path(folder, f"spent-{os.getpid()}.json").write_text(json.dumps([[*key, *value] for key, value in _spent.items()]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=30, help="files to list (default 30)")
    parser.add_argument("--tests", type=int, default=0, help="also list the costliest tests (default none)")
    args, pytest_args = parser.parse_known_args()
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "SUITE_COST_DIR": folder, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))}
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "suite_cost", "-n", "auto", "-q", *pytest_args]
        subprocess.run(command, cwd=REPO, env=env, check=False)
        rows = [row for path in Path(folder).glob("rows-*.json") for row in json.loads(path.read_text())]
        spent: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0])
        for record in Path(folder).glob("spent-*.json"):
            for table, name, calls, cpu in json.loads(record.read_text()):
                spent[table, name][0] += calls
                spent[table, name][1] += cpu
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
    if args.tests:
        print(f"\n{'CPU s':>8} {'own s':>8} {'children s':>11}  test")
        for nodeid, own, kids in sorted(rows, key=lambda row: -(row[1] + row[2]))[: args.tests]:
            print(f"{own + kids:8.1f} {own:8.1f} {kids:11.1f}  {nodeid}")
    for table, title in (("stage", "pipeline stage (workers only)"), ("cli", "command run in-process (run_cli; its stages included)")):
        print(f"\n{'CPU s':>8} {'calls':>6} {'ms/call':>8}  {title}")
        for (_, name), (calls, cpu) in sorted(((k, v) for k, v in spent.items() if k[0] == table), key=lambda item: -item[1][1]):
            print(f"{cpu:8.1f} {int(calls):6d} {1000 * cpu / calls:8.1f}  {name}")


if __name__ == "__main__":
    main()
