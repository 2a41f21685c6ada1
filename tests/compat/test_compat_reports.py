"""What a compat report says about each change, and how compat treats bad input and git."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pytest
from compat_support import apply, compat_json, git, make_repo, run_in
from test_compat_catalogue import FP32_DEST_RULE, LAYOUT, POLICY_KERNEL, PRIORITY, RELATIONS

from tests.conftest import run_cli


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("compat-reports"))


@pytest.fixture
def repo(base_repo: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(base_repo, copy)
    return copy


def _line(repo: Path, file: str, text: str) -> int:
    lines = (repo / "specs" / file).read_text(encoding="utf-8").splitlines()
    (number,) = [i + 1 for i, line in enumerate(lines) if text in line]
    return number


def _change(report: dict[str, object], kind: str, subject: str) -> dict[str, object]:
    changes = report["changes"]
    assert isinstance(changes, list)
    (found,) = [c for c in changes if c["kind"] == kind and c["subject"] == subject]
    assert isinstance(found, dict)
    return found


def test_a_changed_value_is_located_at_its_key_on_both_sides(repo: Path) -> None:
    apply(repo, [(LAYOUT, "{name: limit, value: 2, doc: the wait timed out}", "{name: limit, value: 5, doc: the wait timed out}")])
    _, report = compat_json(repo)
    change = _change(report, "enum-value", "value 'limit' of enum 'gave'")
    line = _line(repo, LAYOUT, "{name: limit, value: 5")
    at = {"file": "specs/abi/komorebi.yaml", "line": line, "column": 30, "path": "enums.gave.values[2].value"}
    assert (change["message"], change["before"], change["after"], change["status"]) == ("value 2 -> 5", at, at, "breaking")


def test_a_removed_thing_is_located_only_before_and_an_added_one_only_after(repo: Path, base_repo: Path) -> None:
    apply(
        repo,
        [
            (LAYOUT, '      - {name: queue, value: 8, doc: "dispatcher only: the group allocator chooses first"}\n', ""),
            (LAYOUT, "  - name: behind_port\n", "  - {name: max_cores, value: 128}\n  - name: behind_port\n"),
        ],
    )
    _, report = compat_json(repo)
    removed = _change(report, "enum-value-removed", "flag 'queue' of enum 'flag'")
    added = _change(report, "constant-added", "constant 'max_cores'")
    assert removed["after"] is None and removed["before"] == {
        "file": "specs/abi/komorebi.yaml", "line": _line(base_repo, LAYOUT, "{name: queue, value: 8"), "column": 9, "path": "enums.flag.values[2]",
    }
    assert added["before"] is None and added["after"] == {
        "file": "specs/abi/komorebi.yaml", "line": _line(repo, LAYOUT, "max_cores"), "column": 5, "path": "constants[1]",
    }


def test_both_sides_are_named_from_the_current_directory(repo: Path) -> None:
    apply(repo, [(LAYOUT, "{name: limit, value: 2, doc: the wait timed out}", "{name: limit, value: 5, doc: the wait timed out}")])
    (repo / "generated").mkdir()
    with contextlib.chdir(repo / "generated"):
        result = run_cli("compat", "--against", "main", "--specs", "../specs", "--json")
    change = _change(json.loads(result.stdout), "enum-value", "value 'limit' of enum 'gave'")
    assert (change["before"]["file"], change["after"]["file"]) == ("../specs/abi/komorebi.yaml", "../specs/abi/komorebi.yaml")


def test_the_errors_of_the_specs_at_the_ref_are_named_from_the_current_directory(repo: Path) -> None:
    apply(repo, [(LAYOUT, "{name: limit, value: 2,", "{name: limit, value: 2, colour: red,")])
    git(repo, "commit", "-q", "-am", "a broken layout")
    apply(repo, [(LAYOUT, "{name: limit, value: 2, colour: red,", "{name: limit, value: 2,")])
    (repo / "generated").mkdir()
    with contextlib.chdir(repo / "generated"):
        result = run_cli("compat", "--against", "HEAD", "--specs", "../specs")
    assert result.exit_code == 2
    assert f"\n../specs/abi/komorebi.yaml:{_line(repo, LAYOUT, '{name: limit, value: 2,')}:33: enums.gave.values[2].colour: " in result.stderr


def test_a_kernel_whose_plan_moves_names_before_after_and_the_relation_that_moved_it(repo: Path) -> None:
    apply(repo, [FP32_DEST_RULE])
    _, report = compat_json(repo)
    plan = _change(report, "kernel-plan", "kernel 'eltwise_add_f32'")["plan"]
    text = (repo / "specs" / RELATIONS).read_text(encoding="utf-8")
    table = text.index("  dest_width:\n    query: dest_width")
    line = text.count("\n", 0, text.index("      - when: {element_bits: [32]}", table)) + 1
    rule = {"file": "specs/targets/gen1_llk.yaml", "line": line, "column": 9, "path": "tables.dest_width.rules[1]"}
    assert plan == {
        "kernel": "eltwise_add_f32",
        "facets": [
            {"facet": "dest width", "before": "32 bits", "after": "16 bits"},
            {"facet": "fp32_dest_acc_en", "before": "true", "after": "false"},
        ],
        "causes": [
            {
                "what": "relation dest_width of target 'blackhole' (gen1_llk.dest_width): rule 2: "
                "when element_bits [32]: allow dest_width [32] -> when element_bits [32]: allow dest_width [16, 32]",
                "before": rule,
                "after": rule,
                "joint": False,
            }
        ],
    }


def test_a_kernel_whose_own_policy_changed_names_its_spec_as_the_cause(repo: Path) -> None:
    # A kernel of its own file, committed, then its policy removed.
    apply(repo, [("kernels/policy_case.yaml", "", POLICY_KERNEL)])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a kernel with a policy")
    apply(repo, [("kernels/policy_case.yaml", "    policy:\n      options: {enable-fpu-binary-ops: false}\n", "")])
    _, report = compat_json(repo)
    plan = _change(report, "kernel-plan", "kernel 'mul_bf16_by_policy'")["plan"]
    assert isinstance(plan, dict)
    assert plan["facets"][0] == {"facet": "strategies", "before": "op1 sfpu", "after": "op1 fpu"}
    assert [c["what"] for c in plan["causes"]] == ["kernel 'mul_bf16_by_policy': options changed"]


def test_the_text_report_says_which_version_to_set(repo: Path) -> None:
    apply(repo, [PRIORITY])
    result = run_in(repo, "compat", "--against", "main", "--specs", "specs")
    assert result.exit_code == 1
    version = _line(repo, LAYOUT, "abi_version:")
    assert (
        f"note: layout 'komorebi' has breaking changes: set abi_version to 2.0 (at specs/abi/komorebi.yaml:{version}:14: abi_version)"
        in result.stdout
    )
    assert "  [layout source] C function km_hdr_pack: 3 -> 4 parameters; km_hdr_pack(handler, flags, slot) -> km_hdr_pack(handler, flags, slot, priority)\n" in result.stdout
    assert result.stdout.endswith("ttlgen compat: 1 breaking change(s) not covered by a major version bump\n")


def test_an_addition_without_a_minor_bump_passes_with_a_note(repo: Path) -> None:
    apply(repo, [(LAYOUT, "  - name: behind_port\n", "  - {name: max_cores, value: 128}\n  - name: behind_port\n")])
    result = run_in(repo, "compat", "--against", "main", "--specs", "specs")
    assert result.exit_code == 0
    assert "note: layout 'komorebi' has additions: the policy asks for abi_version 1.1" in result.stdout


def test_unchanged_specs_are_compatible(repo: Path) -> None:
    code, report = compat_json(repo)
    assert (code, report["status"], report["changes"], report["verdict"]) == (0, "ok", [], "compatible: no change to the ABI")


def test_compat_leaves_the_work_tree_and_the_index_alone(repo: Path) -> None:
    apply(repo, [PRIORITY])
    git(repo, "add", "specs/abi/komorebi.yaml")
    status, index = git(repo, "status", "--porcelain"), (repo / ".git" / "index").read_bytes()
    compat_json(repo)
    assert (git(repo, "status", "--porcelain"), (repo / ".git" / "index").read_bytes()) == (status, index)


def test_a_spec_directory_below_the_repository_root_is_found_at_the_ref(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(make_repo(tmp_path / "made"), repo / "tools" / "gen")
    shutil.move(str(repo / "tools" / "gen" / ".git"), str(repo / ".git"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "move the specs down")
    apply(repo / "tools" / "gen", [PRIORITY])
    result = run_cli("compat", "--against", "HEAD", "--specs", repo / "tools" / "gen" / "specs", "--json")
    assert result.exit_code == 1
    assert "bit field 'priority' of word 'hdr'" in result.stdout


# -- bad input: exit 2 -------------------------------------------------------------------


def test_an_unknown_ref_is_bad_input(repo: Path) -> None:
    result = run_in(repo, "compat", "--against", "no-such-branch", "--specs", "specs")
    assert result.exit_code == 2
    assert result.stderr == f"ttlgen: unknown git ref 'no-such-branch' in {repo}: no commit has that name\n"


def test_a_directory_outside_git_is_bad_input(base_repo: Path, tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(base_repo / "specs", specs)  # specs that load: only git is missing
    result = run_cli("compat", "--against", "main", "--specs", specs)
    assert result.exit_code == 2
    assert result.stderr == f"ttlgen: {str(specs)!r} is not inside a git repository; compat compares the specs with a git ref\n"


def test_specs_that_do_not_load_at_the_ref_are_bad_input(repo: Path) -> None:
    apply(repo, [(LAYOUT, "{name: limit, value: 2,", "{name: limit, value: 2, colour: red,")])
    git(repo, "commit", "-q", "-am", "a broken layout")
    apply(repo, [(LAYOUT, "{name: limit, value: 2, colour: red,", "{name: limit, value: 2,")])
    result = run_in(repo, "compat", "--against", "HEAD", "--specs", "specs")
    assert result.exit_code == 2
    head = git(repo, "rev-parse", "HEAD").strip()[:12]
    line = _line(repo, LAYOUT, "{name: limit, value: 2,")
    assert result.stderr == (
        f"the specs at HEAD ({head}) do not load:\nspecs/abi/komorebi.yaml:{line}:33: enums.gave.values[2].colour: "
        "unknown key 'colour'; valid keys: display, doc, name, reserved, value\nttlgen: 1 error(s)\n"
    )


def test_specs_that_do_not_load_in_the_work_tree_are_bad_input(repo: Path) -> None:
    apply(repo, [(LAYOUT, "{name: limit, value: 2,", "{name: limit, value: 2, colour: red,")])
    result = run_in(repo, "compat", "--against", "main", "--specs", "specs", "--json")
    assert result.exit_code == 2
    assert '"status": "error"' in result.stdout and "unknown key 'colour'" in result.stdout


def test_a_ref_without_the_spec_directory_is_bad_input(repo: Path) -> None:
    git(repo, "checkout", "-q", "--orphan", "empty")
    git(repo, "rm", "-q", "-r", "--cached", "specs")
    (repo / "README").write_text("nothing here\n", encoding="utf-8")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "no specs")
    result = run_in(repo, "compat", "--against", "empty", "--specs", "specs")
    assert result.exit_code == 2
    assert "has no files under specs/: there are no specs to compare with" in result.stderr


def test_a_ref_whose_spec_directory_holds_no_spec_file_is_bad_input_naming_the_ref(repo: Path) -> None:
    git(repo, "checkout", "-q", "--orphan", "notes")
    git(repo, "rm", "-q", "-r", "--cached", "specs")
    (repo / "specs" / "NOTES.md").write_text("specs come later\n", encoding="utf-8")
    git(repo, "add", "specs/NOTES.md")
    git(repo, "commit", "-q", "-m", "no specs yet")
    result = run_in(repo, "compat", "--against", "notes", "--specs", "specs")
    assert result.exit_code == 2
    assert result.stderr.startswith("ttlgen: 'notes' (")
    assert "has no spec file under specs/ (looked for *.yaml, *.yml or *.toml files, outside hidden directories)" in result.stderr


def test_the_text_report_says_what_was_not_compared_as_the_json_does(repo: Path) -> None:
    _, report = compat_json(repo)
    others = report["other_causes"]
    assert isinstance(others, dict) and others["notes"], "the sample repository holds no generated tree at main"
    text = run_in(repo, "compat", "--against", "main", "--specs", "specs").stdout
    for note in others["notes"]:
        assert f"note: {note}" in text
