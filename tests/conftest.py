"""Shared test helpers: the repository's paths and an in-process CLI runner."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import typer.testing
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from typer.testing import CliRunner

from tests.spec_patch import apply_patch, load_patch
from ttlgen.cli import app

if TYPE_CHECKING:
    from ttlgen.model.project import Project
    from ttlgen.plan.project import ProjectPlan
    from ttlgen.spec.document import SpecDocument

# --snapshot-update deletes no snapshot unless --snapshot-prune is given on a full run.
pytest_plugins = ("tests.snapshot_guard",)

REPO = Path(__file__).resolve().parent.parent
SPECS = REPO / "specs"
GENERATED = REPO / "generated"
TEMPLATES = REPO / "templates"
# Bad-spec cases: patches of SPECS (format: tests/fixtures/bad_specs/README.md).
BAD_SPECS = REPO / "tests" / "fixtures" / "bad_specs"


class TextSnapshot(SingleFileSnapshotExtension):
    """A syrupy snapshot stored as one plain text file, so its diff reads like the text."""

    file_extension = "txt"
    _write_mode = WriteMode.TEXT


@dataclass(frozen=True)
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


# The studies and property tests of the suite run small and seeded; TTLGEN_LONG_TESTS=1 runs
# them at the size they were written for, with fresh random examples (CONTRIBUTING.md).
LONG_TESTS = os.environ.get("TTLGEN_LONG_TESTS") == "1"

# Issue 13's bound on huge input: "a 100,000-item list is rejected or accepted in under 2 s".
# Guarded in CPU time of this process (all its threads, user and system), not wall time: other
# work on a loaded CI machine cannot make it flake, only ttlgen's own cost counts. The limits
# are checked as the file is read, before validation and the model run, so a rejected huge list
# costs reading the files and composing the list's YAML nodes once: about 0.7 s here (0.5 s of
# it PyYAML composing 100,000 nodes), 1.2 s when the run also pays the first imports. That
# leaves a margin of 1.7x to 2.8x for a slower CPU, while a regression exceeds it: parsing a
# description over the size limit took 7 s for 2.3 MB, validating 100,000 items takes seconds.
LARGE_INPUT_CPU_S = 2.0


def cpu_seconds_of_cli(*args: str | Path) -> tuple[CliResult, float]:
    """The CLI run in-process, and the CPU time it took."""
    start = time.process_time()
    result = run_cli(*args)
    return result, time.process_time() - start


@functools.cache
def real_plan() -> tuple[Project, ProjectPlan]:
    """The model and plan of the real specs, made once per test process.

    Each pytest-xdist worker is one process, so the real specs are planned once per worker
    however many tests read them. Tests that list ops, architectures, targets, kernels or
    layouts take them from here, never from a literal list: adding any of them by spec must
    not break a test. Model and plan are frozen records; a test must not change the dicts
    some of them hold (a kernel's plan_json), which every later test would see."""
    from ttlgen.pipeline import plan

    # From the repository's root, so the model names its files specs/... whichever test
    # (and working directory) asks first.
    with contextlib.chdir(REPO):
        return plan(Path("specs"))


def real_project() -> Project:
    return real_plan()[0]


@functools.cache
def real_documents() -> tuple[SpecDocument, ...]:
    """The real spec files as loaded, before any model: what a test compares the model with."""
    from ttlgen.spec.load import load_specs

    with contextlib.chdir(REPO):
        return tuple(load_specs(Path("specs")))


def spec_data(kind: str) -> list[Any]:
    """The data of every real spec document of ``kind`` (e.g. 'ttlgen.architecture')."""
    return [d.data for d in real_documents() if d.kind == kind]


def host_define_flags(level: str) -> list[str]:
    """``-D`` flags for each define the host passes with a kernel at API level ``level``
    (ttnn 0.69.0's reduce.h reads REDUCE_OP): a header compiled on its own needs them as a
    kernel's build gives them. Each takes the value an op's spelling first gives it, an
    attribute placeholder its attribute's first spelled value; none for a level the real
    specs do not have (a fuzzed tree may rename one)."""
    project = real_project()
    spelled = project.spelling.at(level)
    api = project.api.level(level)
    if spelled is None or api is None:
        return []
    values: dict[str, str] = {}
    for spelling in spelled.spellings:
        attrs = {f"attr.{name}": table[0][1] for name, table in spelling.attributes}
        for define in spelling.defines:
            value = define.bind(attrs)
            if value is not None:
                values.setdefault(define.name, value)
    assert {d.name for d in api.defines if d.host} <= set(values), "a host define no op's spelling gives a value"
    return [f"-D{name}={value}" for name, value in values.items()]


@pytest.fixture(scope="session")
def project() -> Project:
    """The model of the real specs (see real_plan)."""
    return real_project()


@pytest.fixture(scope="session")
def plan() -> ProjectPlan:
    """The plan of the real specs (see real_plan)."""
    return real_plan()[1]


# typer's CliRunner makes the click command of the app anew for every invocation (about
# 10 ms of signature inspection, most of an in-process `validate`); the app does not
# change while tests run, so it is made once.
typer.testing._get_command = functools.cache(typer.testing._get_command)  # type: ignore[attr-defined]


def run_cli(*args: str | Path) -> CliResult:
    result = CliRunner().invoke(app, [str(a) for a in args])
    # A user error must end in an exit code, never an unhandled exception.
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return CliResult(result.exit_code, result.stdout, result.stderr)


# Where the suite's scratch files go when the user names no place (TMPDIR, TEMP, TMP,
# --basetemp): a RAM-backed /dev/shm with this much room. A run makes and deletes about
# 60,000 files; on ext4, making a file soon after thousands were deleted scans the inode
# table for one not recently freed, and that cost the suite a third of its system time
# (measured with `perf record -a`: 57 s of system CPU and 141 s of wall on /tmp, 22 s and
# 116 s on /dev/shm, on this 2-core machine). A run held at most 93 MB there at once.
SCRATCH_CANDIDATE = Path("/dev/shm")
SCRATCH_ROOM = 1 << 30
_CHOSEN_TEMP = ("TMPDIR", "TEMP", "TMP", "PYTEST_DEBUG_TEMPROOT")


def ram_scratch_root(candidate: Path = SCRATCH_CANDIDATE, room: int = SCRATCH_ROOM) -> Path | None:
    """``candidate`` if the user chose no temporary directory and it is a writable directory
    with ``room`` bytes free, else None (the system default stands)."""
    if any(os.environ.get(name) for name in _CHOSEN_TEMP):
        return None
    try:
        free = os.statvfs(candidate)
    except OSError:
        return None
    if not candidate.is_dir() or not os.access(candidate, os.W_OK | os.X_OK):
        return None
    return candidate if free.f_bavail * free.f_frsize >= room else None


def pytest_configure(config: pytest.Config) -> None:
    # Set before pytest makes its base temporary directory, and in the environment so the
    # xdist workers, the CLIs and the compilers the tests start use it too.
    root = None if config.getoption("basetemp", None) else ram_scratch_root()
    if root is not None:
        os.environ["TMPDIR"] = str(root)
        tempfile.tempdir = None  # gettempdir() reads TMPDIR again


def bad_spec_tree(case: str, root: Path) -> Path:
    """root/specs: a copy of the real specs with bad-spec case ``case`` (e.g. 'kernels/unknown_op') applied."""
    specs = root / "specs"
    shutil.copytree(SPECS, specs)
    apply_patch(specs, load_patch(BAD_SPECS / case, case))
    return specs


def pytest_collection_finish(session: pytest.Session) -> None:
    """Keep what lives for the whole run out of the garbage collector's full passes.

    A test process holds its collected tests (about 2,500 items with their modules) and the
    planned real specs until it exits. Python's full collections walk every object they
    track, and the tests allocate heavily (each plan or render makes hundreds of thousands
    of objects), so without this the process spends a fifth of its CPU walking objects that
    cannot be garbage (measured on five kernel and resolver test files: 15 s instead of
    17-20 s). Objects made after this point are collected as usual.

    Collections of the youngest objects run every 10,000 allocations rather than 700: a
    plan or render allocates hundreds of thousands of short-lived records, almost none in
    cycles, and each of those collections also walked the survivors of the last ones
    (measured on the build, explain, compat-catalogue and injection tests, three runs each,
    interleaved: 28.4 s of CPU instead of 31.1 s)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


@pytest.fixture(autouse=True, scope="module")
def spec_texts_parsed_once() -> Iterator[None]:
    """Within a test module, each spec text is parsed once (tests/parse_once.py)."""
    from tests.parse_once import spec_texts_parsed_once as parsed_once

    with parsed_once():
        yield


@pytest.fixture(autouse=True)
def work_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test runs in its own directory, as a user runs ttlgen beside the specs/ it edits.

    Messages name files relative to the working directory, so a spec tree a test makes at
    tmp_path/specs reads "specs/..." in them; nothing a test writes by a relative path lands
    in the repository."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True, scope="session")
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep the tree cache of the test run away from the user's own cache."""
    import os

    from ttlgen import cache

    # The emulator's compiled kernels are keyed by every input of the compile (like ccache)
    # and slow to rebuild: the run keeps using the user's, which lives under the root moved here.
    os.environ.setdefault("TTLGEN_DEVICE_CACHE", str(cache.cache_root() / "device"))
    os.environ["TTLGEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("ttlgen-cache"))


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    """A writable copy of the real spec tree, named specs/ so messages read the same."""
    target = tmp_path / "specs"
    shutil.copytree(SPECS, target)
    return target


@pytest.fixture
def generated_copy(tmp_path: Path) -> Path:
    target = tmp_path / "generated"
    shutil.copytree(GENERATED, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.fixture
def spec_tree(tmp_path: Path) -> Path:
    """tmp_path/specs: the real specs without their kernels (tests/tree_support.py)."""
    from tests.tree_support import small_specs

    return small_specs(tmp_path / "specs")


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """tmp_path/generated: the tree spec_tree builds."""
    from tests.tree_support import write_built

    return write_built(tmp_path / "generated")
