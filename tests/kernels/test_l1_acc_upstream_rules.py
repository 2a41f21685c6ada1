"""Packer L1 accumulation placed by TT-Lang's own rules (l1-accumulation-upstream.md, §2-4):
each upstream case a kernel spec can express is a kernel here, lowered from a spec copy, and
its compute program's call sequence is compared with the one upstream's CHECK lines require
(``D`` = pack_reconfig_l1_acc(0), ``E`` = pack_reconfig_l1_acc(1)). The nested and
conditional-prior-store cases also run on the emulator. Upstream's rejections (block-float
outputs, nested independent scopes) are located build errors with upstream's wording."""

from __future__ import annotations

import functools
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from kernel_helpers import run

from tests.conftest import SPECS, run_cli
from ttlgen.model.spelling import ArgKind
from ttlgen.plan import kernel_ir as ir
from ttlgen.plan import l1_accumulation
from ttlgen.plan.kernels import LoweredKernel

HEAD = """\
spec: ttlgen.kernel/v1
kernels:
"""


def matmul_kernel(name: str, body: str, k: int, outputs: Sequence[tuple[str, int, tuple[int, int]]] = (("out", 16, (2, 2)),), extra: str = "") -> str:
    """A bf16 matmul kernel with 16-bit DST (so '+=' goes through the packer) reading ``k``
    blocks of a and b, writing ``outputs`` (name, index, output shape in tiles)."""
    outs = "".join(f"      {n}: {{index: {i}, dtype: bf16, block: [2, 2], output: {{shape: [{s[0]}, {s[1]}]}}}}\n" for n, i, s in outputs)
    return (
        f"  {name}:\n"
        f"    summary: {name} (test).\n"
        "    target: blackhole\n"
        "    policy:\n      options: {fp32-dest-acc-en: disabled}\n"
        f"{extra}"
        "    dfbs:\n"
        f"      a: {{index: 0, dtype: bf16, block: [2, 1], input: {{shape: [2, {k}]}}}}\n"
        f"      b: {{index: 1, dtype: bf16, block: [1, 2], input: {{shape: [{k}, 2]}}}}\n"
        f"{outs}"
        "    body:\n"
        f"{body}"
        "    tolerance: {pcc: 0.999, max_rel: 3.0e-2, derivation: \"at most 6 bf16 accumulation steps\"}\n"
    )


def step(to: str = "out", acc: bool = True, indent: int = 6) -> str:
    """One block: wait, store or '+=' of a @ b, pop."""
    pad = " " * indent
    verb = "accumulate" if acc else "store"
    return f"{pad}- wait: [a, b]\n{pad}- {verb}: {{to: {to}, value: {{op: tile_matmul_block, args: [a, b]}}}}\n{pad}- pop: [a, b]\n"


def loop(var: str, count: int, body: str, indent: int = 6) -> str:
    pad = " " * indent
    return f"{pad}- loop:\n{pad}    var: {var}\n{pad}    count: {count}\n{pad}    body:\n{body}"


def nest(text: str, by: int) -> str:
    return "".join(" " * by + line if line.strip() else line for line in text.splitlines(keepends=True))


R = "      - reserve: out\n"
P = "      - push: out\n"

