"""The README's CI recipe runs as written.

The recipe is the YAML block after the ``ttlgen:ci-recipe`` marker in README.md. Its
``run:`` steps are run here, in order, the way GitHub Actions runs them (``bash -eo
pipefail``, a step with ``if: ${{ !cancelled() }}`` runs after a failed one, any other step
only while all before it passed), on a clone of a temporary repository holding this project
(ttlgen, specs, templates, generated, a smoke test): ``main`` is the base commit, the clone
is checked out at the pull request's commit, and ``origin/main`` is there as
``actions/checkout`` with ``fetch-depth: 0`` leaves it. What GitHub provides is stood in
for: ``GITHUB_BASE_REF`` names the base branch, ``${{ ... }}`` expressions are given dummy
values, and ``gh`` is a script on PATH that writes the comment it is given to a file. The
install step is left out: ttlgen runs from the clone's own copy (PYTHONPATH), as the step
would install it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, real_documents, real_plan, run_cli

MARKER = "<!-- ttlgen:ci-recipe"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "ttlgen tests",
    "GIT_AUTHOR_EMAIL": "tests@ttlgen.invalid",
    "GIT_COMMITTER_NAME": "ttlgen tests",
    "GIT_COMMITTER_EMAIL": "tests@ttlgen.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
COMPUTE_TEMPLATE = "templates/kernels/compute.cpp.j2"
STAND_IN_GH = """\
#!/bin/sh
# gh pr comment PR [--edit-last] --body-file FILE: the comment is written to $GH_COMMENT.
printf '%s\\n' "$*" >> "$GH_CALLS"
while [ $# -gt 0 ]; do
  if [ "$1" = "--body-file" ]; then cp "$2" "$GH_COMMENT"; exit 0; fi
  shift
done
echo "gh stand-in: no --body-file" >&2
exit 2
"""
SMOKE_TEST = '''\
import ttlgen
from pathlib import Path


def test_the_suite_runs_the_checked_out_ttlgen() -> None:
    assert Path(ttlgen.__file__).resolve().parent == Path(__file__).resolve().parent.parent / "ttlgen"
'''


@dataclass(frozen=True)
class Step:
    name: str
    run: str
    env: dict[str, str]
    after_failure: bool  # if: ${{ !cancelled() }} or always()


def recipe() -> dict[str, object]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert text.count(MARKER) == 1, "the README marks one CI recipe"
    block = re.search(r"```yaml\n(.*?)```", text[text.index(MARKER) :], re.S)
    assert block is not None, "a yaml block follows the marker"
    loaded = yaml.safe_load(block[1])
    assert isinstance(loaded, dict)
    return loaded


def _stand_in(value: str) -> str:
    """GitHub's expressions: a pull request number and a token."""
    return re.sub(r"\$\{\{\s*github\.event\.pull_request\.number\s*\}\}", "7", re.sub(r"\$\{\{\s*github\.token\s*\}\}", "a-token", value))


def steps() -> list[Step]:
    jobs = recipe()["jobs"]
    assert isinstance(jobs, dict) and len(jobs) == 1
    (job,) = jobs.values()
    found = []
    for raw in job["steps"]:
        if "run" not in raw:
            continue
        condition = str(raw.get("if", ""))
        env = {k: _stand_in(str(v)) for k, v in (raw.get("env") or {}).items()}
        found.append(Step(raw.get("name", raw["run"]), raw["run"], env, "!cancelled()" in condition or "always()" in condition))
    return found


def test_the_recipe_is_a_pull_request_job_with_the_gates() -> None:
    loaded = recipe()
    assert loaded.get("on", loaded.get(True)) == "pull_request"  # YAML 1.1 reads a bare on as true
    runs = "\n".join(s.run for s in steps())
    for command in ("pip install", "ttlgen check", "ttlgen compat --against", "ttlgen review --against", "gh pr comment", "pytest"):
        assert command in runs, command
    (checkout,) = [s for s in next(iter(loaded["jobs"].values()))["steps"] if str(s.get("uses", "")).startswith("actions/checkout")]  # type: ignore[attr-defined]
    assert checkout["with"]["fetch-depth"] == 0  # compat and review read the base branch


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env).stdout


