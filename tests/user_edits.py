"""The spec edits a user makes to extend ttlgen, and the experiment that shows the test
suite needs no hand edit after them (issue 24).

The edits, applied to a spec tree:
  op            a new SFPU unary, tile_log1p: its math (unless the math spec states it),
                its tt-metal function's declaration at each API level and emulator
                binding, its spelling, and a new kernel using it;
  binary        a new SFPU binary, tile_ge (x >= y, 1 or 0), the same facts, its
                functions ge_binary_tile(_init).
The ops are ones tt-metal has and TT-Lang's op set lacks, and not the ones
tests/test_scaffold.py adds (softplus, pow): a user's op must not break that test either.
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

from tests.spec_patch import Edit, append, apply_edits, replace
from tests.user_ops import GE, LOG1P, UserOp

REPO = Path(__file__).resolve().parent.parent
EDIT_NAMES = ("op", "binary", "architecture", "kernel")

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


def first_in_family(names: str, op: str) -> Edit:
    """``op`` put first in the op list that ``names`` starts, so the edit holds whatever ops follow."""
    return replace("ops/elementwise.yaml", names, f"{names}{op}, ")


def first_sfpu_unary(op: str) -> Edit:
    return first_in_family(SFPU_UNARY_NAMES, op)


USER_KERNEL = """
  {base}_bf16_user{suffix}:
    summary: "{op}({args}) over bf16 tiles, a user's new op."
    target: {target}
    dfbs:
{inputs}
      out: {{index: 16, dtype: bf16, block: [1, 1], output: {{shape: [1, 2]}}}}
    body:
      - loop:
          var: i
          count: 2
          body:
            - wait: [{args}]
            - reserve: out
            - store: {{to: out, value: {{op: {op}, args: [{args}]}}}}
            - pop: [{args}]
            - push: out
    tolerance: {{pcc: 0.999, max_rel: 2.0e-2, derivation: "bf16: one SFPU result truncated to a 16-bit DST plus the bf16 pack"}}
"""


def user_op_edits(specs: Path, op: UserOp, suffix: str = "") -> list[Edit]:
    """tile_<base>{suffix}: its math (unless the math spec states it), its API functions at
    each level and their emulator bindings (unless the specs have them), its name first in
    the SFPU family of its kind, its spelling and a kernel using it: spec edits only."""
    name = f"tile_{op.base}{suffix}"
    edits: list[Edit] = []
    if f"\n  {op.base}:" not in (specs / "ops" / "math.yaml").read_text(encoding="utf-8"):
        edits.append(append("ops/math.yaml", op.math_entry()))
    edits += [e for level in op.declarations if (e := op.declaration_edit(specs, level)) is not None]
    if f"\n  {op.function}:" not in (specs / "tt_metal" / "emulation.yaml").read_text(encoding="utf-8"):
        edits.append(append("tt_metal/emulation.yaml", op.bindings()))
    family = SFPU_UNARY_NAMES if op.kind == "unary" else SFPU_BINARY_NAMES
    args = ["x"] if op.kind == "unary" else ["a", "b"]
    inputs = "\n".join(
        f"      {arg}: {{index: {i}, dtype: bf16, block: [1, 1], input: {{shape: [1, 2], distribution: {dist}}}}}"
        for i, (arg, dist) in enumerate(zip(args, op.inputs, strict=True))
    )
    kernel = USER_KERNEL.format(
        base=op.base, suffix=suffix, op=name, args=", ".join(args), inputs=inputs,
        target="blackhole" if op.kind == "unary" else "wormhole_b0",
    )
    return [
        *edits,
        first_in_family(family, name),
        replace("ops/tt_metal_spelling.yaml", "\nops:\n", f'\nops:\n  {name}:\n    sfpu: {{init: {op.init}(), call: "{op.call}"}}\n'),
        append(f"kernels/{'unary' if op.kind == 'unary' else 'elementwise'}.yaml", kernel),
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
        chosen += user_op_edits(specs, LOG1P, suffix)
    if "binary" in edits:
        chosen += user_op_edits(specs, GE, suffix)
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