KERNELS = {
    # insert_l1_accumulation.mlir: basic_l1_acc_loop.
    "basic": matmul_kernel("basic", R + loop("k", 3, step(indent=10)) + P, 3),
    # nested_l1_acc_loops: the reservation outside both loops; the enable in the innermost.
    "nested": matmul_kernel("nested", R + loop("ko", 2, loop("ki", 3, step(indent=14), indent=10)) + P, 6),
    # consecutive_l1_acc_loops: one reservation, no disable between, an unconditional enable.
    "consecutive": matmul_kernel("consecutive", R + loop("k1", 2, step(indent=10)) + loop("k2", 3, step(indent=10)) + P, 5),
    # multi_push_after_loop / two_outputs_one_loop: the enable after the last output's pack,
    # the disable after the last push.
    "two_outputs": matmul_kernel(
        "two_outputs",
        "      - reserve: [o1, o2]\n"
        + loop("k", 3, "          - wait: [a, b]\n"
               "          - accumulate: {to: o1, value: {op: tile_matmul_block, args: [a, b]}}\n"
               "          - accumulate: {to: o2, value: {op: tile_matmul_block, args: [a, b]}}\n"
               "          - pop: [a, b]\n")
        + "      - push: o1\n      - push: o2\n",
        3,
        (("o1", 16, (2, 2)), ("o2", 17, (2, 2))),
    ),
    # Two contributions to one block per iteration: the enable follows the first.
    "two_contributions": matmul_kernel(
        "two_contributions", R + loop("k", 2, step(indent=10) + step(indent=10)) + P, 4
    ),
    # prior_value_then_l1_acc_loop (accumulate_existing): enabled before the loop, no compare.
    "prior_value": matmul_kernel("prior_value", R + step(acc=False) + loop("k", 3, step(indent=10)) + P, 4),
    # prior_pack_different_cb_ignored.
    "prior_other_cb": matmul_kernel(
        "prior_other_cb",
        "      - reserve: [out, other]\n" + step("other", acc=False) + loop("k", 3, step(indent=10)) + "      - push: [out, other]\n",
        4,
        (("out", 16, (2, 2)), ("other", 17, (2, 2))),
    ),
    # cb_reserve_back_blocks_prior_value_detection: push + reserve reset the slot.
    "reserve_resets_prior": matmul_kernel("reserve_resets_prior", R + step(acc=False) + P + R + loop("k", 3, step(indent=10)) + P, 4, (("out", 16, (4, 2)),)),
    # prior_pack_inside_scf_if_not_treated_as_prior.
    "prior_in_if": matmul_kernel(
        "prior_in_if",
        R + loop("j", 1, "          - if:\n              var: j\n              is: not_first\n              then:\n" + nest(step(acc=False), 10)) + loop("k", 3, step(indent=10)) + P,
        3,
    ),
    # zero_trip_wrapper_not_credited.
    "prior_zero_trip": matmul_kernel("prior_zero_trip", R + loop("j", 0, step(acc=False, indent=10)) + loop("k", 3, step(indent=10)) + P, 3),
    # prior_pack_inside_tile_loop_wrapper: a loop that runs counts.
    "prior_in_loop": matmul_kernel("prior_in_loop", R + loop("j", 1, step(acc=False, indent=10)) + loop("k", 3, step(indent=10)) + P, 4),
    # l1_acc_inside_outer_loop: the bracket per outer iteration.
    "inside_outer": matmul_kernel("inside_outer", loop("m", 2, nest(R + loop("k", 2, step(indent=10)) + P, 4)), 4, (("out", 16, (4, 2)),)),
    # annotate_l1_acc_loops.mlir: plain_store_no_annotation (each store overwrites).
    "plain_store_loop": matmul_kernel("plain_store_loop", R + loop("k", 2, step(acc=False, indent=10)) + P, 2),
    # single_iteration: still the standard pattern.
    "single_iteration": matmul_kernel("single_iteration", R + loop("k", 1, step(indent=10)) + P, 1),
    # different_cb_siblings: loops into different blocks are scopes of their own.
    "different_cb_siblings": matmul_kernel(
        "different_cb_siblings",
        "      - reserve: [o1, o2]\n" + loop("k1", 2, step("o1", indent=10)) + loop("k2", 2, step("o2", indent=10)) + "      - push: o1\n      - push: o2\n",
        4,
        (("o1", 16, (2, 2)), ("o2", 17, (2, 2))),
    ),
    # prior_value_root_then_plain_acc_sibling: a written block keeps accumulating in both loops.
    "prior_then_sibling": matmul_kernel("prior_then_sibling", R + step(acc=False) + loop("k1", 2, step(indent=10)) + loop("k2", 2, step(indent=10)) + P, 5),
    # unrelated_scf_for_skipped_to_prior_pack / unrelated_scf_if_skipped_to_prior_pack.
    "unrelated_between": matmul_kernel(
        "unrelated_between",
        "      - reserve: [out, other]\n" + step(acc=False)
        + loop("j", 1, step("other", acc=False, indent=10))
        + loop("i", 1, "          - if:\n              var: i\n              is: first\n              then:\n" + nest(step("other", acc=False), 10))
        + loop("k", 2, step(indent=10))
        + "      - push: [out, other]\n",
        5,
        (("out", 16, (2, 2)), ("other", 17, (2, 2))),
    ),
    # multi_output_full_prior_enables_pre_group.
    "full_prior_two_outputs": matmul_kernel(
        "full_prior_two_outputs",
        "      - reserve: [o1, o2]\n" + step("o1", acc=False) + step("o2", acc=False)
        + loop("k", 2, step("o1", indent=10) + step("o2", indent=10)) + "      - push: [o1, o2]\n",
        6,
        (("o1", 16, (2, 2)), ("o2", 17, (2, 2))),
    ),
}

