"""The L1-accumulation review's eight scenarios: code shape by snapshot, numerics by device run.

Each scenario is a spec'd kernel, so its compute.cpp is part of the golden tree: the committed
generated/kernels/<name>/compute.cpp, reviewed like every generated file. The tests below pin
the parts of that shape the review is about. Scenario 7 ('+=' inside a conditional) is a
located build error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_helpers import REPO, compute_source, l1_acc_flags, run

from tests.conftest import bad_spec_tree, run_cli

SCENARIOS = {
    1: "l1_acc_consecutive_loops",
    2: "l1_acc_store_then_acc",
    3: "l1_acc_sum_reduction",
    4: "l1_acc_two_outputs",
    5: "l1_acc_fits_f32_dest",
    6: "l1_acc_single_iteration",
    8: "l1_acc_large_block",
}


GOLDEN = REPO / "generated" / "kernels"


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_scenario_compute_kernel_shape_is_committed(scenario: int) -> None:
    golden = GOLDEN / SCENARIOS[scenario] / "compute.cpp"
    assert golden.read_text(encoding="utf-8").endswith(compute_source(SCENARIOS[scenario]))


@pytest.mark.device
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_scenario_numerics_match_the_reference(scenario: int) -> None:
    report = run(SCENARIOS[scenario])
    assert report.passed, report.to_json()


def test_scenario_1_consecutive_loops_share_one_disable_pair() -> None:
    source = compute_source(SCENARIOS[1])
    # disable before loop 1, enable after its first iteration, re-enable before loop 2,
    # disable after loop 2: loop 2's first iteration adds to loop 1's result.
    assert l1_acc_flags(SCENARIOS[1]) == [0, 1, 1, 0]
    between = source[source.index("for (uint32_t k1") : source.index("for (uint32_t k2")]
    assert "pack_reconfig_l1_acc(0)" not in between.split("if (k1 == 0)")[1]


def test_scenario_2_store_then_accumulate_enables_before_the_loop() -> None:
    source = compute_source(SCENARIOS[2])
    loop = source.index("for (uint32_t k")
    assert source[:loop].rstrip().endswith("pack_reconfig_l1_acc(1);")
    assert "if (k == 0)" not in source


def test_scenario_4_enable_follows_both_outputs_first_packs() -> None:
    source = compute_source(SCENARIOS[4])
    enable = source.index("if (k == 0)")
    assert source.rindex("pack_tile<true>(t_, cb_out_ab", 0, enable) < enable
    assert source.rindex("cb_out_cd", 0, enable) < enable


def test_scenario_5_fitting_block_accumulates_in_dst_once() -> None:
    source = compute_source(SCENARIOS[5])
    assert "pack_reconfig_l1_acc" not in source
    assert source.count("tile_regs_acquire();") == 1 and source.index("tile_regs_acquire();") < source.index("for (uint32_t k")


def test_scenario_6_single_iteration_leaves_accumulation_off() -> None:
    l1 = l1_acc_flags(SCENARIOS[6])
    assert l1[0] == 0 and l1[-1] == 0


def test_scenario_7_accumulate_inside_a_conditional_is_a_located_error(tmp_path: Path) -> None:
    specs = bad_spec_tree("kernels/acc_inside_conditional", tmp_path)
    result = run_cli("build", "--specs", specs, "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert result.stderr.startswith("specs/kernels/bad.yaml:21:21: kernels.acc_in_if.body[1].loop.body[1].if.then[0].accumulate:")
    assert "'+=' inside a conditional is not supported" in result.stderr


def test_scenario_8_large_block_is_subblocked_and_accumulates_every_k_step() -> None:
    source = compute_source(SCENARIOS[8])
    assert "for (uint32_t sb_ = 0; sb_ < 4; ++sb_)" in source
    assert l1_acc_flags(SCENARIOS[8]) == [0, 1, 0]