def _python_env(repo: Path) -> dict[str, str]:
    """This environment with ttlgen from the clone, whose bytecode the first step writes
    into the clone and later steps reuse, as on a CI runner (git ignores it)."""
    outer = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**outer, "PYTHONPATH": str(repo)}


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare repository whose main holds this project."""
    root = tmp_path_factory.mktemp("ci")
    seed = root / "seed"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")
    for name in ("ttlgen", "specs", "templates", "generated"):
        shutil.copytree(REPO / name, seed / name, ignore=ignore)
    shutil.copy(REPO / "pyproject.toml", seed / "pyproject.toml")
    (seed / "tests").mkdir()
    (seed / "tests" / "test_smoke.py").write_text(SMOKE_TEST, encoding="utf-8")
    (seed / ".gitignore").write_text("__pycache__/\n*.pyc\nreview.md\n", encoding="utf-8")
    _git(seed, "init", "-q", "-b", "main")
    _git(seed, "add", "-A")
    _git(seed, "commit", "-q", "-m", "the base branch")
    bare = root / "origin.git"
    _git(root, "clone", "-q", "--bare", str(seed), str(bare))
    return bare


def _pull_request(origin: Path, root: Path, edit: Callable[[Path], None]) -> Path:
    """A clone of ``origin`` on a new commit: ``edit``, then ``ttlgen build``.

    The author's build runs in this process: the clone's ttlgen is a copy of this one, and
    its templates are named (the shipped tree of this ttlgen is the repository's); the
    recipe's steps, which are under test, run the clone's copy in processes of their own."""
    work = root / "work"
    _git(root, "clone", "-q", str(origin), str(work))
    _git(work, "checkout", "-q", "-b", "pull-request")
    edit(work)
    built = run_cli("build", "--specs", work / "specs", "--out", work / "generated", "--templates", work / "templates")
    assert built.exit_code == 0, built.stderr
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "the pull request")
    return work


@dataclass
class Run:
    results: list[tuple[str, int | None, str]]  # step, exit code (None: skipped), output
    comment: str | None

    def code(self, command: str) -> int | None:
        return next(code for run, code, _ in self.results if command in run)


def run_recipe(work: Path) -> Run:
    bin_dir = work.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(STAND_IN_GH, encoding="utf-8")
    gh.chmod(0o755)
    comment = work.parent / "comment.md"
    # The test step's pytest keeps its temporary directories here: in the default root it
    # would also delete the oldest of the user's own runs there, as pytest does on exit.
    temp_root = work.parent / "pytest-temp"
    temp_root.mkdir(exist_ok=True)
    env = {
        **_python_env(work),
        # The stand-in gh, then this interpreter's scripts (ttlgen, pytest), as an
        # activated environment puts them on PATH whether or not this one is activated.
        "PATH": os.pathsep.join((str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"])),
        "GITHUB_BASE_REF": "main",
        "GH_COMMENT": str(comment),
        "GH_CALLS": str(work.parent / "gh-calls.txt"),
        "PYTEST_DEBUG_TEMPROOT": str(temp_root),
    }
    results: list[tuple[str, int | None, str]] = []
    failed = False
    for step in steps():
        if step.run.startswith("pip install"):
            results.append((step.run, None, "left out: ttlgen runs from the clone"))
            continue
        if failed and not step.after_failure:
            results.append((step.run, None, "skipped"))
            continue
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step.run],
            cwd=work, env={**env, **step.env}, capture_output=True, text=True, check=False,
        )
        results.append((step.run, done.returncode, done.stdout + done.stderr))
        failed = failed or done.returncode != 0
    return Run(results, comment.read_text(encoding="utf-8") if comment.exists() else None)


def _edit_template(work: Path) -> None:
    path = work / COMPUTE_TEMPLATE
    first, rest = path.read_text(encoding="utf-8").split("\n", 1)
    path.write_text(f"{first}\n// Reviewed: the kernels' layout.\n{rest}", encoding="utf-8")


def test_the_recipe_passes_a_template_change_and_posts_its_review(origin: Path, tmp_path: Path) -> None:
    work = _pull_request(origin, tmp_path, _edit_template)
    run = run_recipe(work)
    assert all(code in (0, None) for _, code, _ in run.results), run.results
    assert run.comment is not None, "the review was not posted"
    assert run.comment == (work / "review.md").read_text(encoding="utf-8")
    assert "No spec file changed; the generated files below changed by templates or ttlgen's code." in run.comment
    # The pull request edits no spec: its kernels are the real specs' (planned once per process).
    for lowered in real_plan()[1].kernels:
        assert f"| `kernels/{lowered.kernel.name}/compute.cpp` | +1 -0 |" in run.comment
    assert (work.parent / "gh-calls.txt").read_text(encoding="utf-8").startswith("pr comment 7 ")


def _break_the_abi(work: Path) -> None:
    """The first constant of a layout spec changes its value, without a major version bump."""
    # The clone's specs are the real ones (loaded once per process), named specs/... as its are.
    layout = next(d for d in real_documents() if d.kind == "ttlgen.layout" and d.data.get("constants"))
    line, column = layout.positions.value(("constants", 0, "value"))
    path = work / "specs" / Path(layout.source).relative_to("specs")
    lines = path.read_text(encoding="utf-8").split("\n")
    text = lines[line - 1]
    value = re.match(r"\d+", text[column - 1 :])
    assert value is not None, f"{path}:{line}:{column} is not a number"
    lines[line - 1] = text[: column - 1] + str(int(value[0]) + 1) + text[column - 1 + len(value[0]) :]
    path.write_text("\n".join(lines), encoding="utf-8")


def test_a_breaking_change_fails_compat_and_the_review_is_still_posted(origin: Path, tmp_path: Path) -> None:
    work = _pull_request(origin, tmp_path, _break_the_abi)
    run = run_recipe(work)
    assert run.code("ttlgen check") == 0
    assert run.code("ttlgen compat") == 1
    assert run.code("ttlgen review") == 0 and run.code("pytest") == 0  # later steps run after a failure
    assert run.comment is not None and "(`ttlgen compat` fails)" in run.comment
