"""`build`, `check`, `diff` and `validate`: what they write, what they report, and their exit codes.

Where what the tree holds is not the point, the tests run on the real specs without their
kernels and start from the tree those build (tests/tree_support.py)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import GENERATED, REPO, run_cli
from ttlgen import write
from ttlgen.tree import existing_entries


def first_spec_file(specs: Path) -> Path:
    return sorted(specs.rglob("*.yaml"))[0]


def snapshot_tree(root: Path) -> dict[str, tuple[bytes, int]]:
    # existing_entries skips bytecode caches, as build and check do.
    return {path: ((root / path).read_bytes(), (root / path).stat().st_mtime_ns) for path in existing_entries(root)}


def test_committed_generated_tree_is_up_to_date(monkeypatch: pytest.MonkeyPatch) -> None:
    """generated/ is the one golden tree: byte-identical to what `ttlgen build` writes."""
    monkeypatch.chdir(REPO)  # the defaults, as CI runs it
    result = run_cli("check", "--no-cache")
    assert result.exit_code == 0, result.stderr


def _lines(data: bytes) -> str:
    """The text's non-blank lines, stripped, as one string framed by newlines."""
    stripped = (line.strip() for line in data.decode("utf-8", errors="replace").splitlines())
    return "\n" + "\n".join(line for line in stripped if line) + "\n"


