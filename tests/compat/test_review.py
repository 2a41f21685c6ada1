"""``ttlgen review``: the Markdown a pull request gets for its spec changes."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from compat_support import apply, git, make_repo, run_in
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from test_compat_catalogue import FP32_DEST_RULE, LAYOUT, PRIORITY

from tests.conftest import SPECS, TEMPLATES, real_documents, real_project
from tests.user_edits import first_sfpu_unary
from ttlgen.emit import emulator_math
from ttlgen.model import kernels

NEW_UNARY = first_sfpu_unary("tile_no_such_op")
SAMPLE = [
    (LAYOUT, "{name: stop, value: 1, doc: the stop flag was set}", "{name: stop, value: 2, doc: the stop flag was set}"),
    (LAYOUT, "{name: limit, value: 2, doc: the wait timed out}", "{name: limit, value: 1, doc: the wait timed out}"),
    PRIORITY,
    FP32_DEST_RULE,
    # A new SFPU unary, first in the family's list so the edit holds whatever ops follow.
    (NEW_UNARY.file, NEW_UNARY.old, NEW_UNARY.new),
]


class MarkdownSnapshot(SingleFileSnapshotExtension):
    file_extension = "md"
    _write_mode = WriteMode.TEXT


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("review"))


@pytest.fixture
def repo(base_repo: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(base_repo, copy)
    return copy


@pytest.fixture(scope="module")
def base_layout_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose one commit holds the real specs without their kernel specs.

    What a test of the comment's shape reads (the spec entries that changed, the ABI
    changes, the size of the text) comes of the layout alone, and the kernels (planned,
    rendered and traced on both sides) are most of what a review of the real specs costs.
    The tests that check every changed generated line is charged review the whole specs."""
    repo = tmp_path_factory.mktemp("review-layout") / "repo"
    shutil.copytree(SPECS, repo / "specs")
    for document in real_documents():
        if document.kind == kernels.KIND:
            (repo / document.source).unlink()  # named specs/<path in the spec tree>
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the real specs without their kernel specs")
    return repo


