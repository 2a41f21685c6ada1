"""Each API level's spec agrees with the headers of the release it pins, and the check has teeth.

``ttlgen upstream check`` parses the pinned wheel's kernel headers with libclang and compares
every header, function form, enumeration, class and define the spec states; each
disagreement is located at the spec line. ``ttlgen upstream import`` writes those facts from
the headers, so a spec edited away from its release comes back byte for byte.
"""

from __future__ import annotations

import re
import resource
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from upstream_helpers import project, release_api

from tests.conftest import SPECS, run_cli
from ttlgen.model.tt_metal_api import ApiLevel
from ttlgen.upstream.api_check import Disagreement, check_level
from ttlgen.upstream.project import LevelSpec, load_levels

# The comparison of both levels, headers parsed, within a few seconds of CPU (measured:
# about 1.2 s per level, nearly all of it libclang's parse and the walk of its cursors).
CPU_BUDGET_S = 15.0


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def test_every_api_level_agrees_with_the_headers_of_its_release() -> None:
    levels = project().api.levels
    assert levels
    started = _cpu()
    for level in levels:
        assert level.release is not None
        found = check_level(level, release_api(level.level), level.release.name)
        assert not found, "\n".join(d.format() for d in found)
    spent = _cpu() - started
    assert spent < CPU_BUDGET_S, f"checking the API levels took {spent:.1f} s of CPU (budget {CPU_BUDGET_S} s)"


def test_the_command_says_so_per_level() -> None:
    for level in project().api.levels:
        release_api(level.level)  # fetched (or skipped) before the command runs
    result = run_cli("upstream", "check", "--specs", SPECS)
    assert result.exit_code == 0, result.stderr
    for level in project().api.levels:
        assert level.release is not None
        assert f"ttlgen: level {level.level}: 0 disagreements with {level.release.name}\n" in result.stdout


# --------------------------------------------------------------------------------- teeth


def _copy(tmp_path: Path) -> Path:
    specs = tmp_path / "specs"
    shutil.copytree(SPECS, specs)
    return specs


def _level_spec(specs: Path, name: str) -> LevelSpec:
    (found,) = load_levels(specs, [name])
    return found


