"""The spec edits a user makes to extend ttlgen, and the experiment that shows the test
suite needs no hand edit after them (issue 24).

The edits, applied to a spec tree:
  op            a new SFPU unary, tile_softplus: its math (unless the math spec states
                it), its tt-metal function's declaration at each API level and emulator
                binding, its spelling, and a new kernel using it;
  binary        a new SFPU binary, tile_pow (x to the power y), the same facts: its math
                is the math spec's pow, its functions power_binary_tile(_init);
  architecture  a new architecture and its target (a copy of Blackhole's under a new name);
  kernel        new kernels of existing ops, one of them f32 on the SFPU by policy, in the
                file of the shipped elementwise kernels.

``python -m tests.user_edits DIR [--edits op,binary,architecture,kernel]`` copies the
repository's tracked files to DIR, applies the edits to DIR/specs, then runs there what the
guide (CONTRIBUTING.md) tells a user to run: ``ttlgen build``, the snapshot update
``pytest -p no:cacheprovider --snapshot-update`` and the suite
``pytest -p no:cacheprovider -n auto``. It exits with the suite's code: 0 when no test
needed a hand edit. tests/test_user_edits.py checks that the edits still apply and give
valid specs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tests.spec_patch import Edit, append, apply_edits, replace

if TYPE_CHECKING:
    pass

REPO = Path(__file__).resolve().parent.parent
EDIT_NAMES = ("op", "binary", "architecture", "kernel")

USER_UNARY_KERNEL = """
  softplus_bf16_user{suffix}:
    summary: out = softplus(x) over bf16 tiles, a user's new op.
    target: blackhole
    dfbs:
      x: {{index: 0, dtype: bf16, block: [1, 1], input: {{shape: [1, 2]}}}}
      out: {{index: 16, dtype: bf16, block: [1, 1], output: {{shape: [1, 2]}}}}
    body:
      - loop:
          var: i
          count: 2
          body:
            - wait: x
            - reserve: out
            - store: {{to: out, value: {{op: {op}, args: [x]}}}}
            - pop: x
            - push: out
    tolerance: {{pcc: 0.999, max_rel: 2.0e-2, derivation: "bf16: one SFPU result truncated to a 16-bit DST plus the bf16 pack"}}
"""

NEW_KERNELS = """
  eltwise_max_bf16_user{suffix}:
    summary: out = max(a, b) over bf16 tiles (SFPU binary max), a user's new kernel.
    target: wormhole_b0
    dfbs:
      a: {index: 0, dtype: bf16, block: [1, 1], input: {shape: [1, 2]}}
      b: {index: 1, dtype: bf16, block: [1, 1], input: {shape: [1, 2]}}
      out: {index: 16, dtype: bf16, block: [1, 1], output: {shape: [1, 2]}}
    body:
      - loop:
          var: i
          count: 2
          body:
            - wait: [a, b]
            - reserve: out
            - store: {to: out, value: {op: tile_max, args: [a, b]}}
            - pop: [a, b]
            - push: out
    tolerance: {pcc: 0.999, max_rel: 1.0e-2, derivation: "bf16: one bf16 result rounding plus the 16-bit DST rounding, 2 * 2^-8"}

  eltwise_mul_f32_user{suffix}:
    summary: out = a * b over f32 tiles with the FPU disabled by policy, a user's new kernel.
    target: blackhole
    policy:
      options: {enable-fpu-binary-ops: false}
    dfbs:
      a: {index: 0, dtype: f32, block: [1, 1], input: {shape: [1, 2]}}
      b: {index: 1, dtype: f32, block: [1, 1], input: {shape: [1, 2]}}
      out: {index: 16, dtype: f32, block: [1, 1], output: {shape: [1, 2]}}
    body:
      - loop:
          var: i
          count: 2
          body:
            - wait: [a, b]
            - reserve: out
            - store: {to: out, value: {op: tile_mul, args: [a, b]}}
            - pop: [a, b]
            - push: out
    tolerance: {pcc: 0.999999, max_rel: 1.0e-6, derivation: "f32 SFPU with unpack-to-DST: one fp32 rounding, 16x margin"}
"""


# The SFPU unary family's list of names, after the comment that says how to extend it.
SFPU_UNARY_NAMES = "# A new SFPU unary is one more name in this list.\n    names: ["
SFPU_BINARY_NAMES = "# A new SFPU binary is one more name in this list.\n    names: ["


def first_sfpu_unary(op: str) -> Edit:
    """``op`` put first in the SFPU unary family's list, so the edit holds whatever ops follow."""
    return replace("ops/elementwise.yaml", SFPU_UNARY_NAMES, f"{SFPU_UNARY_NAMES}{op}, ")


