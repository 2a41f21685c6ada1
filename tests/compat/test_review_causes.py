"""``ttlgen review`` and ``compat`` account for every cause of a generated change.

A generated file changes because a spec, a template or ttlgen itself (its emitters, its
version) changed. Each repository here is a copy of this project's specs and templates and
the tree ttlgen builds from them, with one commit on ``main``; the pull request is the work
tree. The specs keep one kernel spec file of theirs: the kernels' template reaches each
kernel alike, and a review plans, renders and traces every kernel of both sides. The
kernels a template change reaches are read from the loaded specs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from compat_support import apply, git, run_in
from test_compat_catalogue import PRIORITY

from tests.conftest import SPECS, TEMPLATES, real_documents, real_plan
from ttlgen import __version__
from ttlgen.model import kernels

COMPUTE_TEMPLATE = "kernels/compute.cpp.j2"
PACKAGE = SPECS.parent / "ttlgen"


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """specs/ (of the kernel spec files, the one with the fewest kernels) and templates/ of
    this project, and generated/ as ttlgen builds it from them, committed on main."""
    repo = tmp_path_factory.mktemp("causes") / "repo"
    for name, source in (("specs", SPECS), ("templates", TEMPLATES)):
        shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
    kernel_files = [d for d in real_documents() if d.kind == kernels.KIND]
    kept = min(kernel_files, key=lambda d: (len(d.data["kernels"]), d.source))
    for document in kernel_files:
        if document is not kept:
            (repo / document.source).unlink()  # named specs/<path in the spec tree>
    built = run_in(repo, "build", "--specs", "specs", "--templates", "templates", "--out", "generated")
    assert built.exit_code == 0, built.stderr
    git(repo, "init", "-q", "-b", "main")
    _commit(repo, "the project")
    return repo


@pytest.fixture
def repo(base_repo: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(base_repo, copy)
    return copy


@pytest.fixture(scope="module")
def compute_files(base_repo: Path) -> list[str]:
    """Every kernel's compute.cpp, from the loaded specs: the kernels of the kept kernel spec
    file, as the session's plan of the real specs has them (a kernel is planned from its own
    spec and the ops and targets, which base_repo keeps as they are)."""
    kept = {p.relative_to(base_repo).as_posix() for p in (base_repo / "specs").rglob("*")}
    return sorted(f"kernels/{k.kernel.name}/compute.cpp" for k in real_plan()[1].kernels if k.kernel.source in kept)


@pytest.fixture(scope="module")
def template_edit(base_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository with the kernels' template edited in the work tree, which two tests
    only read (review and compat write nothing in it)."""
    repo = tmp_path_factory.mktemp("template-edit") / "repo"
    shutil.copytree(base_repo, repo)
    _edit_template(repo)
    return repo


def _edit_template(repo: Path) -> None:
    """A comment line after the template's first line: each file it renders gains a line."""
    path = repo / "templates" / COMPUTE_TEMPLATE
    first, rest = path.read_text(encoding="utf-8").split("\n", 1)
    path.write_text(f"{first}\n// Reviewed: the kernels' layout.\n{rest}", encoding="utf-8")


def _review(repo: Path) -> str:
    result = run_in(repo, "review", "--against", "main", "--specs", "specs", "--templates", "templates")
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _section(text: str, title: str) -> str:
    return text.split(f"### {title}\n")[1].split("\n### ")[0]


def _rows(section: str) -> dict[str, list[str]]:
    """Table rows of a section: the first cell (a file, unquoted) -> the other cells."""
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| `") and len(cells) >= 2:
            rows[cells[0].strip("`")] = cells[1:]
    return rows


CAUSES = "Generated files changed by templates and ttlgen's code"
SPEC_CHANGES = "Spec changes and the generated lines they change"


def test_a_template_edit_lists_each_file_it_changed_with_its_lines(template_edit: Path, compute_files: list[str]) -> None:
    text = _review(template_edit)
    assert "No spec file changed.\n" not in text
    assert "No spec file changed; the generated files below changed by templates or ttlgen's code." in _section(text, SPEC_CHANGES)
    causes = _section(text, CAUSES)
    assert f"**templates** changed since `main`: `templates/{COMPUTE_TEMPLATE}`" in causes
    rows = _rows(causes)
    assert sorted(rows) == compute_files
    assert all(cells == ["+1 -0", f"`templates/{COMPUTE_TEMPLATE}`"] for cells in rows.values())
    assert "ttlgen's code and version" not in causes  # the tree at main is what this ttlgen wrote


def test_compat_reports_the_files_a_template_changed_without_failing(template_edit: Path, compute_files: list[str]) -> None:
    result = run_in(template_edit, "compat", "--against", "main", "--specs", "specs", "--templates", "templates", "--json")
    assert result.exit_code == 0
    (cause,) = json.loads(result.stdout)["other_causes"]["causes"]
    assert cause["cause"] == "templates" and cause["what"] == [f"templates/{COMPUTE_TEMPLATE}"]
    assert [f["file"] for f in cause["files"]] == compute_files
    assert {(f["added"], f["removed"]) for f in cause["files"]} == {(1, 0)}
    text = run_in(template_edit, "compat", "--against", "main", "--specs", "specs", "--templates", "templates").stdout
    assert f"templates and ttlgen's code (not versioned: for review): {len(compute_files)} generated files changed\n" in text
    assert f"  [templates] templates/{COMPUTE_TEMPLATE}\n" in text


