"""Ctrl-C at any moment of a command ends it with exit 130 and one line, never a traceback,
and never leaves a half-written tree.

The default run interrupts a build of the real specs without their kernels (what the tree
holds is not the point: tests/tree_support.py) at a few delays spread over its life (imports,
load, plan, render, write); TTLGEN_LONG_TESTS=1 interrupts a build of the whole real specs
at more, and TTLGEN_STRESS_INTERRUPTS=N at N delays.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import LONG_TESTS, REPO, SPECS
from tests.tree_support import small_specs, tree

DELAYS = int(os.environ.get("TTLGEN_STRESS_INTERRUPTS", "8" if LONG_TESTS else "6"))
# Before Python has run a line of ttlgen (its own start-up and the import machinery that
# finds the package: 20-40 ms, more on a loaded machine or with no bytecode written yet) an
# interrupt is Python's to report; the delays start once ttlgen's first module has run.
FIRST_DELAY_S = 0.03


def startup_time(env: dict[str, str]) -> float:
    """The longest of three starts of Python up to ttlgen's interrupt module imported."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import ttlgen.interrupt"], env=env, check=True)
        times.append(time.perf_counter() - start)
    return max(times)


def build_time(specs: Path, out: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ttlgen", "build", "--specs", str(specs), "--out", str(out)], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


# The modules that run before the console entry installs its handler (ttlgen/__main__.py).
_START_UP = re.compile(r'File "[^"]*ttlgen/(?:__init__|__main__|interrupt)\.py", line \d+, in <module>')


def _before_the_handler(stderr: str) -> bool:
    """Whether an interrupt's traceback is one Python printed before ttlgen's handler was
    installed: every ttlgen frame in it is the start-up's module code."""
    frames = re.findall(r'File "[^"]*ttlgen/[^"]*", line \d+, in \S+', stderr)
    return stderr.rstrip().endswith("KeyboardInterrupt") and all(_START_UP.fullmatch(f) for f in frames)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_an_interrupted_build_exits_130_with_one_line_and_leaves_a_whole_tree(tmp_path: Path) -> None:
    specs = SPECS if LONG_TESTS else small_specs(tmp_path / "specs")
    env = {**os.environ, "PYTHONPATH": str(REPO), "TTLGEN_CACHE_DIR": str(tmp_path / "cache")}
    # The shorter of two builds: the first in a new environment also compiles the bytecode
    # of what it imports, and a span that long spreads the delays past the build's end.
    span = min(build_time(specs, tmp_path / "probe", env) for _ in range(2)) * 1.2
    out = tmp_path / "generated"
    shutil.copytree(tmp_path / "probe", out)  # the tree the specs build
    (out / "docs" / "komorebi-abi.md").write_text("stale\n")  # so every build writes
    stale, fresh = tree(out), tree(tmp_path / "probe")
    first = max(FIRST_DELAY_S, startup_time(env))
    outcomes = set()
    for i in range(DELAYS):
        (out / "docs" / "komorebi-abi.md").write_text("stale\n")
        delay = first + (span - first) * i / max(DELAYS - 1, 1)
        child = subprocess.Popen(
            [sys.executable, "-m", "ttlgen", "build", "--specs", str(specs), "--out", str(out)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        time.sleep(delay)
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=60)
        if _before_the_handler(stderr):  # the start-up outlasted its probes (a loaded machine)
            assert tree(out) == stale, f"an interrupt at {delay:.3f} s, before ttlgen's handler, changed the tree"
            continue
        assert child.returncode in (130, -signal.SIGINT, 0), f"at {delay:.3f} s: exit {child.returncode}\n{stderr}"
        assert "Traceback" not in stderr and "Exception ignored" not in stderr, f"at {delay:.3f} s:\n{stderr}"
        if child.returncode == 130:
            assert stderr.splitlines()[-1] == "ttlgen: interrupted"
        assert tree(out) in (stale, fresh), f"an interrupt at {delay:.3f} s left a mixed tree"
        outcomes.add(child.returncode)
    assert 130 in outcomes, "no delay interrupted the build"
    leftovers = [p.name for p in tmp_path.iterdir() if ".ttlgen-" in p.name]
    assert leftovers == [] or subprocess.run(
        [sys.executable, "-m", "ttlgen", "check", "--specs", str(specs), "--out", str(out)], env=env, capture_output=True
    ).returncode in (0, 1), "a leftover the next command could not clear"



_SWALLOWED = """\
import _signal
import time
from ttlgen import interrupt

interrupt.install()
{prelude}

class Swallows:
    def __del__(self):
        _signal.raise_signal(_signal.SIGINT)
        for _ in range(1000):  # the handler runs here, where Python cannot raise
            pass


try:
    Swallows()
    end = time.monotonic() + 10
    while time.monotonic() < end:
        pass
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted")
"""
# The worst scheduling of the interrupt's second delivery: its timer goes off before the
# code that set it has returned.
_TIMER_AT_ONCE = """
_set, _fired = _signal.setitimer, []


def at_once(which, seconds, interval=0.0):
    _set(which, seconds, interval)
    if not _fired:
        _fired.append(True)
        _signal.raise_signal(_signal.SIGALRM)


_signal.setitimer = at_once
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("prelude", ["", _TIMER_AT_ONCE], ids=["redelivered-later", "redelivered-at-once"])
def test_an_interrupt_landing_where_python_cannot_raise_is_not_printed_and_still_ends_the_command(prelude: str) -> None:
    # A Ctrl-C inside a __del__ or the import lock's weak reference callback: Python would
    # print "Exception ignored in ..." with a traceback and carry on.
    script = _SWALLOWED.format(prelude=prelude)
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=60)
    assert (done.stdout, done.stderr) == ("interrupted\n", "")