def _edit_line(path: Path, line: int, old: str, new: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert old in lines[line - 1], (old, lines[line - 1])
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path.write_text("".join(lines), encoding="utf-8")


def _disagreements(specs: Path, name: str) -> list[Disagreement]:
    found = _level_spec(specs, name)
    return check_level(found.level, release_api(name), found.level.release.name if found.level.release else "")


# Each mutation edits one fact of the `current` level's spec away from the release and
# returns the (line, message pattern) the check must report.
Mutation = Callable[[ApiLevel, Path], tuple[int, str]]


def parameter_default(level: ApiLevel, path: Path) -> tuple[int, str]:
    form = next(f for f in level.all_forms() if any(p.default is not None for p in f.signature.params))
    index, param = next((i, p) for i, p in enumerate(form.signature.params, start=1) if p.default is not None)
    _edit_line(path, form.mark.line, param.text, f"{param.type.text} {param.name} = 12345")
    return form.mark.line, rf"'{form.name}' differs from ttnn [\d.]+ .*parameter {index} is `{re.escape(param.text)}`, not `.* = 12345`"


def template_parameter_default(level: ApiLevel, path: Path) -> tuple[int, str]:
    form = next(f for f in level.all_forms() if any(t.default == "false" for t in f.signature.template))
    index, param = next((i, t) for i, t in enumerate(form.signature.template, start=1) if t.default == "false")
    _edit_line(path, form.mark.line, param.text, param.text.replace("= false", "= true"))
    return form.mark.line, rf"template parameter {index} is `{re.escape(param.text)}`"


def function_the_release_lacks(level: ApiLevel, path: Path) -> tuple[int, str]:
    form = next(f for f in level.all_forms() if not f.configures and f.deprecated is None)
    _edit_line(path, form.mark.line, f" {form.name}(", " ttlgen_no_such_function(")
    return form.mark.line, r"declares no 'ttlgen_no_such_function' for \w+ kernels"


def enumerator_value(level: ApiLevel, path: Path) -> tuple[int, str]:
    kind = next(t for t in level.types if t.enumerators and all(e.value is not None for e in t.enumerators))
    assert kind.enumerators is not None
    last = kind.enumerators[-1]
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next(i for i in range(kind.mark.line - 1, len(lines)) if f"{last.name}: {last.value}" in lines[i]) + 1
    _edit_line(path, line, f"{last.name}: {last.value}", f"{last.name}: {(last.value or 0) + 100}")
    return kind.mark.line, rf"{kind.name}::{last.name} is {last.value} in ttnn [\d.]+ .*, not {(last.value or 0) + 100}"


def enumeration_scope(level: ApiLevel, path: Path) -> tuple[int, str]:
    kind = next(t for t in level.types if t.enumerators and t.scoped)
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next(i for i in range(kind.mark.line - 1, len(lines)) if "scoped: true" in lines[i]) + 1
    _edit_line(path, line, "scoped: true", "scoped: false")
    return kind.mark.line, rf"{kind.name} is an enum class in ttnn [\d.]+ .*; set scoped: true"


def deprecation_message(level: ApiLevel, path: Path) -> tuple[int, str]:
    form = next(f for f in level.all_forms() if f.deprecated is not None and f.deprecated.quoted)
    assert form.deprecated is not None
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next(i for i in range(form.mark.line - 1, len(lines)) if "deprecated:" in lines[i]) + 1
    _edit_line(path, line, form.deprecated.message, "a paraphrase")
    return form.mark.line, r"is deprecated in ttnn [\d.]+ with the message .*; the spec says 'a paraphrase'"


def missing_form(level: ApiLevel, path: Path) -> tuple[int, str]:
    # The second form of a function with two forms in one header (one without comments of
    # its own above it), deleted with its knowledge.
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for header in level.headers:
        for first, second in zip(header.forms, header.forms[1:], strict=False):
            start = second.mark.line - 1
            if first.name != second.name or lines[start - 1].lstrip().startswith("#"):
                continue
            indent = len(lines[start]) - len(lines[start].lstrip())
            end = start + 1
            while end < len(lines) and lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) > indent:
                end += 1
            del lines[start:end]
            path.write_text("".join(lines), encoding="utf-8")
            return first.mark.line, rf"also declares this form of '{first.name}' .*, which the spec lacks: {re.escape(second.signature.text)}"
    pytest.skip("no function of the level has a second form in the same header")


def define_kind(level: ApiLevel, path: Path) -> tuple[int, str]:
    define = next(d for d in level.defines if d.constexpr is not None and "::" not in d.name)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[define.mark.line - 1] = f"  {define.name}: {define.meaning}\n"
    path.write_text("".join(lines), encoding="utf-8")
    return define.mark.line, rf"{define.name} is a variable in ttnn [\d.]+ .*, not a macro: write \{{constexpr: {define.constexpr}, meaning: \.\.\.\}}"


MUTATIONS: dict[str, Mutation] = {
    f.__name__: f
    for f in (
        parameter_default, template_parameter_default, function_the_release_lacks, enumerator_value,
        enumeration_scope, deprecation_message, missing_form, define_kind,
    )
}  # fmt: skip
# What `ttlgen upstream import` restores byte for byte. Not a function the release lacks
# (dropped: the release cannot say what the spec meant), nor a deleted form, whose
# knowledge beside the signature (what it configures) is ttlgen's and went with it: the
# import adds the form back with its sibling's knowledge and says so.
REFRESHED = sorted(set(MUTATIONS) - {"function_the_release_lacks", "missing_form"})


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_fact_edited_away_from_the_release_is_one_disagreement_at_its_line(tmp_path: Path, mutation: str) -> None:
    specs = _copy(tmp_path)
    found = _level_spec(specs, "current")
    line, pattern = MUTATIONS[mutation](found.level, found.path)
    disagreements = _disagreements(specs, "current")
    assert len(disagreements) == 1, "\n".join(d.format() for d in disagreements)
    (only,) = disagreements
    assert only.mark.line == line and only.mark.file.endswith("tt_metal/current.yaml"), only.format()
    assert re.search(pattern, only.message), only.message


