"""``ttlgen review``: the Markdown a pull request gets for its spec changes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from compat_support import apply, make_repo, run_in
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from test_compat_catalogue import FP32_DEST_RULE, LAYOUT, PRIORITY

from tests.conftest import TEMPLATES

SAMPLE = [
    (LAYOUT, "{name: stop, value: 1, doc: the stop flag was set}", "{name: stop, value: 2, doc: the stop flag was set}"),
    (LAYOUT, "{name: limit, value: 2, doc: the wait timed out}", "{name: limit, value: 1, doc: the wait timed out}"),
    PRIORITY,
    FP32_DEST_RULE,
    ("ops/elementwise.yaml", "tile_neg, tile_abs, tile_relu]", "tile_neg, tile_abs, tile_relu, tile_gelu]"),
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


def _review(repo: Path, ref: str = "main") -> tuple[int, str]:
    result = run_in(repo, "review", "--against", ref, "--specs", "specs", "--templates", TEMPLATES)
    # The commit's name changes with any byte of the specs; the review's content does not.
    return result.exit_code, re.sub(r"\(`[0-9a-f]{12}`\)", "(`<commit>`)", result.stdout)


def test_review_of_a_sample_change(repo: Path, snapshot: SnapshotAssertion) -> None:
    apply(repo, SAMPLE)
    code, text = _review(repo)
    assert code == 0  # review reports; compat is the gate
    assert text == snapshot(extension_class=MarkdownSnapshot)


def test_review_charges_generated_lines_to_the_spec_entry_that_changed(repo: Path) -> None:
    apply(repo, [PRIORITY])
    _, text = _review(repo)
    (row,) = [line for line in text.splitlines() if line.startswith("| `specs/abi/komorebi.yaml` `words.hdr` |")]
    assert "`python/komorebi_abi/programs/mapcollect.py` +4 -0" in row
    assert "no changed spec entry produces" not in text


def test_review_of_unchanged_specs_says_so(repo: Path) -> None:
    code, text = _review(repo)
    assert code == 0
    assert "**compat: compatible: no change to the ABI**\n" in text
    assert "No spec file changed.\n" in text


def test_review_folds_a_long_list(repo: Path) -> None:
    layout = repo / "specs" / LAYOUT
    text = layout.read_text(encoding="utf-8")
    start, end = text.index("  where:\n"), text.index("  end:\n")
    moved = re.sub(r"value: (\d+)", lambda m: f"value: {int(m[1]) + 100}", text[start:end])  # every where code
    layout.write_text(text[:start] + moved + text[end:], encoding="utf-8")
    code, markdown = _review(repo)
    assert code == 0
    assert "<details>\n<summary>17 ABI changes</summary>\n" in markdown


def test_review_of_an_unknown_ref_is_bad_input(repo: Path) -> None:
    code, _ = _review(repo, "nowhere")
    assert code == 2