EXPECTED = {
    "basic": ["reserve out", "D", "for k", "pack out", "if(k==0) E", "end", "push out", "D"],
    "nested": ["reserve out", "D", "for ko", "for ki", "pack out", "if(ki==0) E", "end", "end", "push out", "D"],
    "consecutive": ["reserve out", "D", "for k1", "pack out", "if(k1==0) E", "end", "E", "for k2", "pack out", "end", "push out", "D"],
    "two_outputs": ["reserve o1", "reserve o2", "D", "for k", "pack o1", "pack o2", "if(k==0) E", "end", "push o1", "push o2", "D"],
    "two_contributions": ["reserve out", "D", "for k", "pack out", "if(k==0) E", "pack out", "end", "push out", "D"],
    "prior_value": ["reserve out", "pack out", "E", "for k", "pack out", "end", "push out", "D"],
    "prior_other_cb": ["reserve out", "reserve other", "pack other", "D", "for k", "pack out", "if(k==0) E", "end", "push out", "push other", "D"],
    "reserve_resets_prior": ["reserve out", "pack out", "push out", "reserve out", "D", "for k", "pack out", "if(k==0) E", "end", "push out", "D"],
    "prior_in_if": ["reserve out", "for j", "if", "pack out", "end", "end", "D", "for k", "pack out", "if(k==0) E", "end", "push out", "D"],
    "prior_zero_trip": ["reserve out", "D", "for k", "pack out", "if(k==0) E", "end", "push out", "D"],
    "prior_in_loop": ["reserve out", "for j", "pack out", "end", "E", "for k", "pack out", "end", "push out", "D"],
    "inside_outer": ["for m", "reserve out", "D", "for k", "pack out", "if(k==0) E", "end", "push out", "D", "end"],
    "plain_store_loop": ["reserve out", "for k", "pack out", "end", "push out"],
    "single_iteration": ["reserve out", "D", "for k", "pack out", "if(k==0) E", "end", "push out", "D"],
    "different_cb_siblings": [
        "reserve o1", "reserve o2", "D", "for k1", "pack o1", "if(k1==0) E", "end", "D",
        "D", "for k2", "pack o2", "if(k2==0) E", "end", "push o1", "push o2", "D",
    ],
    "prior_then_sibling": ["reserve out", "pack out", "E", "for k1", "pack out", "end", "E", "for k2", "pack out", "end", "push out", "D"],
    "unrelated_between": [
        "reserve out", "reserve other", "pack out", "for j", "pack other", "end", "for i", "if", "pack other", "end", "end",
        "E", "for k", "pack out", "end", "push out", "push other", "D",
    ],
    "full_prior_two_outputs": ["reserve o1", "reserve o2", "pack o1", "pack o2", "E", "for k", "pack o1", "pack o2", "end", "push o1", "push o2", "D"],
}


def _tree(root: Path, kernels: str, edits: Sequence[tuple[str, str, str]] = ()) -> Path:
    specs = root / "specs"
    shutil.copytree(SPECS, specs)
    (specs / "kernels" / "test_l1_rules.yaml").write_text(HEAD + kernels, encoding="utf-8")
    for file, old, new in edits:
        path = specs / file
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{file}: the edit no longer applies"
        path.write_text(text.replace(old, new), encoding="utf-8")
    return specs


def _lowered(specs: Path) -> dict[str, LoweredKernel]:
    from ttlgen import pipeline

    return {k.kernel.name: k for k in pipeline.plan(specs)[1].kernels}


@functools.cache
def _rules_tree(root: Path) -> dict[str, LoweredKernel]:
    # With the kernels of the tests further down that read a lowered kernel of an unedited
    # copy (_more_kernels): the kernels of a tree are lowered each on its own, so lowering
    # them together gives each the plan it has alone.
    return _lowered(_tree(root, "".join(KERNELS.values()) + _more_kernels()))


