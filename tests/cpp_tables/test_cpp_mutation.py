"""One relation rule edited in a copy of the specs: the C++ tables and the Python resolver
change together, and the golden that guards the rule stops `validate` at the golden's line,
and (the second line of defence) the C++ from compiling."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import GENERATED, SPECS, TEMPLATES, real_project, run_cli
from tests.cpp_tables.support import (
    canonical,
    check_syntax,
    cpp_table_answers,
    differences,
    library_table_answers,
    package_table_answers,
)

# TT-Lang's later change: bf16 broadcasts accept 32-bit DST on Wormhole B0 and Blackhole.
RULE = "        allow: [16]\n      - when: {element_bits: [32]}"
MUTATED_RULE = "        allow: [16, 32]\n      - when: {element_bits: [32]}"
# The golden the reviewer of that change updates in each target spec it guards.
GOLDEN = "    - primitive: BroadcastRow\n      element: bf16\n      allow: [16]\n"
UPDATED_GOLDEN = "    - primitive: BroadcastRow\n      element: bf16\n      allow: [16, 32]\n"


def _guarded(specs: Path) -> tuple[str, ...]:
    """The target specs that use gen1_llk.dest_width and guard it with the golden above."""
    return tuple(
        sorted(
            path.name
            for path in (specs / "targets").glob("*.yaml")
            if "shared: gen1_llk.dest_width\n" in (text := path.read_text(encoding="utf-8")) and GOLDEN in text
        )
    )


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: the edit no longer applies"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _build(specs: Path, out: Path) -> None:
    result = run_cli("build", "--specs", specs, "--out", out)
    assert result.exit_code == 0, result.stderr


# The tables header, which includes the standard library only (tests/cpp_tables/test_cpp_quality.py).
TABLES = "include/ttl_kernel_config/kernel_target_tables.hpp"


def _build_unchecked(specs: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables header of a build with the goldens unchecked, as a tree that went stale
    behind the specs would hold it (the compile reads nothing else of the tree)."""
    from ttlgen.plan import goldens

    monkeypatch.setattr(goldens, "check", lambda *args: None)
    from ttlgen.emit._base import EmitContext, Templates
    from ttlgen.pipeline import plan, render

    project, planned = plan(specs)
    header = out / TABLES
    header.parent.mkdir(parents=True)
    header.write_bytes(render(project, planned, EmitContext(Templates(TEMPLATES)))[TABLES])


def _golden_errors(specs: Path) -> list[str]:
    result = run_cli("validate", "--specs", specs)
    assert result.exit_code == 2, result.stderr
    return [line for line in result.stderr.splitlines() if ": golden." in line]


def _changed(before: list[dict[str, object]], after: list[dict[str, object]]) -> set[str]:
    return set((canonical(after) - canonical(before)).elements())


def test_a_relation_edit_changes_both_languages_alike(spec_copy: Path, tmp_path: Path, committed_answers: list[dict[str, Any]]) -> None:
    # Before the edit: the committed tree, which is what a build of the real specs writes
    # (tests/test_build_check.py: test_committed_generated_tree_is_up_to_date); its dump
    # program's answers (tests/cpp_tables/conftest.py).
    cpp_before = committed_answers
    python_before = library_table_answers(SPECS)

    guarded = _guarded(spec_copy)
    _edit(spec_copy / "targets" / "gen1_llk.yaml", RULE, MUTATED_RULE)
    for name in guarded:
        _edit(spec_copy / "targets" / name, GOLDEN, UPDATED_GOLDEN)
    mutated = tmp_path / "mutated"
    _build(spec_copy, mutated)
    cpp_after = cpp_table_answers(mutated, tmp_path)
    python_after = library_table_answers(spec_copy)

    assert canonical(cpp_after) == canonical(python_after), differences(cpp_after, python_after)
    assert canonical(package_table_answers(mutated)) == canonical(python_after)
    changed = _changed(cpp_before, cpp_after)
    assert changed == _changed(python_before, python_after)
    # Exactly the 16-bit broadcasts of the targets using gen1_llk.dest_width now allow 32 bits.
    records = [json.loads(line) for line in changed]
    assert {r["query"] for r in records} == {"dest_width"}
    assert {r["target"] for r in records} == {name.removesuffix(".yaml") for name in guarded}
    assert {r["primitive"] for r in records} == {"BroadcastColumn", "BroadcastRow", "BroadcastScalar"}
    sixteen_bit = {e.name for e in real_project().ops.vocabulary.element_types if e.bits == 16}
    assert {r["element"] for r in records} == sixteen_bit
    assert all(r["widths"] == [16, 32] for r in records)
    assert len(records) == len(guarded) * 3 * len(sixteen_bit)