def test_a_spec_edit_and_a_template_edit_are_each_charged_their_own_files(repo: Path, compute_files: list[str]) -> None:
    apply(repo, [PRIORITY])
    _edit_template(repo)
    text = _review(repo)
    specs = _section(text, SPEC_CHANGES)
    (row,) = [line for line in specs.splitlines() if line.startswith("| `specs/abi/komorebi.yaml` `words.hdr` |")]
    assert "`include/komorebi/abi/km_abi.h` +" in row
    assert "compute.cpp" not in specs  # the layout reaches no kernel
    rows = _rows(_section(text, CAUSES))
    assert sorted(rows) == compute_files  # and the template reaches no header


def test_unchanged_templates_and_tree_add_no_cause(repo: Path) -> None:
    text = _review(repo)
    assert "No spec file changed.\n" in text
    assert f"### {CAUSES}" not in text


def test_a_tree_an_older_ttlgen_wrote_is_charged_to_the_generator(repo: Path, compute_files: list[str]) -> None:
    """main holds a tree as another ttlgen version wrote it: one line differs, and its
    MANIFEST names that version."""
    kernel = compute_files[0]
    tree = repo / "generated"
    manifest = tree / "MANIFEST"
    manifest.write_text(re.sub(r"(?m)^generator ttlgen .*$", "generator ttlgen 0.0.1", manifest.read_text(encoding="utf-8")), encoding="utf-8")
    path = tree / kernel
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[-3] += "  // as ttlgen 0.0.1 wrote it"
    path.write_text("\n".join(lines), encoding="utf-8")
    _commit(repo, "the tree as ttlgen 0.0.1 wrote it")
    text = _review(repo)
    assert "No spec file changed; the generated files below changed by templates or ttlgen's code." in text
    causes = _section(text, CAUSES)
    assert f"**ttlgen's code and version**: ttlgen 0.0.1 at main, ttlgen {__version__} now (MANIFEST's generator line)" in causes
    assert _rows(causes) == {kernel: ["+1 -1"]}


EXTRA_EMITTER = '''

def _note(project: object, plan: object, ctx: object) -> list[GeneratedFile]:
    from ttlgen.emit._base import GeneratedFile

    return [GeneratedFile("python/review_note.py", "NOTE = 'an emitter added in the pull request'\\n")]


EMITTERS = (*EMITTERS, ("review_note", _note))  # type: ignore[assignment]
'''


def test_an_emitter_change_in_the_repository_is_charged_to_the_generator(base_repo: Path, tmp_path: Path) -> None:
    """The repository holds ttlgen itself (as this project does); the pull request adds an
    emitter. ttlgen runs from the repository's copy, as CI runs the checked-out code."""
    repo = tmp_path / "repo"
    shutil.copytree(base_repo, repo)
    shutil.copytree(PACKAGE, repo / "ttlgen", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _commit(repo, "ttlgen itself")
    with (repo / "ttlgen" / "emit" / "emitters.py").open("a", encoding="utf-8") as emitters:
        emitters.write(EXTRA_EMITTER)
    env = {**os.environ, "PYTHONPATH": str(repo), "PYTHONDONTWRITEBYTECODE": "1", "TTLGEN_NO_CACHE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "ttlgen", "review", "--against", "main"], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    causes = _section(done.stdout, CAUSES)
    assert "**ttlgen's code and version**: ttlgen's files changed since main: ttlgen/emit/emitters.py" in causes
    rows = _rows(causes)
    assert list(rows) == ["python/review_note.py"]
    added, removed = re.fullmatch(r"\+(\d+) -(\d+)", rows["python/review_note.py"][0]).groups()  # type: ignore[union-attr]
    assert int(added) > 0 and removed == "0"
    assert "### Spec changes and the generated lines they change\n\nNo spec file changed; " in done.stdout


def test_templates_that_do_not_render_with_this_ttlgen_are_charged_with_the_code(repo: Path, compute_files: list[str]) -> None:
    """main's template reads what this ttlgen's emitter no longer gives it (the two changed
    together), so the template's change cannot be told from the code's."""
    kernel = compute_files[0]
    template = repo / "templates" / COMPUTE_TEMPLATE
    fixed = template.read_text(encoding="utf-8")
    template.write_text("{{ k.a_value_the_emitter_no_longer_passes }}\n" + fixed, encoding="utf-8")
    written = repo / "generated" / kernel
    written.write_text("// as main's emitter and template wrote it\n" + written.read_text(encoding="utf-8"), encoding="utf-8")
    _commit(repo, "a template reading an older emitter's value")
    template.write_text(fixed, encoding="utf-8")
    text = _review(repo)
    causes = _section(text, CAUSES)
    assert f"**templates and ttlgen's code together**: templates/{COMPUTE_TEMPLATE}" in causes
    assert _rows(causes) == {kernel: ["+0 -1"]}
    assert "the templates at main do not render with this ttlgen" in causes