@pytest.fixture(scope="module")
def lowered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, LoweredKernel]:
    return _rules_tree(tmp_path_factory.mktemp("l1_rules"))


def _cb(call: ir.Call) -> str:
    value = call.arg(ArgKind.CB)
    assert isinstance(value, ir.Var)
    return value.name.removeprefix("cb_")


def _flag(call: ir.Call) -> int:
    flag = call.arg(ArgKind.FLAG)
    assert isinstance(flag, ir.Const)
    return flag.value


def trace(body: Sequence[ir.Stmt], inits: bool = False) -> list[str]:
    """The calls of a compute program that L1-accumulation placement is about, in order:
    reserve, pack (once per run of packs into one CB), push, D and E, the kernel's own loops
    (``for v`` ... ``end``), conditionals, and with ``inits`` the op inits."""
    out: list[str] = []
    for stmt in body:
        if isinstance(stmt, ir.Call):
            if stmt.step is ir.Step.L1_ACC:
                out.append("E" if _flag(stmt) else "D")
            elif stmt.step is ir.Step.CB_RESERVE_BACK:
                out.append(f"reserve {_cb(stmt)}")
            elif stmt.step is ir.Step.CB_PUSH_BACK:
                out.append(f"push {_cb(stmt)}")
            elif stmt.step is ir.Step.PACK:
                token = f"pack {_cb(stmt)}"
                if not out or out[-1] != token:
                    out.append(token)
            elif inits and stmt.step is ir.Step.OP_INIT:
                out.append(f"init {_cb(stmt)}")
        elif isinstance(stmt, ir.For):
            inner = trace(stmt.body, inits)
            if stmt.generated:
                out.extend(t for t in inner if not (out and t == out[-1] and t.startswith("pack")))
            else:
                out.extend([f"for {stmt.var}", *inner, "end"])
        elif isinstance(stmt, ir.If):
            then = trace(stmt.then, inits)
            cond = stmt.condition
            if then == ["E"] and not stmt.orelse and isinstance(cond, ir.Compare) and isinstance(cond.lhs, ir.Var):
                relation = "==" if cond.op is ir.Comparison.EQ else "!="
                out.append(f"if({cond.lhs.name}{relation}{cond.rhs.value if isinstance(cond.rhs, ir.Const) else '?'}) E")
            else:
                out.extend(["if", *then, *(["else", *trace(stmt.orelse, inits)] if stmt.orelse else []), "end"])
    return out


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_upstream_call_sequence(lowered: dict[str, LoweredKernel], case: str) -> None:
    assert trace(lowered[case].compute.body) == EXPECTED[case]


@pytest.mark.device
@pytest.mark.parametrize(
    "case",
    ["nested", "two_contributions", "prior_in_if", "prior_zero_trip", "prior_in_loop", "inside_outer", "different_cb_siblings", "prior_then_sibling", "unrelated_between", "full_prior_two_outputs"],
)
def test_emulator_runs_pass_their_tolerance(lowered: dict[str, LoweredKernel], case: str) -> None:
    report = run(lowered[case])
    assert report.passed, report.to_json()


# ----------------------------------------------------------------------- rejections


def _build_errors(tmp_path: Path, kernels: str, edits: Sequence[tuple[str, str, str]] = ()) -> str:
    specs = _tree(tmp_path, kernels, edits)
    result = run_cli("build", "--specs", specs, "--out", tmp_path / "out")
    assert result.exit_code == 2, result.stderr
    return result.stderr


def test_nested_independent_scopes_are_upstreams_error(tmp_path: Path) -> None:
    inner = "      - reserve: o2\n" + loop("k", 2, step("o2", indent=10)) + "      - push: o2\n"
    body = "      - reserve: o1\n" + loop("m", 2, nest(step("o1") + inner, 4)) + "      - push: o1\n"
    kernels = matmul_kernel("nested_scopes", body, 6, (("o1", 16, (2, 2)), ("o2", 17, (4, 2))))
    stderr = _build_errors(tmp_path, kernels)
    assert "specs/kernels/test_l1_rules.yaml:" in stderr
    assert l1_accumulation.NESTED_SCOPES in stderr