def test_a_relation_edit_that_breaks_a_golden_fails_validate_at_each_golden(spec_copy: Path) -> None:
    guarded = _guarded(spec_copy)
    _edit(spec_copy / "targets" / "gen1_llk.yaml", RULE, MUTATED_RULE)
    errors = _golden_errors(spec_copy)
    assert len(errors) == len(guarded), errors
    for name in guarded:
        assert any(line.startswith(f"specs/targets/{name}:") and "golden.dest_width[0]: the relations allow {16, 32}" in line for line in errors), errors


def test_a_relation_edit_that_breaks_a_golden_fails_to_compile(spec_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "include_tables.cpp"
    source.write_text(f'#include "{TABLES.removeprefix("include/")}"\n', encoding="utf-8")
    # Without linking, the return code is the header's: the specs as they are compile.
    unchanged = check_syntax(source, [GENERATED / "include"])
    assert unchanged.returncode == 0, unchanged.stderr
    guarded = _guarded(spec_copy)
    _edit(spec_copy / "targets" / "gen1_llk.yaml", RULE, MUTATED_RULE)
    out = tmp_path / "generated"
    _build_unchecked(spec_copy, out, monkeypatch)
    result = check_syntax(source, [out / "include"])
    assert result.returncode == 1, result.stderr
    failed = [line for line in result.stderr.splitlines() if "static assertion failed" in line]
    # One failed golden per guarded target, each naming where it is written.
    assert len(failed) == len(guarded), result.stderr
    for name in guarded:
        assert any(f"specs/targets/{name} golden.dest_width[0]:" in line for line in failed), result.stderr



# Blackhole's row-reduce warning, as its architecture spec states it and its targets'
# goldens pin it.
WARNING = "using non-full-fp32 reduce lowering"
CHANGED_WARNING = "using the non-full-fp32 lowering"


def _pinning(specs: Path) -> tuple[str, ...]:
    """The target specs of Blackhole whose goldens pin the warning's text (another
    architecture's targets pin their own architecture's text, which the edit leaves alone)."""
    found = []
    for path in sorted((specs / "targets").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if WARNING in text and yaml.safe_load(text).get("architecture") == "blackhole":
            found.append(path.name)
    return tuple(found)


def test_an_edit_of_a_pinned_warning_text_fails_validate_at_each_golden(spec_copy: Path) -> None:
    pinning = _pinning(spec_copy)
    _edit(spec_copy / "targets" / "architectures" / "blackhole.yaml", WARNING, CHANGED_WARNING)
    errors = _golden_errors(spec_copy)
    assert pinning and len(errors) == len(pinning), errors
    for name in pinning:
        assert any(line.startswith(f"specs/targets/{name}:") and "golden.full_fp32[0]: the full-fp32 reduce_row warning is" in line for line in errors), errors


def test_an_edit_of_a_pinned_warning_text_fails_to_compile(spec_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pinning = _pinning(spec_copy)
    _edit(spec_copy / "targets" / "architectures" / "blackhole.yaml", WARNING, CHANGED_WARNING)
    out = tmp_path / "generated"
    _build_unchecked(spec_copy, out, monkeypatch)
    source = tmp_path / "include_tables.cpp"
    source.write_text(f'#include "{TABLES.removeprefix("include/")}"\n', encoding="utf-8")
    result = check_syntax(source, [out / "include"])
    assert result.returncode == 1, result.stderr
    failed = [line for line in result.stderr.splitlines() if "static assertion failed" in line]
    # One failed golden per target pinning it, each naming where it is written.
    assert len(failed) == len(pinning), result.stderr
    for name in pinning:
        assert any(f"specs/targets/{name} golden.full_fp32[0]:" in line for line in failed), result.stderr
