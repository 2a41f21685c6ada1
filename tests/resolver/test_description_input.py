"""Kernel descriptions for `ttlgen resolve` are validated like specs (their own JSON Schema,
located errors), and resolve also takes a kernel of the specs by name or a kernel spec file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SPECS, run_cli

BF16_ADD = """\
target: wormhole_b0
dfbs: {{{dfbs}}}
ops:
  - id: sum
    op: tile_add
    operands:
      - {{dfb: 0, tile: {tile}}}
      - {{dfb: 1}}
    result: bf16
"""


def resolve_text(tmp_path: Path, text: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "kernel.yaml"
    path.write_text(text, encoding="utf-8")
    result = run_cli("resolve", path, "--specs", SPECS, *args)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("key", ["\u00b2", "\uff10", "-1", "40960", "01"], ids=["superscript", "fullwidth", "negative", "too-big", "leading-zero"])
def test_a_buffer_index_must_be_an_ascii_decimal_in_range(tmp_path: Path, key: str) -> None:
    code, _, err = resolve_text(tmp_path, BF16_ADD.format(dfbs=f"'{key}': bf16, 1: bf16", tile="[0, 0]"))
    assert code == 2 and "Traceback" not in err
    assert "is not a dataflow buffer index" in err and ":2:" in err


@pytest.mark.parametrize("element", ["[bf16]", "{a: 1}"], ids=["list", "mapping"])
def test_an_element_type_must_be_a_name(tmp_path: Path, element: str) -> None:
    code, _, err = resolve_text(tmp_path, BF16_ADD.format(dfbs=f"0: {element}, 1: bf16", tile="[0, 0]"))
    assert code == 2 and "dfbs['0']: expected a string" in err


@pytest.mark.parametrize("tile", ["[-1, 0]", "[0, 99999999999]"], ids=["negative", "huge"])
def test_tile_coordinates_are_bounded(tmp_path: Path, tile: str) -> None:
    code, _, err = resolve_text(tmp_path, BF16_ADD.format(dfbs="0: bf16, 1: bf16", tile=tile))
    assert code == 2 and "ops[0].operands[0].tile" in err


@pytest.mark.parametrize("target", ["wormhole_b0", "no_target"])
def test_an_unknown_math_fidelity_is_a_located_error_under_every_target(tmp_path: Path, target: str) -> None:
    text = BF16_ADD.format(dfbs="0: bf16, 1: bf16", tile="[0, 0]").replace("target: wormhole_b0", f"target: {target}")
    code, _, err = resolve_text(tmp_path, text + "math_fidelity: HiFi9\n")
    assert code == 2
    assert "kernel.yaml:10:16: math_fidelity: unknown math fidelity 'HiFi9'" in err
    assert "(did you mean 'HiFi2' or 'HiFi3' or 'HiFi4'?)" in err


def test_an_unknown_element_type_suggests_the_closest(tmp_path: Path) -> None:
    code, _, err = resolve_text(tmp_path, BF16_ADD.format(dfbs="0: bf61, 1: bf16", tile="[0, 0]"))
    assert code == 2 and "unknown element type 'bf61' (did you mean 'bf16'?)" in err


def test_an_empty_file_asks_for_a_description_not_a_spec(tmp_path: Path) -> None:
    code, _, err = resolve_text(tmp_path, "")
    assert code == 2
    assert "empty kernel description" in err and "spec:" not in err


def test_a_description_in_the_spec_tree_is_an_error(spec_copy: Path) -> None:
    (spec_copy / "kernels" / "d.yaml").write_text("spec: ttlgen.kernel_description/v1\nops: []\n")
    result = run_cli("validate", "--specs", spec_copy)
    assert result.exit_code == 2 and "a kernel description is the input of `ttlgen resolve`, not a spec" in result.stderr


def test_resolve_takes_a_kernel_of_the_specs_by_name() -> None:
    result = run_cli("resolve", "joint_resolution_f32", "--specs", SPECS, "--json")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["plan"]["unpack_to_dest_fp32"] == [0, 1]


def test_resolve_of_an_unknown_kernel_name_suggests_the_closest() -> None:
    result = run_cli("resolve", "eltwise_add_bf61", "--specs", SPECS)
    assert result.exit_code == 2 and "did you mean 'eltwise_add_bf16'" in result.stderr


def test_resolve_takes_a_kernel_spec_file_and_resolves_each_kernel() -> None:
    result = run_cli("resolve", SPECS / "kernels" / "unary.yaml", "--specs", SPECS, "--json")
    assert result.exit_code == 0
    assert set(json.loads(result.stdout)["kernels"]) == {"unary_chain_bf16", "unary_chain_f32"}