def test_an_inner_loop_repeating_one_target_before_another_is_first_written_is_refused(tmp_path: Path) -> None:
    body = (
        "      - reserve: [o1, o2]\n"
        + loop("m", 2, nest(loop("k", 2, step("o1", indent=10)) + step("o2"), 4))
        + "      - push: [o1, o2]\n"
    )
    kernels = matmul_kernel("split_first_packs", body, 6, (("o1", 16, (2, 2)), ("o2", 17, (2, 2))))
    assert l1_accumulation.NESTED_SCOPES in _build_errors(tmp_path, kernels)


# A block-float element type and format, which the packer cannot accumulate in (test only).
BFP8 = [
    ("ops/vocabulary.yaml", "  u16: {bits: 16, float: false}\n", "  u16: {bits: 16, float: false}\n  bfp_bf8: {bits: 8, float: true}\n"),
    ("ops/vocabulary.yaml", "    u16: isUnsignedInteger(16)\n", "    u16: isUnsignedInteger(16)\n    bfp_bf8: isFloat8E4M3FN()\n"),
    ("ops/tt_metal_spelling.yaml", "\nformats:\n", "\nformats:\n  bfp_bf8: {name: Bfp8_b, tile_bytes: 1024}\n"),
]


def test_accumulating_into_a_block_float_output_is_upstreams_error(tmp_path: Path) -> None:
    kernels = matmul_kernel("bfp8_out", R + loop("k", 2, step(indent=10)) + P, 2).replace(
        "out: {index: 16, dtype: bf16", "out: {index: 16, dtype: bfp_bf8"
    )
    stderr = _build_errors(tmp_path, kernels, BFP8)
    expected = l1_accumulation.unsupported_format("bfp_bf8")
    assert expected == (
        "L1 packer accumulation does not support output data type bfp_bf8; use a supported output data type "
        "or select another accumulation strategy"
    )
    assert expected in stderr and "specs/kernels/test_l1_rules.yaml:" in stderr
    # The same output written without '+=' is fine.
    plain = matmul_kernel("bfp8_plain", R + step(acc=False) + P, 1).replace("out: {index: 16, dtype: bf16", "out: {index: 16, dtype: bfp_bf8")
    assert "bfp8_plain" in _lowered(_tree(tmp_path / "plain", plain, BFP8))


def _strict(dtype: str, name: str = "strict") -> str:
    kernel = matmul_kernel(name, R + loop("k", 2, step(indent=10)) + P, 2, extra="    strict_f32_acc: true\n")
    kernel = kernel.replace("options: {fp32-dest-acc-en: disabled}", "options: {fp32-dest-acc-en: enabled}")
    kernel = kernel.replace("block: [2, 1], input: {shape: [2, 2]}", "block: [4, 1], input: {shape: [4, 2]}")
    kernel = kernel.replace("block: [1, 2], input: {shape: [2, 2]}", "block: [1, 4], input: {shape: [2, 4]}")
    return kernel.replace("out: {index: 16, dtype: bf16, block: [2, 2], output: {shape: [2, 2]}}", f"out: {{index: 16, dtype: {dtype}, block: [4, 4], output: {{shape: [4, 4]}}}}")


def test_a_subblocked_accumulation_enables_once_per_k_step_after_all_subblocks(lowered: dict[str, LoweredKernel]) -> None:
    # insert_l1_accumulation.mlir subblocked_loop: D, for k { for sb {...}; if(k==0) E }, D.
    kernel = lowered["subblocked"]
    assert kernel.subblocked
    assert trace(kernel.compute.body) == ["reserve out", "D", "for k", "pack out", "if(k==0) E", "end", "push out", "D"]


def test_strict_f32_acc_refuses_subblocking_a_non_f32_output(tmp_path: Path) -> None:
    assert "strict_f32_acc" in _build_errors(tmp_path, _strict("bf16"))


def test_strict_f32_acc_leaves_an_f32_output_alone(lowered: dict[str, LoweredKernel]) -> None:
    assert lowered["strict_f32"].subblocked


# ---------------------------------------------------------- re-arm after packer inits

# A test copy in which matmul_block_init may reset the packer's L1-accumulation flag, as
# upstream's pack_rows_init does.
RESETTING_INIT = [
    (
        "tt_metal/current.yaml",
        "uint32_t kt_dim = 1, uint32_t call_line = __builtin_LINE())\n        configures: [fpu]\n",
        "uint32_t kt_dim = 1, uint32_t call_line = __builtin_LINE())\n        configures: [fpu, packer_l1_acc]\n",
    )
]


