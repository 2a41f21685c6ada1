"""`ttlgen resolve KERNEL.yaml [--target ARCH] [--json]`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import REPO, SPECS, run_cli

KERNELS = REPO / "tests" / "fixtures" / "kernels"


def resolve(*args: str | Path) -> tuple[int, str, str]:
    result = run_cli("resolve", *args, "--specs", SPECS)
    return result.exit_code, result.stdout, result.stderr


def test_json_plan_for_joint_resolution_example() -> None:
    code, out, _ = resolve(KERNELS / "joint_resolution.yaml", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["status"] == "ok" and payload["target"] == "blackhole"
    assert payload["plan"] == {
        "strategies": {"sum": "sfpu"},
        "fp32_dest_acc_en": True,
        "dst_full_sync_en": False,
        "unpack_to_dest_fp32": [0, 1],
    }
    assert payload["warnings"] == []
    modes = payload["descriptor"]["unpack_to_dest_mode"]
    assert len(modes) == 64 and modes[:3] == ["UnpackToDestFp32", "UnpackToDestFp32", "Default"]
    assert payload["descriptor"]["math_fidelity"] == "HiFi4"


def test_target_option_overrides_kernel_target() -> None:
    code, out, _ = resolve(KERNELS / "joint_resolution.yaml", "--json", "--target", "wormhole_b0")
    assert code == 0 and json.loads(out)["target"] == "wormhole_b0"


def test_math_fidelity_is_forwarded_to_descriptor() -> None:
    code, out, _ = resolve(KERNELS / "bf16_add.yaml", "--json")
    payload = json.loads(out)
    assert code == 0
    assert payload["plan"]["strategies"] == {"sum": "fpu"}
    assert payload["descriptor"]["math_fidelity"] == "HiFi2"
    assert payload["descriptor"]["unpack_to_dest_mode"] == []


def test_warnings_are_listed_with_their_op() -> None:
    code, out, _ = resolve(KERNELS / "reduce_row_blackhole.yaml", "--json")
    payload = json.loads(out)
    assert code == 0 and [w["op"] for w in payload["warnings"]] == ["r"]


def test_rejected_kernel_exits_1_with_located_op_operand_and_notes() -> None:
    code, out, _ = resolve(KERNELS / "bcast_conflict.yaml", "--json")
    assert code == 1
    file = str(KERNELS / "bcast_conflict.yaml")
    assert json.loads(out) == {
        "status": "error",
        "errors": [{
            "file": file,
            "line": 13,
            "column": 9,
            "path": "ops[1].operands[0]",
            "message": "requires 32-bit destination elements, but no kernel-wide destination width supports all tile operations",
            "notes": [{
                "file": file,
                "line": 5,
                "column": 5,
                "path": "ops[0]",
                "message": "the target does not support 32-bit destination elements for tile_bcast with 'bf16' elements",
                "notes": [],
                "consequences": 0,
                "op": "b",
                "operand": None,
            }],
            "consequences": 0,
            "op": "e",
            "operand": 0,
        }],
    }


def test_bad_policy_value_exits_2_at_function_level() -> None:
    code, out, _ = resolve(KERNELS / "bad_policy.yaml", "--json")
    assert code == 2, "a malformed option is bad input, not a rejected kernel"
    error = json.loads(out)["errors"][0]
    assert (error["op"], error["line"], error["path"]) == (None, None, None)
    assert error["file"].endswith("bad_policy.yaml")
    assert error["message"] == "invalid fp32-dest-acc-en value 'sometimes'; expected auto, enabled, or disabled"


def test_text_diagnostics_read_like_a_compiler_at_the_line_of_their_op() -> None:
    code, out, err = resolve(KERNELS / "bcast_conflict.yaml")
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert lines[0].endswith("bcast_conflict.yaml:13:9: op 'e' operand 0: error: requires 32-bit destination elements, but no kernel-wide destination width supports all tile operations")
    assert lines[1].startswith("  ") and "bcast_conflict.yaml:5:5: op 'b': note: the target does not support" in lines[1]


def test_text_plan_lists_strategies_and_configuration() -> None:
    code, out, _ = resolve(KERNELS / "joint_resolution.yaml")
    assert code == 0
    assert "op 'sum': ttl.tile_execution_strategy = sfpu" in out
    assert "fp32_dest_acc_en = true" in out
    assert "ttl.unpack_to_dest_fp32 = [0, 1]" in out


def test_file_that_is_not_a_kernel_exits_2_with_located_errors() -> None:
    code, _, err = resolve(KERNELS / "not_a_kernel.yaml")
    assert code == 2
    assert "Traceback" not in err
    assert "not_a_kernel.yaml:7:5: ops[0].colour: unknown key 'colour'" in err
    assert "not_a_kernel.yaml:6:24: ops[0].operands[0].tile: expected a list, got 3" in err


def test_missing_kernel_file_exits_2(tmp_path: Path) -> None:
    code, _, err = resolve(tmp_path / "absent.yaml")
    assert code == 2 and "cannot read" in err


def test_unknown_target_is_bad_input_with_suggestions() -> None:
    code, out, _ = resolve(KERNELS / "bf16_add.yaml", "--json", "--target", "blackhol")
    assert code == 2
    (error,) = json.loads(out)["errors"]
    assert "'blackhol'" in error["message"] and "did you mean 'blackhole'" in error["message"]


def test_resolve_uses_the_current_specs(spec_copy: Path) -> None:
    # Dropping the broadcast restriction is a spec edit; resolve sees it immediately.
    relations = spec_copy / "targets" / "gen1_llk.yaml"
    text = relations.read_text()
    edited = text.replace("      - when: {primitive: [BroadcastColumn, BroadcastRow, BroadcastScalar], element_bits: [16]}\n        allow: [16]\n", "")
    assert edited != text
    relations.write_text(edited)
    before = run_cli("resolve", KERNELS / "bcast_conflict.yaml", "--specs", SPECS)
    after = run_cli("resolve", KERNELS / "bcast_conflict.yaml", "--specs", spec_copy)
    assert (before.exit_code, after.exit_code) == (1, 0)
