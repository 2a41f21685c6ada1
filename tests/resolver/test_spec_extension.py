"""Adding an op or an architecture is a spec edit: no Python changes, then `ttlgen build`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_cli
from tests.cpp_tables.support import (
    canonical,
    cpp_adapter_answers,
    cpp_table_answers,
    differences,
    library_adapter_answers,
    library_table_answers,
)
from tests.spec_patch import apply_edits
from tests.user_edits import first_sfpu_unary

# A new architecture is its facts (one ttlgen.architecture file) plus a target composing it
# with a runtime API and the relations it answers from (one ttlgen.target file).
NEW_ARCHITECTURE = """\
spec: ttlgen.architecture/v1
name: nebula
summary: A made-up architecture.
runtime_name: NEBULA
default_target: nebula
dfb_capacity: 128
full_fp32:
  matmul: {supported: true}
  reduce_row: {supported: true}
  reduce_column: {supported: true}
  reduce_scalar: {supported: false, warning: nebula has no full-fp32 scalar reduction}
"""

NEW_TARGET = """\
spec: ttlgen.target/v1
name: nebula
summary: Nebula launched through ComputeConfigDescriptor, declaring its own relations.
architecture: nebula
runtime_api: ComputeConfigDescriptor
relations:
  dfb_unpack:
    rules:
      - when: {element: [f32], route: [dst]}
        allow: {dest_width: [32], unpack: [unpack_to_dest]}
      - allow: {dest_width: [16, 32], unpack: [default]}
  dest_width:
    rules:
      - when: {element_bits: [32]}
        allow: [32]
      - allow: [16, 32]
"""

# Runs in a fresh interpreter without site-packages: the package needs only the stdlib.
PROBE = """\
import json, sys
sys.path.insert(0, sys.argv[1])
import ttl_kernel_config as kc
assert "ttlgen" not in sys.modules and "yaml" not in sys.modules
E = kc.ElementType
def run(target, dfbs, ops, **kw):
    kernel = kc.KernelDescription({i: E(t) for i, t in dfbs.items()}, tuple(
        kc.TileOp(i, name, tuple(kc.DfbOperand(d) for d in operands), attrs=attrs) for i, name, operands, attrs in ops))
    result = kc.resolve_kernel(kernel, target=target, **kw)
    if isinstance(result, kc.ResolveFailure):
        return {"error": [e.message for e in result.errors]}
    return {"plan": result.to_json(), "warnings": [w.message for w in result.warnings]}
