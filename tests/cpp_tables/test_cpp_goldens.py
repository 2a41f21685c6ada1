"""The golden static_asserts of the C++ table header are the `golden` entries of the target
specs: one each, naming the spec file and entry it comes from."""

from __future__ import annotations

import re

import yaml

from tests.conftest import GENERATED, SPECS
from ttlgen.plan.kernel_target_cpp import HEADER

ASSERT = re.compile(r'static_assert\(holds\(.*?\),\s*((?:"[^"]*"\s*)+)\);', re.DOTALL)


def _messages() -> list[str]:
    """The message of each golden assertion, its adjacent literals joined."""
    header = (GENERATED / "include" / HEADER).read_text(encoding="utf-8")
    return ["".join(re.findall(r'"([^"]*)"', literals)) for literals in ASSERT.findall(header)]


def _spec_goldens() -> set[str]:
    """``<file> golden.<query>[i]`` for every golden entry written in a target spec (or in
    a rejected architecture's, which has no target spec)."""
    found = set()
    for path in sorted((SPECS / "targets").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        file = f"specs/{path.relative_to(SPECS).as_posix()}"
        for query, entries in (data.get("golden") or {}).items():
            if isinstance(entries, list):
                found.update(f"{file} golden.{query}[{i}]" for i in range(len(entries)))
            else:
                found.add(f"{file} golden.{query}")
    return found


def test_every_golden_of_the_target_specs_is_asserted_once() -> None:
    asserted = [m.split(":")[0] for m in _messages()]
    assert sorted(asserted) == sorted(_spec_goldens())
    assert len(set(asserted)) == len(asserted)


def test_the_specs_pin_the_facts_tt_langs_lit_tests_pin() -> None:
    goldens = _spec_goldens()
    for target in ("blackhole", "blackhole_gen1_config", "wormhole_b0", "wormhole_b0_gen1_config", "no_target"):
        file = f"specs/targets/{target}.yaml"
        for query in ("dest_width[0]", "dfb_unpack[0]", "full_fp32[0]", "dfb_capacity"):
            assert f"{file} golden.{query}" in goldens
    # TargetInfo.h sizes Quasar's buffer indices though the kernel-config pass rejects it.
    assert "specs/targets/architectures/quasar.yaml golden.dfb_capacity" in goldens


def test_a_failed_golden_says_why_it_holds() -> None:
    assert (
        "specs/targets/blackhole.yaml golden.full_fp32[0]: a row reduce on Blackhole has no full-fp32 "
        "lowering and warns (tt-metal #47311)"
    ) in _messages()


# TT-Lang's warning for a preferred full-fp32 row reduce on Blackhole, as upstream writes it
# (ComputeKernelConfigAnalysis.cpp@11c06838): a test of the spec against upstream.
TT_LANG_ROW_REDUCE_WARNING = (
    "full-fp32 row reduce is unavailable on Blackhole (tt-metal #47311); using non-full-fp32 reduce lowering"
)


def test_blackholes_row_reduce_golden_pins_tt_langs_warning_text() -> None:
    data = yaml.safe_load((SPECS / "targets" / "blackhole.yaml").read_text(encoding="utf-8"))
    pinned = [g for g in data["golden"]["full_fp32"] if g["kind"] == "reduce_row"]
    assert [(g["warns"], g.get("warning")) for g in pinned] == [(True, TT_LANG_ROW_REDUCE_WARNING)]