# A unary whose math the language states but which no op of the shipped specs uses:
# softplus_tile, as ttnn 0.81.1 and 0.69.0 declare it (eltwise_unary/softplus.h), what
# `ttlgen upstream import --add` writes. Its beta, 1/beta and threshold are float bits
# (1.0f, 1.0f, 20.0f): the math spec's softplus.
SOFTPLUS_MATH = '  softplus: {unary: "where(x > 20, x, log1p(exp(x)))"}\n'
SOFTPLUS_DECLARATIONS = {
    "current": "template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal, uint32_t threshold)",
    "legacy": "void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal, uint32_t threshold)",
}
SOFTPLUS_BINDINGS = """
  softplus_tile_init: api::no_op()
  softplus_tile: {computes: softplus, call: "compute::sfpu_unary(function, idst)"}
"""


def op_edits(specs: Path, suffix: str = "") -> list[Edit]:
    """tile_softplus{suffix}: its math (unless the math spec states it), its API functions at
    each level, their emulator bindings, its name first in the SFPU unary family, its
    spelling and a kernel using it: spec edits only."""
    name = f"tile_softplus{suffix}"
    edits: list[Edit] = []
    if "\n  softplus:" not in (specs / "ops" / "math.yaml").read_text(encoding="utf-8"):
        edits.append(append("ops/math.yaml", SOFTPLUS_MATH))
    for level, declaration in SOFTPLUS_DECLARATIONS.items():
        if "softplus_tile(" in (specs / "tt_metal" / f"{level}.yaml").read_text(encoding="utf-8"):
            continue  # the level declares it already
        header = (
            "  api/compute/eltwise_unary/softplus.h:\n    kernel: compute\n    namespace: ckernel\n    functions:\n"
            f"      - signature: void softplus_tile_init()\n        configures: [sfpu]\n      - {declaration}\n\n"
        )
        edits.append(replace(f"tt_metal/{level}.yaml", "\nheaders:\n", f"\nheaders:\n{header}"))
    if "\n  softplus_tile:" not in (specs / "tt_metal" / "emulation.yaml").read_text(encoding="utf-8"):
        edits.append(append("tt_metal/emulation.yaml", SOFTPLUS_BINDINGS))
    call = "softplus_tile({dst}, 1065353216, 1065353216, 1101004800)"
    return [
        *edits,
        first_sfpu_unary(name),
        replace("ops/tt_metal_spelling.yaml", "\nops:\n", f'\nops:\n  {name}:\n    sfpu: {{init: softplus_tile_init(), call: "{call}"}}\n'),
        append("kernels/unary.yaml", USER_UNARY_KERNEL.format(op=name, suffix=suffix)),
    ]


# A binary whose math the language states (pow) and which no op of the shipped specs uses:
# power_binary_tile, as ttnn 0.81.1 and 0.69.0 declare it (api/compute/eltwise_binary_sfpu.h),
# declared before add_binary_tile in that header's list at each level.
POW_MATH = '  pow: {binary: "pow(x, y)"}\n'
POW_ANCHORS = {
    "current": "      - template <DstRoundingMode dst_rounding_mode = DstRoundingMode::Default, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> void add_binary_tile(",
    "legacy": "      - void add_binary_tile(",
}
POW_DECLARATIONS = {
    "current": "template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> void power_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)",
    "legacy": "void power_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)",
}
POW_BINDINGS = """
  power_binary_tile_init: api::no_op()
  power_binary_tile: {computes: pow, call: "compute::sfpu_binary(function, idst0, idst1, odst)"}
"""
USER_BINARY_KERNEL = """
  pow_bf16_user{suffix}:
    summary: out = a to the power b over bf16 tiles, a in [0.5, 2), b in [-2, 2), a user's new binary op.
    target: wormhole_b0
    dfbs:
      a: {{index: 0, dtype: bf16, block: [1, 1], input: {{shape: [1, 2], distribution: {{uniform: [0.5, 2]}}}}}}
      b: {{index: 1, dtype: bf16, block: [1, 1], input: {{shape: [1, 2], distribution: {{uniform: [-2, 2]}}}}}}
      out: {{index: 16, dtype: bf16, block: [1, 1], output: {{shape: [1, 2]}}}}
    body:
      - loop:
          var: i
          count: 2
          body:
            - wait: [a, b]
            - reserve: out
            - store: {{to: out, value: {{op: {op}, args: [a, b]}}}}
            - pop: [a, b]
            - push: out
    tolerance: {{pcc: 0.999, max_rel: 2.0e-2, derivation: "bf16: one SFPU result truncated to a 16-bit DST plus the bf16 pack"}}
"""