out = {
    "unary_sfpu_consumer": run("nebula", {0: "f32", 1: "f32"}, [("s", "tile_add", [0, 1], {}), ("g", "tile_no_such_op", [0], {})]),
    "unary_blackhole": run("blackhole", {0: "bf16"}, [("g", "tile_no_such_op", [0], {})]),
    "capacity": run("nebula", {100: "bf16"}, [("c", "copy_tile", [100], {})]),
    "capacity_blackhole": run("blackhole", {100: "bf16"}, [("c", "copy_tile", [100], {})]),
    "bcast_f32_dest": run("nebula", {0: "bf16", 1: "f32"}, [("b", "tile_bcast", [0], {"bcast": "col"}), ("c", "copy_tile", [1], {})]),
    "scalar_reduce": run("nebula", {0: "bf16", 1: "bf16"}, [("r", "tile_reduce", [0, 1], {"reduce_dim": "scalar"})]),
    "device_only": run(None, {0: "bf16"}, [("c", "copy_tile", [0], {})], device_arch="NEBULA"),
    "runtime_name": kc.architecture_from_runtime_name("nebula").value,
    "targets": list(kc.target_names()),
}
print(json.dumps(out))
"""


def _runtime_holds_nebula(spec_copy: Path) -> None:
    """Nebula's 128 buffer indices need a runtime with as many circular buffers: validation
    refuses an architecture whose indices its runtime cannot hold."""
    apis = spec_copy / "targets" / "runtime_apis.yaml"
    text = apis.read_text()
    for old in ("current: {num_circular_buffers: 64, kernel_api: current}",):
        text = text.replace(old, "current: {num_circular_buffers: 128, kernel_api: current}")
    apis.write_text(text)


def test_new_sfpu_unary_and_new_architecture_by_spec_edit(spec_copy: Path, tmp_path: Path) -> None:
    # An op no kernel uses needs no spelling: the resolver tables are all it reaches.
    apply_edits(spec_copy, [first_sfpu_unary("tile_no_such_op")], case="a new SFPU unary")
    (spec_copy / "targets" / "architectures" / "nebula.yaml").write_text(NEW_ARCHITECTURE)
    (spec_copy / "targets" / "nebula.yaml").write_text(NEW_TARGET)
    _runtime_holds_nebula(spec_copy)
    out = tmp_path / "generated"
    build = run_cli("build", "--specs", spec_copy, "--out", out)
    assert build.exit_code == 0, build.stderr
    probe = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", PROBE, str(out / "python")],
        capture_output=True, text=True, check=False,
    )
    assert probe.returncode == 0, probe.stderr
    result = json.loads(probe.stdout)
    # The new unary is a fixed SFPU consumer: it forces unpack-to-DST and SFPU for the add.
    assert result["unary_sfpu_consumer"]["plan"] == {
        "strategies": {"s": "sfpu"}, "fp32_dest_acc_en": True, "dst_full_sync_en": False, "unpack_to_dest_fp32": [0, 1],
    }
    assert result["unary_blackhole"]["plan"]["fp32_dest_acc_en"] is False
    # The new architecture answers from its own tables, inheriting nothing.
    assert "plan" in result["capacity"]
    assert result["capacity_blackhole"]["error"] == ["uses dataflow buffer index 100 outside the supported range [0, 63]"]
    assert result["bcast_f32_dest"]["plan"]["fp32_dest_acc_en"] is True
    assert result["scalar_reduce"]["warnings"] == ["nebula has no full-fp32 scalar reduction"]
    assert result["device_only"]["plan"]["fp32_dest_acc_en"] is False
    assert result["runtime_name"] == "nebula"
    assert "nebula" in result["targets"]



def test_new_architecture_by_spec_edit_gets_its_cpp_table_and_class(spec_copy: Path, tmp_path: Path) -> None:
    (spec_copy / "targets" / "architectures" / "nebula.yaml").write_text(NEW_ARCHITECTURE)
    (spec_copy / "targets" / "nebula.yaml").write_text(NEW_TARGET)
    _runtime_holds_nebula(spec_copy)
    out = tmp_path / "generated"
    build = run_cli("build", "--specs", spec_copy, "--out", out)
    assert build.exit_code == 0, build.stderr
    header = (out / "include" / "ttl_kernel_config" / "kernel_target_tables.hpp").read_text()
    adapter = (out / "include" / "ttl_kernel_config" / "KernelTargetEnvironments.gen.inc").read_text()
    # Its own rules become its own tables, and its record names them.
    assert "constexpr WidthRule kNebulaDestWidthRules[] = {" in header
    assert "constexpr UnpackRule kNebulaDfbUnpackRules[] = {" in header
    assert "constexpr TargetRecord kTargetNebula{" in header
    assert "    Architecture::Nebula,\n" in header
    # One more class, which the architecture switch selects.
    assert "class NebulaKernelTargetEnvironment final : public KernelTargetEnvironment {" in adapter
    assert "static constexpr const tables::WidthTable& kDestWidth = tables::kNebulaDestWidth;" in adapter
    assert "    case tables::Architecture::Nebula:\n        return environment<NebulaKernelTargetEnvironment>();" in adapter
    # And both answer every query as the Python resolver does.
    cpp = cpp_table_answers(out, tmp_path)
    python = library_table_answers(spec_copy)
    assert canonical(cpp) == canonical(python), differences(cpp, python)
    assert {"query": "default_target", "architecture": "nebula", "target": "nebula", "dfb_capacity": 128} in cpp
    driven = cpp_adapter_answers(out, spec_copy, tmp_path)
    expected = library_adapter_answers(spec_copy)
    assert canonical(driven) == canonical(expected), differences(driven, expected)
    assert any(r["env"] == "architecture:nebula" and r["query"] == "full_fp32" and r["kind"] == "reduce_scalar"
               and r["warning"] == "nebula has no full-fp32 scalar reduction" for r in driven)
