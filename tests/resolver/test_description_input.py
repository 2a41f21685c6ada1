"""Kernel descriptions for `ttlgen resolve` are validated like specs (their own JSON Schema,
located errors), and resolve also takes a kernel of the specs by name or a kernel spec file."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from tests.conftest import (
    LARGE_INPUT_CPU_S,
    SPECS,
    CliResult,
    cpu_seconds_of_cli,
    real_project,
    run_cli,
)
from ttlgen.spec.limits import ENTRIES_LIMIT, FILE_BYTES_LIMIT, NESTING_LIMIT

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


def write(directory: Path, name: str, text: str) -> Path:
    (directory / name).write_text(text, encoding="utf-8")
    return Path(name)  # relative: the tests run in tmp_path, and messages name it so


def resolve_text(tmp_path: Path, text: str, *args: str) -> tuple[int, str, str]:
    result = run_cli("resolve", write(tmp_path, "kernel.yaml", text), "--specs", SPECS, *args)
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
    declared = {k.name for k in real_project().kernels.kernels if k.source == "specs/kernels/unary.yaml"}
    assert len(declared) >= 2, "a file of one kernel would not show that each is resolved"
    assert set(json.loads(result.stdout)["kernels"]) == declared


def test_a_description_over_the_size_limit_is_refused_where_the_limit_falls_before_parsing(tmp_path: Path) -> None:
    op = "  - {id: o, op: tile_add, operands: [{dfb: 0}, {dfb: 1}]}\n"
    head = "dfbs: {0: bf16, 1: bf16}\nops:\n"
    (tmp_path / "kernel.yaml").write_text(head + op * 100_000, encoding="utf-8")
    result, cpu = cpu_seconds_of_cli("resolve", "kernel.yaml", "--specs", SPECS)
    beyond = FILE_BYTES_LIMIT - len(head)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"kernel.yaml:{3 + beyond // len(op)}:{beyond % len(op) + 1}: the file is larger than 1 MiB")
    assert cpu < LARGE_INPUT_CPU_S, f"{cpu:.2f} s of CPU"


def test_a_description_with_a_100000_item_list_is_refused_at_the_list_in_under_2_s_of_cpu(tmp_path: Path) -> None:
    items = ", ".join(["0"] * 100_000)
    text = BF16_ADD.format(dfbs="0: bf16, 1: bf16", tile="[0, 0]") + f"attributes: {{ttl.unpack_to_dest_fp32: [{items}]}}\n"
    result, cpu = cpu_seconds_of_cli("resolve", write(tmp_path, "kernel.yaml", text), "--specs", SPECS)
    assert result.exit_code == 2
    assert f"kernel.yaml:10:14: attributes['ttl.unpack_to_dest_fp32']: more than {ENTRIES_LIMIT} entries in one list" in result.stderr
    assert cpu < LARGE_INPUT_CPU_S, f"{cpu:.2f} s of CPU"


def test_a_description_nested_past_the_limit_is_refused_like_a_spec(tmp_path: Path) -> None:
    text = BF16_ADD.format(dfbs="0: bf16, 1: bf16", tile="[0, 0]") + "options: {x: " + "[" * 200 + "]" * 200 + "}\n"
    code, _, err = resolve_text(tmp_path, text)
    assert code == 2 and f"nest more than {NESTING_LIMIT} levels deep" in err


def test_a_description_whose_comment_names_the_kernel_spec_kind_is_still_a_description(tmp_path: Path) -> None:
    text = "# resolved like a ttlgen.kernel/v1 kernel\n" + BF16_ADD.format(dfbs="0: bf16, 1: bf16", tile="[0, 0]")
    code, out, err = resolve_text(tmp_path, text)
    assert (code, err) == (0, "")
    assert "kernel configuration for target 'wormhole_b0'" in out


TOML_BF16_ADD = """\
target = "wormhole_b0"
dfbs = {0 = "bf16", 1 = "bf16"}