@pytest.fixture
def layout_repo(base_layout_repo: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(base_layout_repo, copy)
    return copy


def _review(repo: Path, ref: str = "main", where: str = ".") -> tuple[int, str]:
    (repo / where).mkdir(exist_ok=True)
    specs = Path(os.path.relpath(repo / "specs", repo / where))
    result = run_in(repo / where, "review", "--against", ref, "--specs", specs, "--templates", TEMPLATES)
    # The commit's name changes with any byte of the specs; the review's content does not.
    return result.exit_code, re.sub(r"\(`[0-9a-f]{12}`\)", "(`<commit>`)", result.stdout)


def test_review_of_a_sample_change(repo: Path, snapshot: SnapshotAssertion) -> None:
    apply(repo, SAMPLE)
    code, text = _review(repo)
    assert code == 0  # review reports; compat is the gate
    assert text == snapshot(extension_class=MarkdownSnapshot)


@pytest.fixture(scope="module")
def priority_repo(base_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real specs with a bit field added (PRIORITY): two tests read its review."""
    copy = tmp_path_factory.mktemp("priority") / "repo"
    shutil.copytree(base_repo, copy)
    apply(copy, [PRIORITY])
    return copy


@pytest.fixture(scope="module")
def priority_review(priority_repo: Path) -> str:
    return _review(priority_repo)[1]


def test_review_charges_generated_lines_to_the_spec_entry_that_changed(priority_review: str) -> None:
    text = priority_review
    (row,) = [line for line in text.splitlines() if line.startswith("| `specs/abi/komorebi.yaml` `words.hdr` |")]
    assert "`python/komorebi_abi/programs/mapcollect.py` +4 -0" in row
    assert "no changed spec entry produces" not in text


def _rows(text: str) -> dict[str, dict[str, str]]:
    """The spec-change table: entry -> generated file -> its counts."""
    section = text.split("### Spec changes and the generated lines they change\n")[1].split("\n### ")[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rows[cells[0]] = dict(re.findall(r"`([^`]+)` (\+\d+ -\d+)", cells[2]))
    return rows


def test_review_knows_a_list_entry_by_its_name_not_its_index(layout_repo: Path) -> None:
    apply(layout_repo, [(LAYOUT, "  - name: behind_port\n", "  - {name: max_ports, value: 8, doc: ports per core}\n  - name: behind_port\n")])
    _, text = _review(layout_repo)
    assert list(_rows(text)) == ["`specs/abi/komorebi.yaml` `constants: max_ports`"]


def test_review_charges_each_generated_line_to_the_entry_it_prints(repo: Path) -> None:
    apply(repo, [(LAYOUT, "abi_version: {major: 1, minor: 0}", "abi_version: {major: 1, minor: 1}"), (LAYOUT, "    value: 1024\n", "    value: 2048\n")])
    _, text = _review(repo)
    rows = _rows(text)
    header = "include/komorebi/abi/km_abi.h"
    # The version's comment and macro; the constant's macro: three lines of the header.
    assert rows["`specs/abi/komorebi.yaml` `abi_version.minor`"][header] == "+2 -2"
    assert rows["`specs/abi/komorebi.yaml` `constants: limit_cycles`"][header] == "+1 -1"
    assert "no changed spec entry produces" not in text


def test_review_charges_the_emulator_math_headers_lines_to_the_math_function_edited(layout_repo: Path) -> None:
    emulation = real_project().api.emulation
    assert emulation is not None
    function = next(f for arity, _ in emulation.math_tables for f in emulation.math.of_arity(arity))  # the header's first
    document = next(d for d in real_documents() if d.display == function.mark.file)
    entry = (SPECS.parent / document.source).read_text(encoding="utf-8").splitlines()[function.mark.line - 1]
    expression = document.data["functions"][function.name][function.kind]
    assert f'"{expression}"' in entry, "the first function of the header states its expression on its line"
    apply(layout_repo, [(str(Path(document.source).relative_to("specs")), f"{entry}\n", entry.replace(f'"{expression}"', f'"({expression}) * 2"') + "\n")])
    _, text = _review(layout_repo)
    headers = {f"emulator/{level.level}/{emulator_math.HEADER}" for level in real_project().api.levels}
    rows = _rows(text)
    # Its comment and its return statement, in the header of each API level.
    assert rows[f"`{function.mark.file}` `functions.{function.name}`"] == dict.fromkeys(headers, "+2 -2")
    assert "no changed spec entry produces" not in text


def test_review_run_from_another_directory_charges_the_same_lines(priority_repo: Path, priority_review: str) -> None:
    from_root = priority_review
    _, from_below = _review(priority_repo, where="generated")
    assert "no changed spec entry produces" not in from_below
    assert from_below == from_root.replace("`specs/", "`../specs/").replace("at specs/", "at ../specs/")


def test_review_of_unchanged_specs_says_so(layout_repo: Path) -> None:
    code, text = _review(layout_repo)
    assert code == 0
    assert "**compat: compatible: no change to the ABI**\n" in text
    assert "No spec file changed.\n" in text


def test_review_folds_a_long_list(layout_repo: Path) -> None:
    layout = layout_repo / "specs" / LAYOUT
    text = layout.read_text(encoding="utf-8")
    start, end = text.index("  where:\n"), text.index("  end:\n")
    moved = re.sub(r"value: (\d+)", lambda m: f"value: {int(m[1]) + 100}", text[start:end])  # every where code
    layout.write_text(text[:start] + moved + text[end:], encoding="utf-8")
    code, markdown = _review(layout_repo)
    assert code == 0
    assert "<details>\n<summary>17 ABI changes</summary>\n" in markdown


def test_review_of_a_huge_change_fits_a_pull_request_comment(layout_repo: Path) -> None:
    # 600 constants: their rows alone (two tables, about 200 characters a row) would take
    # twice the 65,536 characters GitHub allows.
    constants = "".join(f"  - {{name: extra_{i}, value: {i}, doc: extra constant number {i}}}\n" for i in range(600))
    apply(layout_repo, [(LAYOUT, "  - name: behind_port\n", constants + "  - name: behind_port\n")])
    code, text = _review(layout_repo)
    assert code == 0
    assert len(text) < 65_536  # GitHub's limit for a comment
    assert "... and 540 more ABI changes: run `ttlgen compat --against main` for all of them.\n" in text
    assert "... and 540 more changed spec entries.\n" in text
    (abi,) = [line for line in text.splitlines() if line.startswith("- ABI: ")]
    assert abi.endswith("; added constant 'extra_11'; ... and 588 more")


def test_review_of_an_unknown_ref_is_bad_input(repo: Path) -> None:
    code, _ = _review(repo, "nowhere")
    assert code == 2