def test_nothing_under_tests_is_a_copy_of_a_generated_file() -> None:
    """A change to generated/ is reviewed once, there: no test file holds a copy of an output.

    Catches byte copies and copies embedded in another file (a snapshot format that indents
    or quotes its text), for every output of at least five non-blank lines.
    """
    outputs = {path: (GENERATED / path).read_bytes() for path in existing_entries(GENERATED)}
    embeddable = {path: _lines(data) for path, data in outputs.items() if _lines(data).count("\n") > 5}
    by_bytes = {data: path for path, data in outputs.items()}
    copies = []
    for path in sorted(p for p in (REPO / "tests").rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        data = path.read_bytes()
        text = _lines(data)
        found = [by_bytes[data]] if data in by_bytes else [g for g, lines in embeddable.items() if lines in text]
        copies += [f"{path.relative_to(REPO)} copies generated/{g}" for g in found]
    assert copies == []


def test_build_into_an_empty_directory_then_check_is_clean(spec_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("build", "--specs", spec_tree, "--out", out).exit_code == 0
    assert run_cli("check", "--specs", spec_tree, "--out", out).exit_code == 0


def test_build_output_equals_the_committed_tree(spec_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "generated"
    run_cli("build", "--specs", spec_copy, "--out", out)
    assert {k: v[0] for k, v in snapshot_tree(out).items()} == {
        k: v[0] for k, v in snapshot_tree(GENERATED).items()
    }


def test_check_names_an_edited_generated_file(spec_tree: Path, built: Path) -> None:
    edited = built / "MANIFEST"
    edited.write_bytes(edited.read_bytes() + b"# hand edit\n")
    result = run_cli("check", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 1
    assert f"stale: {edited}" in result.stderr
    assert "ttlgen build" in result.stderr


def test_check_names_a_stray_file(spec_tree: Path, built: Path) -> None:
    stray = built / "python" / "stray.py"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_text("x = 1\n")
    result = run_cli("check", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 1
    assert f"orphaned: {stray}" in result.stderr


def test_check_names_a_missing_file(spec_tree: Path, built: Path) -> None:
    (built / "MANIFEST").unlink()
    result = run_cli("check", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 1
    assert f"missing: {built / 'MANIFEST'}" in result.stderr


def test_check_json_lists_each_problem_by_category(spec_tree: Path, built: Path) -> None:
    (built / "stray.txt").write_text("x\n")
    result = run_cli("check", "--specs", spec_tree, "--out", built, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "status": "stale", "stale": [], "missing": [], "orphaned": ["stray.txt"], "not_regular": []
    }


def test_check_diff_prints_a_unified_diff_of_the_change(spec_tree: Path, built: Path) -> None:
    manifest = built / "MANIFEST"
    manifest.write_text(manifest.read_text() + "extra line\n")
    result = run_cli("check", "--specs", spec_tree, "--out", built, "--diff")
    assert result.exit_code == 1
    assert "--- a/generated/MANIFEST" in result.stdout
    assert "-extra line" in result.stdout


def test_diff_shows_what_build_would_do_and_writes_nothing(spec_tree: Path, built: Path) -> None:
    (built / "stray.txt").write_text("old\n")
    before = snapshot_tree(built)
    result = run_cli("diff", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 1, "a difference exits 1, as git diff --exit-code"
    assert "--- a/generated/stray.txt" in result.stdout
    assert "+++ /dev/null" in result.stdout
    assert snapshot_tree(built) == before


def test_build_removes_files_no_spec_produces(spec_tree: Path, built: Path) -> None:
    stray = built / "old" / "gone.h"
    stray.parent.mkdir()
    stray.write_text("// old\n")
    assert run_cli("build", "--specs", spec_tree, "--out", built).exit_code == 0
    assert not stray.exists()


def test_build_keeps_unchanged_files_untouched(spec_tree: Path, built: Path) -> None:
    (built / "stray.txt").write_text("forces a rewrite of the tree\n")
    before = snapshot_tree(built)
    assert run_cli("build", "--specs", spec_tree, "--out", built).exit_code == 0
    after = snapshot_tree(built)
    del before["stray.txt"]
    assert after == before  # same bytes and same mtimes


def test_noop_build_writes_nothing(spec_tree: Path, built: Path) -> None:
    before = snapshot_tree(built)
    result = run_cli("build", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 0
    assert ", 0 written, 0 removed" in result.stdout
    assert snapshot_tree(built) == before


def test_bad_spec_exits_2_with_a_located_error_and_writes_nothing(spec_tree: Path, built: Path) -> None:
    spec = first_spec_file(spec_tree)
    text = spec.read_text()
    spec.write_text(text + "bogus_key: 1\n")
    before = snapshot_tree(built)
    result = run_cli("build", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 2
    line = text.count("\n") + 1
    rel = spec.relative_to(spec_tree.parent).as_posix()
    assert f"{rel}:{line}:1: bogus_key: unknown key 'bogus_key'" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot_tree(built) == before


def test_duplicate_key_exits_2_and_writes_nothing(spec_tree: Path, built: Path) -> None:
    spec = first_spec_file(spec_tree)
    text = spec.read_text()
    spec_line = next(line for line in text.splitlines() if line.startswith("spec:"))
    spec.write_text(text + spec_line + "\n")
    before = snapshot_tree(built)
    result = run_cli("build", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 2
    assert "duplicate key 'spec' (first defined at line 2)" in result.stderr
    assert snapshot_tree(built) == before


def test_build_interrupted_after_the_first_written_file_leaves_the_tree_unchanged(
    spec_tree: Path, built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (built / "MANIFEST").write_text("stale\n")  # so build has files to write
    before = snapshot_tree(built)
    real_write = write.FS.write
    calls = []

    def write_once_then_fail(path: Path, content: bytes) -> None:
        if calls:
            raise OSError(28, "No space left on device", str(path))
        calls.append(path)
        real_write(path, content)

    monkeypatch.setattr(write.FS, "write", write_once_then_fail)
    with pytest.raises(write.OutputError, match="No space left on device"):
        write.write_tree(built, {"MANIFEST": b"new\n", "a.txt": b"a\n", **{
            k: v[0] for k, v in before.items() if k != "MANIFEST"}})
    assert calls, "the interruption must come after a file was written"
    assert snapshot_tree(built) == before
    assert not list(built.parent.glob(".generated.ttlgen-*"))


def test_build_recovers_a_swap_interrupted_between_its_renames(spec_tree: Path, built: Path) -> None:
    backup = built.parent / ".generated.ttlgen-old-12345"
    os.rename(built, backup)
    # check puts the old tree back before it reads (the swap never finished).
    assert run_cli("check", "--specs", spec_tree, "--out", built).exit_code == 0
    assert not backup.exists()
    os.rename(built, backup)
    assert run_cli("build", "--specs", spec_tree, "--out", built).exit_code == 0
    assert not backup.exists()
    assert run_cli("check", "--specs", spec_tree, "--out", built).exit_code == 0


def test_validate_reports_valid_specs(spec_tree: Path) -> None:
    result = run_cli("validate", "--specs", spec_tree, "--json")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["status"] == "ok"
    assert len(payload["specs"]) == len(list(spec_tree.rglob("*.yaml"))) + len(list(spec_tree.rglob("*.toml")))


def test_errors_in_json_mode_are_structured_on_stdout(spec_tree: Path) -> None:
    spec = first_spec_file(spec_tree)
    spec.write_text(spec.read_text() + "bogus_key: 1\n")
    result = run_cli("validate", "--specs", spec_tree, "--json")
    assert result.exit_code == 2
    payload = json.loads(result.stdout)
    assert payload["status"] == "error"
    assert payload["errors"][0]["path"] == "bogus_key"
    assert payload["errors"][0]["line"] > 0


def test_missing_spec_directory_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("build", "--specs", tmp_path / "nope", "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert "does not exist" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["validate", "build", "check", "diff"])
def test_a_spec_directory_holding_no_spec_file_is_a_usage_error_naming_it(
    command: str, spec_tree: Path, built: Path, tmp_path: Path
) -> None:
    """A mistyped --specs (an empty directory, or the generated tree) is refused: it would
    validate as zero specs, and a build would empty the tree."""
    empty = tmp_path / "spec"
    empty.mkdir()
    (empty / "README.md").write_text("no specs here\n")
    before = snapshot_tree(built)
    result = run_cli(command, "--specs", empty, "--out", built) if command != "validate" else run_cli(command, "--specs", empty)
    assert result.exit_code == 2
    assert result.stderr == (
        "ttlgen: spec directory 'spec' holds no spec file: looked for *.yaml, *.yml or *.toml files, "
        "outside hidden directories; pass --specs DIR\n"
    )
    assert snapshot_tree(built) == before


def test_a_spec_file_name_that_is_not_utf8_is_refused_at_its_file_and_nothing_is_written(
    spec_tree: Path, built: Path
) -> None:
    spec = first_spec_file(spec_tree)
    renamed = spec.with_name(os.fsdecode(b"bad\xff" + os.fsencode(spec.name)))
    spec.rename(renamed)
    before = snapshot_tree(built)
    result = run_cli("build", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 2, result.stderr
    shown = renamed.relative_to(spec_tree.parent).parent.as_posix() + "/bad\\xff" + spec.name
    assert f"{shown}: the file's path is not valid UTF-8 (byte 0xff); rename it" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot_tree(built) == before


def test_a_spec_file_name_holding_a_newline_is_refused_on_one_line(spec_tree: Path) -> None:
    """MANIFEST gives each input one line: a name holding a line break would split it."""
    spec = first_spec_file(spec_tree)
    spec.rename(spec.with_name("two\nlines" + spec.suffix))
    result = run_cli("validate", "--specs", spec_tree)
    assert result.exit_code == 2
    message, summary = result.stderr.splitlines()
    assert message.endswith("/two\\nlines.yaml: the file's path holds the control character U+000A; rename it: "
                            "spec file names are written into MANIFEST and generated headers")
    assert summary == "ttlgen: 1 error(s)"


def test_a_spec_directory_whose_own_name_is_not_utf8_is_refused_once(spec_tree: Path, tmp_path: Path) -> None:
    """The directory's name starts every source name, so it is one error, not one per file."""
    renamed = spec_tree.rename(tmp_path / os.fsdecode(b"specs\xff"))
    result = run_cli("validate", "--specs", renamed)
    assert result.exit_code == 2
    assert result.stderr == (
        "ttlgen: the name of spec directory 'specs\\xff' is not valid UTF-8 (byte 0xff); rename it: "
        "it starts the spec file names written into MANIFEST and generated headers\n"
    )


def test_a_template_file_name_that_is_not_utf8_is_refused_and_nothing_is_written(
    spec_tree: Path, built: Path, tmp_path: Path
) -> None:
    """Every template file is hashed into MANIFEST by name, a file no template includes too."""
    from ttlgen.emit._templates import default_templates_dir

    templates = tmp_path / "templates"
    shutil.copytree(default_templates_dir(), templates, ignore=shutil.ignore_patterns("__pycache__"))
    (templates / os.fsdecode(b"notes\xff.txt")).write_text("x\n")
    before = snapshot_tree(built)
    result = run_cli("build", "--specs", spec_tree, "--templates", templates, "--out", built)
    assert result.exit_code == 2
    assert result.stderr == (
        "ttlgen: templates/notes\\xff.txt: the file's path is not valid UTF-8 (byte 0xff); "
        "rename it: template names are written into MANIFEST\n"
    )
    assert snapshot_tree(built) == before


def test_unknown_option_is_a_usage_error() -> None:
    assert run_cli("build", "--no-such-option").exit_code == 2


def test_generated_tree_holds_no_stage_leftovers(spec_tree: Path, built: Path) -> None:
    (built / "stray.txt").write_text("x\n")
    run_cli("build", "--specs", spec_tree, "--out", built)
    leftovers = [p.name for p in built.parent.iterdir() if ".ttlgen-" in p.name]
    assert leftovers == []
    shutil.rmtree(built)


def test_check_after_a_build_catches_an_edited_file(spec_tree: Path, built: Path) -> None:
    assert run_cli("build", "--specs", spec_tree, "--out", built).exit_code == 0
    edited = built / "MANIFEST"
    edited.write_bytes(edited.read_bytes() + b"# hand edit\n")
    result = run_cli("check", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 1
    assert f"stale: {edited}" in result.stderr


def test_check_notices_a_spec_edit(spec_tree: Path, built: Path) -> None:
    assert run_cli("check", "--specs", spec_tree, "--out", built).exit_code == 0
    spec = first_spec_file(spec_tree)
    spec.write_text(spec.read_text() + "# a comment changes the input hash in MANIFEST\n")
    result = run_cli("check", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 1
    assert f"stale: {built / 'MANIFEST'}" in result.stderr


def test_build_refuses_to_replace_a_directory_it_did_not_write(spec_tree: Path, tmp_path: Path) -> None:
    precious = tmp_path / "elsewhere" / "notes.txt"
    precious.parent.mkdir()
    precious.write_text("mine\n")
    result = run_cli("build", "--specs", spec_tree, "--out", precious.parent)
    assert result.exit_code == 2
    assert "refusing to replace" in result.stderr
    assert precious.read_text() == "mine\n"


def test_build_refuses_an_output_directory_holding_the_specs(spec_tree: Path) -> None:
    result = run_cli("build", "--specs", spec_tree, "--out", spec_tree.parent)
    assert result.exit_code == 2
    assert "contains the spec directory" in result.stderr
    assert (spec_tree.parent / "specs").is_dir()


def test_check_suggests_the_build_of_its_own_inputs_quoted_for_a_shell(spec_tree: Path, tmp_path: Path) -> None:
    import shlex

    shutil.copytree(REPO / "templates", "my templates")
    out = Path("out dir")
    assert run_cli("build", "--specs", spec_tree, "--out", out, "--templates", "my templates").exit_code == 0
    (out / "MANIFEST").write_bytes((out / "MANIFEST").read_bytes() + b"# hand edit\n")
    result = run_cli("check", "--specs", spec_tree, "--out", out, "--templates", "my templates")
    assert result.exit_code == 1
    suggested = result.stderr.splitlines()[-1].split("`")[1]
    assert suggested == f"ttlgen build --specs {shlex.quote(str(spec_tree))} --out 'out dir' --templates 'my templates'"
    assert run_cli(*shlex.split(suggested)[1:]).exit_code == 0
    assert run_cli("check", "--specs", spec_tree, "--out", out, "--templates", "my templates").exit_code == 0