[[ops]]
id = "sum"
op = "tile_add"
operands = [{dfb = 0}, {dfb = 1}]
result = "{result}"
"""


def test_a_toml_description_resolves_as_its_yaml_twin_does(tmp_path: Path) -> None:
    toml = run_cli("resolve", write(tmp_path, "k.toml", TOML_BF16_ADD.replace("{result}", "bf16")), "--specs", SPECS, "--json")
    yaml = run_cli("resolve", write(tmp_path, "k.yaml", BF16_ADD.format(dfbs="0: bf16, 1: bf16", tile="[0, 0]")), "--specs", SPECS, "--json")
    assert toml.exit_code == 0, toml.stderr
    assert json.loads(toml.stdout) == json.loads(yaml.stdout)


def test_an_error_in_a_toml_description_is_located_in_the_toml(tmp_path: Path) -> None:
    result = run_cli("resolve", write(tmp_path, "k.toml", TOML_BF16_ADD.replace("{result}", "bf61")), "--specs", SPECS)
    assert result.exit_code == 2
    assert result.stderr.startswith("k.toml:8:10: ops[0].result: unknown element type 'bf61' (did you mean 'bf16'?)")


def test_a_spec_of_another_kind_is_refused_by_its_kind() -> None:
    result = run_cli("resolve", SPECS / "ops" / "elementwise.yaml", "--specs", SPECS)
    assert result.exit_code == 2
    assert "elementwise.yaml is a ttlgen.ops/v1 spec, not a kernel spec or kernel description" in result.stderr
    assert result.stderr.count("\n") == 1


def test_dev_null_is_refused_as_a_character_device_not_a_missing_file() -> None:
    result = run_cli("resolve", "/dev/null", "--specs", SPECS)
    assert result.exit_code == 2
    assert result.stderr == (
        "ttlgen: /dev/null is a character device, not a regular file: "
        "give a kernel description, a kernel spec file or a kernel name\n"
    )


def test_a_fifo_is_refused_without_being_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    # Opening a FIFO blocks until a writer comes: a run that opens it never ends.
    outcome: list[CliResult] = []
    worker = threading.Thread(target=lambda: outcome.append(run_cli("resolve", "pipe.yaml", "--specs", SPECS)), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert outcome, "resolve blocked on the FIFO"
    assert outcome[0].exit_code == 2 and "pipe.yaml is a FIFO, not a regular file" in outcome[0].stderr


def test_an_unknown_op_is_located_at_its_name_with_the_closest_ops(tmp_path: Path) -> None:
    code, _, err = resolve_text(tmp_path, BF16_ADD.format(dfbs="0: bf16, 1: bf16", tile="[0, 0]").replace("tile_add", "tile_ad"))
    assert code == 2
    assert err == "kernel.yaml:5:9: ops[0].op: unknown op 'tile_ad': no ttlgen.ops spec declares it (did you mean 'tile_add'?)\n"


@pytest.mark.parametrize("where", ["--target", "description"])
def test_an_unknown_target_suggests_the_closest_once(tmp_path: Path, where: str) -> None:
    text = BF16_ADD.format(dfbs="0: bf16, 1: bf16", tile="[0, 0]")
    if where == "description":
        code, _, err = resolve_text(tmp_path, text.replace("target: wormhole_b0", "target: wormhole_b"))
    else:
        code, _, err = resolve_text(tmp_path, text, "--target", "wormhole_b")
    assert code == 2
    assert err.count("did you mean") == 1 and "(did you mean 'wormhole_b0'?)" in err


def _device_description() -> tuple[str, str]:
    """A description that names its device's architecture (and no target), with the
    target that architecture defaults to."""
    target = next(t for t in real_project().targets.targets if t.default_for_architecture and t.rejected is None)
    text = BF16_ADD.format(dfbs="0: bf16, 1: bf16", tile="[0, 0]").replace("target: wormhole_b0", f"device_arch: {target.architecture}")
    return text, target.name


def test_an_unknown_target_option_is_refused_by_the_option_not_at_a_place_in_the_description(tmp_path: Path) -> None:
    text, _ = _device_description()
    code, out, err = resolve_text(tmp_path, text, "--target", "tile_no_such_target")
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith("ttlgen: --target: ") and "'tile_no_such_target'" in line and "known targets: " in line
    assert "kernel.yaml" not in line


def test_an_unknown_target_option_is_a_json_record_without_a_location(tmp_path: Path) -> None:
    text, _ = _device_description()
    code, out, _ = resolve_text(tmp_path, text, "--target", "tile_no_such_target", "--json")
    assert code == 2
    (error,) = json.loads(out)["errors"]
    assert (error["file"], error["line"], error["path"]) == (None, None, None)
    assert error["message"].startswith("--target: ") and "'tile_no_such_target'" in error["message"]


def test_an_unknown_device_arch_is_located_at_it_without_blaming_a_good_target_option(tmp_path: Path) -> None:
    text, target = _device_description()
    text = text.replace("device_arch: ", "device_arch: tile_no_such_arch  # ")
    code, _, err = resolve_text(tmp_path, text, "--target", target)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith("kernel.yaml:1:14: device_arch: ") and "tile_no_such_arch" in line
    assert "--target" not in line


def test_a_misspelt_device_arch_suggests_the_architecture_and_lists_the_valid_names(tmp_path: Path) -> None:
    text, target = _device_description()
    architecture = next(t.architecture for t in real_project().targets.targets if t.name == target)
    assert architecture is not None
    text = text.replace(f"device_arch: {architecture}", f"device_arch: {architecture}x")
    code, _, err = resolve_text(tmp_path, text)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith("kernel.yaml:1:14: device_arch: ") and f"(did you mean {architecture!r}?)" in line
    known = line.split("known architectures: ", 1)[1]
    assert all(name in known for name, _ in real_project().targets.architectures)


def test_an_unknown_target_of_a_kernel_of_the_specs_suggests_the_closest_once() -> None:
    result = run_cli("resolve", "eltwise_add_bf16", "--target", "wormhole_b", "--specs", SPECS)
    assert result.exit_code == 2
    assert result.stderr.count("did you mean") == 1 and "(did you mean 'wormhole_b0'?)" in result.stderr


def test_errors_of_a_description_are_ordered_by_line(tmp_path: Path) -> None:
    text = BF16_ADD.format(dfbs="0: bf16, 1: bf16", tile="[0, 0]").replace("target: wormhole_b0", "target: 5")
    code, _, err = resolve_text(tmp_path, text + "colour: blue\n")
    assert code == 2
    assert [line.split(":")[1] for line in err.splitlines()] == ["1", "10"]