def test_the_command_exits_1_with_the_located_disagreement(tmp_path: Path) -> None:
    specs = _copy(tmp_path)
    found = _level_spec(specs, "current")
    line, _ = enumeration_scope(found.level, found.path)
    release_api("current")
    result = run_cli("upstream", "check", "--level", "current", "--specs", specs)
    assert result.exit_code == 1
    assert re.match(rf"\S*tt_metal/current\.yaml:{line}:\d+: types\.\w+: \w+ is an enum class", result.stderr), result.stderr
    assert result.stdout.startswith("ttlgen: level current: 1 disagreements with ttnn ")


def test_importing_a_level_that_agrees_with_its_release_changes_nothing(tmp_path: Path) -> None:
    specs = _copy(tmp_path)
    for level in project().api.levels:
        release_api(level.level)
        path = _level_spec(specs, level.level).path
        before = path.read_bytes()
        result = run_cli("upstream", "import", "--level", level.level, "--specs", specs)
        assert result.exit_code == 0, result.stderr
        assert "already up to date with" in result.stdout
        assert path.read_bytes() == before


def test_importing_restores_every_fact_edited_away_from_the_release(tmp_path: Path) -> None:
    specs = _copy(tmp_path)
    path = _level_spec(specs, "current").path
    shipped = path.read_bytes()
    for mutation in REFRESHED:
        MUTATIONS[mutation](_level_spec(specs, "current").level, path)
    assert _disagreements(specs, "current")  # (two edits may meet in one form)
    result = run_cli("upstream", "import", "--level", "current", "--specs", specs)
    assert result.exit_code == 0, result.stderr
    assert path.read_bytes() == shipped
    assert _disagreements(specs, "current") == []


def test_import_drops_a_function_the_release_lacks_and_says_so(tmp_path: Path) -> None:
    specs = _copy(tmp_path)
    found = _level_spec(specs, "current")
    function_the_release_lacks(found.level, found.path)
    result = run_cli("upstream", "import", "--level", "current", "--specs", specs)
    assert result.exit_code == 0, result.stderr
    assert re.search(r"ttlgen: dropped ttlgen_no_such_function \(\S+\): ttnn [\d.]+ declares no 'ttlgen_no_such_function'", result.stderr)
    assert "ttlgen_no_such_function" not in found.path.read_text(encoding="utf-8")
    assert _disagreements(specs, "current") == []


def test_import_adds_back_a_form_the_spec_lacks_and_says_whose_knowledge_it_copied(tmp_path: Path) -> None:
    specs = _copy(tmp_path)
    found = _level_spec(specs, "current")
    missing_form(found.level, found.path)
    result = run_cli("upstream", "import", "--level", "current", "--specs", specs)
    assert re.search(r"ttlgen: added a form of \w+ \(\S+:\d+\): ", result.stderr), result.stderr
    # Its signature is the release's again; whether the copied knowledge fits it is for a
    # person to say: a level it leaves inconsistent is a located error and exit 1.
    if result.exit_code == 1:
        assert re.search(r"tt_metal/current\.yaml:\d+:\d+: headers\[", result.stderr), result.stderr
        assert "is refreshed but not yet a valid level" in result.stderr
    else:
        assert result.exit_code == 0, result.stderr
        assert _disagreements(specs, "current") == []


def test_the_parse_of_a_release_is_kept_for_the_process() -> None:
    level = project().api.level("current")
    assert level is not None
    release_api("current")
    started = time.perf_counter()
    release_api("current")
    assert time.perf_counter() - started < 0.1


def test_the_json_result_lists_each_level_with_its_disagreements() -> None:
    import json

    for level in project().api.levels:
        release_api(level.level)
    result = run_cli("upstream", "check", "--json", "--specs", SPECS)
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["status"] == "ok"
    assert {entry["level"]: entry["disagreements"] for entry in payload["levels"]} == {level.level: [] for level in project().api.levels}


def test_without_libclang_the_commands_say_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from ttlgen.upstream import release_api as parsing

    monkeypatch.setitem(sys.modules, "clang.cindex", None)  # an import of it fails
    with pytest.raises(parsing.HeaderParseError, match=r"needs libclang \(the PyPI package `libclang`\): pip install 'ttlgen\[upstream\]'"):
        parsing.read_kind(Path("/nonexistent"), parsing.KernelKind.COMPUTE)