def binary_edits(specs: Path, suffix: str = "") -> list[Edit]:
    """tile_pow{suffix}: its math (unless the math spec states it), its API functions at each
    level, their emulator bindings, its name first in the SFPU binary family, its spelling and
    a kernel using it: spec edits only."""
    name = f"tile_pow{suffix}"
    edits: list[Edit] = []
    if "\n  pow:" not in (specs / "ops" / "math.yaml").read_text(encoding="utf-8"):
        edits.append(append("ops/math.yaml", POW_MATH))
    for level, anchor in POW_ANCHORS.items():
        if "power_binary_tile(" not in (specs / "tt_metal" / f"{level}.yaml").read_text(encoding="utf-8"):
            declarations = f"      - signature: void power_binary_tile_init()\n        configures: [sfpu]\n      - {POW_DECLARATIONS[level]}\n"
            edits.append(replace(f"tt_metal/{level}.yaml", anchor, declarations + anchor))
    if "\n  power_binary_tile:" not in (specs / "tt_metal" / "emulation.yaml").read_text(encoding="utf-8"):
        edits.append(append("tt_metal/emulation.yaml", POW_BINDINGS))
    return [
        *edits,
        replace("ops/elementwise.yaml", SFPU_BINARY_NAMES, f"{SFPU_BINARY_NAMES}{name}, "),
        replace(
            "ops/tt_metal_spelling.yaml", "\nops:\n",
            f'\nops:\n  {name}:\n    sfpu: {{init: power_binary_tile_init(), call: "power_binary_tile({{lhs.dst}}, {{rhs.dst}}, {{dst}})"}}\n',
        ),
        append("kernels/elementwise.yaml", USER_BINARY_KERNEL.format(op=name, suffix=suffix)),
    ]


def architecture_edits(specs: Path, name: str = "blackhole_next") -> list[Edit]:
    """Architecture ``name`` and its default target: Blackhole's two files under the new name."""
    architecture = (specs / "targets" / "architectures" / "blackhole.yaml").read_text(encoding="utf-8")
    target = (specs / "targets" / "blackhole.yaml").read_text(encoding="utf-8")
    renames = {
        "name: blackhole\n": f"name: {name}\n",
        "runtime_name: BLACKHOLE\n": f"runtime_name: {name.upper()}\n",
        "default_target: blackhole\n": f"default_target: {name}\n",
        "architecture: blackhole\n": f"architecture: {name}\n",
    }
    for old, new in renames.items():
        architecture, target = architecture.replace(old, new), target.replace(old, new)
    assert f"name: {name}\n" in architecture and f"architecture: {name}\n" in target, "Blackhole's specs changed shape"
    return [
        append(f"targets/architectures/{name}.yaml", architecture),
        append(f"targets/{name}.yaml", target),
    ]


def kernel_edits(suffix: str = "") -> list[Edit]:
    return [append("kernels/elementwise.yaml", NEW_KERNELS.replace("{suffix}", suffix))]


def apply_user_edits(specs: Path, edits: tuple[str, ...] = EDIT_NAMES, suffix: str = "") -> None:
    """Apply the named edits to the spec tree at ``specs`` (new files are created empty
    first); ``suffix`` ends the name of each new kernel and architecture."""
    chosen: list[Edit] = []
    if "op" in edits:
        chosen += op_edits(specs, suffix)
    if "binary" in edits:
        chosen += binary_edits(specs, suffix)
    if "architecture" in edits:
        chosen += architecture_edits(specs, f"blackhole_next{suffix}")
    if "kernel" in edits:
        chosen += kernel_edits(suffix)
    for edit in chosen:
        (specs / edit.file).touch()
    apply_edits(specs, chosen, case="user edit")


def _run(directory: Path, *command: str) -> int:
    print("$", " ".join(command), flush=True)
    return subprocess.run(command, cwd=directory, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path, help="where to copy the repository (must not exist)")
    parser.add_argument("--edits", default=",".join(EDIT_NAMES), help=f"comma-separated: {', '.join(EDIT_NAMES)}")
    args = parser.parse_args(argv)
    edits = tuple(e for e in args.edits.split(",") if e)
    assert set(edits) <= set(EDIT_NAMES), f"unknown edits: {set(edits) - set(EDIT_NAMES)}"
    target: Path = args.directory.resolve()
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.decode()
    for relative in filter(None, tracked.split("\0")):
        source = REPO / relative
        if source.is_file():
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / relative)
    apply_user_edits(target / "specs", edits)
    # The copy's ttlgen and tests come first, whichever ttlgen the environment installed.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH")]))
    python = sys.executable
    if _run(target, python, "-m", "ttlgen", "build") != 0:
        return 2
    _run(target, python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--snapshot-update")
    return _run(target, python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "auto", "-rf")


if __name__ == "__main__":
    sys.exit(main())
