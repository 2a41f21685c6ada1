"""One relation rule edited in a copy of the specs: the C++ tables and the Python resolver
change together, and the golden that guards the rule stops the C++ from compiling."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import GENERATED, real_project, run_cli
from tests.cpp_tables.support import (
    canonical,
    check_syntax,
    cpp_table_answers,
    differences,
    library_table_answers,
    package_table_answers,
)
from ttlgen.model.goldens import FullFp32Golden

# TT-Lang's later change: bf16 broadcasts accept 32-bit DST on Wormhole B0 and Blackhole.
RULE = "        allow: [16]\n      - when: {element_bits: [32]}"
MUTATED_RULE = "        allow: [16, 32]\n      - when: {element_bits: [32]}"
# The golden the reviewer of that change updates in each target spec it guards.
GOLDEN = "    - primitive: BroadcastRow\n      element: bf16\n      allow: [16]\n"
UPDATED_GOLDEN = "    - primitive: BroadcastRow\n      element: bf16\n      allow: [16, 32]\n"
SHARED_TABLE = "gen1_llk.dest_width"
# The targets that use the edited table, and the spec files of those that pin the rule with
# that golden (a target added by spec is one more of each).
SHARING = sorted(t.name for t in real_project().targets.targets if t.dest_width and t.dest_width.origin == SHARED_TABLE)
GUARDED = sorted(
    Path(t.source).name
    for t in real_project().targets.targets
    if t.name in SHARING and any(g.origin.label.startswith("golden.dest_width") and g.primitive == "BroadcastRow" and g.element == "bf16" for g in t.goldens)
)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: the edit no longer applies"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _build(specs: Path, out: Path) -> None:
    result = run_cli("build", "--specs", specs, "--out", out)
    assert result.exit_code == 0, result.stderr


def _changed(before: list[dict[str, object]], after: list[dict[str, object]]) -> set[str]:
    return set((canonical(after) - canonical(before)).elements())


def test_a_relation_edit_changes_both_languages_alike(spec_copy: Path, tmp_path: Path) -> None:
    original = tmp_path / "original"
    _build(spec_copy, original)
    cpp_before = cpp_table_answers(original, tmp_path)
    python_before = library_table_answers(spec_copy)

    _edit(spec_copy / "targets" / "gen1_llk.yaml", RULE, MUTATED_RULE)
    for name in GUARDED:
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
    assert sorted({r["target"] for r in records}) == SHARING
    assert {r["primitive"] for r in records} == {"BroadcastColumn", "BroadcastRow", "BroadcastScalar"}
    sixteen_bit = {e.name for e in real_project().ops.vocabulary.element_types if e.bits == 16}
    assert {r["element"] for r in records} == sixteen_bit
    assert all(r["widths"] == [16, 32] for r in records)
    assert len(records) == len(SHARING) * 3 * len(sixteen_bit)


def test_a_relation_edit_that_breaks_a_golden_fails_to_compile(spec_copy: Path, tmp_path: Path) -> None:
    source = tmp_path / "include_tables.cpp"
    source.write_text('#include "ttl_kernel_config/kernel_target_tables.hpp"\n', encoding="utf-8")
    # Without linking, the return code is the header's: the specs as they are compile.
    unchanged = check_syntax(source, [GENERATED / "include"])
    assert unchanged.returncode == 0, unchanged.stderr
    _edit(spec_copy / "targets" / "gen1_llk.yaml", RULE, MUTATED_RULE)
    out = tmp_path / "generated"
    _build(spec_copy, out)
    result = check_syntax(source, [out / "include"])
    assert result.returncode == 1, result.stderr
    failed = [line for line in result.stderr.splitlines() if "static assertion failed" in line]
    # One failed golden per guarded target, each naming where it is written.
    assert len(failed) == len(GUARDED), result.stderr
    for name in GUARDED:
        assert any(f"specs/targets/{name} golden.dest_width[0]:" in line for line in failed), result.stderr



# Blackhole's row-reduce warning, as its architecture spec states it and its targets'
# goldens pin it.
WARNING = "using non-full-fp32 reduce lowering"
CHANGED_WARNING = "using the non-full-fp32 lowering"


def test_an_edit_of_a_pinned_warning_text_fails_to_compile(spec_copy: Path, tmp_path: Path) -> None:
    _edit(spec_copy / "targets" / "architectures" / "blackhole.yaml", WARNING, CHANGED_WARNING)
    out = tmp_path / "generated"
    _build(spec_copy, out)
    source = tmp_path / "include_tables.cpp"
    source.write_text('#include "ttl_kernel_config/kernel_target_tables.hpp"\n', encoding="utf-8")
    result = check_syntax(source, [out / "include"])
    assert result.returncode == 1, result.stderr
    failed = [line for line in result.stderr.splitlines() if "static assertion failed" in line]
    # One failed golden per Blackhole target that pins the text, each naming where it is written.
    pinning = [
        (t.source, g.origin.label)
        for t in real_project().targets.targets
        if t.architecture == "blackhole"
        for g in t.goldens
        if isinstance(g, FullFp32Golden) and g.warning is not None and WARNING in g.warning
    ]
    assert pinning, "no Blackhole target pins its row-reduce warning any more; this test guards nothing"
    assert len(failed) == len(pinning), result.stderr
    for source, label in pinning:
        assert any(f"{source} {label}:" in line for line in failed), result.stderr