def _second_operands(kernel: str) -> str:
    """The kernel with its second loop reading other buffers (so its init stays between the loops)."""
    return kernel.replace(
        "      b: {index: 1",
        "      c: {index: 2, dtype: bf16, block: [2, 1], input: {shape: [2, 3]}}\n"
        "      d: {index: 3, dtype: bf16, block: [1, 2], input: {shape: [3, 2]}}\n      b: {index: 1",
    )


# Kernels the tests below read, lowered with others from one spec copy per tree.
def _rearm() -> str:
    second = loop("k2", 3, step(indent=10).replace("[a, b]", "[c, d]"))
    return _second_operands(matmul_kernel("rearm", R + loop("k1", 2, step(indent=10)) + second + P, 2))


def _rearm_inside() -> str:
    body = loop("k", 2, step(indent=10) + step(indent=10).replace("[a, b]", "[c, d]"))
    kernel = _second_operands(matmul_kernel("rearm_inside", R + body + P, 2))
    return kernel.replace("shape: [2, 3]}", "shape: [2, 2]}").replace("shape: [3, 2]}", "shape: [2, 2]}")


def _more_kernels() -> str:
    """A subblocked '+=' into bf16 without strict_f32_acc, strict_f32_acc into f32, and two
    matmuls between which an init may reset the packer (with the specs' matmul init): in
    the tree of the `lowered` fixture."""
    return _strict("bf16", "subblocked").replace("    strict_f32_acc: true\n", "") + _strict("f32", "strict_f32") + _rearm()


@pytest.fixture(scope="module")
def resetting_init(tmp_path_factory: pytest.TempPathFactory) -> dict[str, LoweredKernel]:
    """The two re-arm kernels in a copy whose matmul init may reset the packer's flag."""
    return _lowered(_tree(tmp_path_factory.mktemp("l1_resetting"), _rearm() + _rearm_inside(), RESETTING_INIT))


def test_the_enable_is_reissued_after_an_init_that_may_reset_the_packer(lowered: dict[str, LoweredKernel], resetting_init: dict[str, LoweredKernel]) -> None:
    plain = trace(lowered["rearm"].compute.body, inits=True)
    resetting = trace(resetting_init["rearm"].compute.body, inits=True)
    # consecutive_with_init_between: the re-enable lands after the init between the loops.
    at = plain.index("for k2")
    assert plain[at - 2 : at] == ["E", "init c"]
    at = resetting.index("for k2")
    assert resetting[at - 3 : at] == ["end", "init c", "E"]
    # An init that touches the flag stays in the first loop (it is not hoisted past the
    # loop's enable), and re-arms there from the second iteration on.
    assert resetting[: resetting.index("end")] == ["reserve out", "D", "for k1", "init a", "if(k1!=0) E", "pack out", "if(k1==0) E"]


def test_an_init_inside_an_accumulating_loop_is_followed_by_the_enable_where_it_should_be_on(resetting_init: dict[str, LoweredKernel]) -> None:
    # The two matmuls alternate their init every iteration, so neither leaves the loop.
    resetting = trace(resetting_init["rearm_inside"].compute.body, inits=True)
    # Before the first pack of iteration 0 the flag stays off; afterwards every init re-arms.
    assert resetting == [
        "reserve out", "D", "for k", "init a", "if(k!=0) E", "pack out", "if(k==0) E", "init c", "E", "pack out", "end",
        "push out", "D",
    ]


def test_a_prior_value_of_only_some_outputs_is_refused(tmp_path: Path) -> None:
    # Upstream's multi_output_partial_prior_falls_back_to_standard keeps the standard pattern,
    # whose first pack would overwrite the written block: ttlgen refuses the kernel instead.
    body = (
        "      - reserve: [o1, o2]\n" + step("o1", acc=False)
        + loop("k", 2, step("o1", indent=10) + step("o2", indent=10)) + "      - push: [o1, o2]\n"
    )
    kernels = matmul_kernel("partial_prior", body, 5, (("o1", 16, (2, 2)), ("o2", 17, (2, 2))))
    assert "mixes fresh reservations (o2) with written ones (o1)" in _build_errors(tmp_path, kernels)
