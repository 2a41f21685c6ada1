"""Numerics respond to the compute configuration as the hardware model says
(NUMERICS.md), and simple kernels match float64 references."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from device_helpers import (
    Runner,
    load_fixture_program,
    matmul_inputs,
    matmul_program,
    pcc,
    set_ct_args,
)

from ttlgen.device import Numerics, ProtocolError
from ttlgen.device.formats import (
    POISON_BYTES,
    bfp8_quantize,
    bfp8_values,
    round_mantissa,
    tile_bytes,
    tilize,
    to_bf16,
    to_bfp8,
    to_tf32,
    untilize,
)

pytestmark = pytest.mark.device


def _matmul_error(run: Runner, kt: int, **config: object) -> float:
    inputs = matmul_inputs(2, 2, kt, seed=3)
    prog = matmul_program(2, 2, kt, (2, 2), out_format="Float32", **config)
    out = run("matmul", inputs, program=prog).outputs["c"]
    ref = inputs["a"].astype(np.float64) @ inputs["b"].astype(np.float64)
    return float(np.mean(np.abs(out - ref)))


def test_eltwise_add_bf16_matches_float64_reference(run: Runner) -> None:
    rng = np.random.default_rng(10)
    a, b = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    out = run("eltwise_add", {"a": a, "b": b}).outputs["out"]
    ref = to_bf16(a).astype(np.float64) + to_bf16(b).astype(np.float64)
    assert pcc(out, ref) >= 0.999
    # bf16 inputs add exactly in SrcA/SrcB; only the bf16 roundings of the result remain
    assert np.max(np.abs(out - ref) / np.maximum(np.abs(ref), 1e-3)) <= 2.0**-7


def test_matmul_bf16_matches_float64_reference(run: Runner) -> None:
    inputs = matmul_inputs(2, 2, 4, seed=11)
    out = run("matmul", inputs).outputs["c"]
    ref = inputs["a"].astype(np.float64) @ inputs["b"].astype(np.float64)
    assert pcc(out, ref) >= 0.999


def test_fp32_dest_accumulates_k_more_accurately_than_16bit_dest(run: Runner) -> None:
    err16 = _matmul_error(run, 16, fp32_dest_acc_en=False)
    err32 = _matmul_error(run, 16, fp32_dest_acc_en=True)
    # 16-bit DST rounds the running sum to TF32 per product and to bf16 per K tile; fp32 DST does not
    assert err32 * 20 < err16


def test_lofi_error_exceeds_hifi4_and_matches_truncated_operand_model(run: Runner) -> None:
    inputs = matmul_inputs(2, 2, 2, seed=4)
    outs = {}
    for fid in ("LoFi", "HiFi4"):
        prog = matmul_program(
            2, 2, 2, (2, 2), out_format="Float32", fp32_dest_acc_en=True, math_fidelity=fid
        )
        outs[fid] = run("matmul", inputs, program=prog).outputs["c"]
    a = inputs["a"].astype(np.float64)
    b = inputs["b"].astype(np.float64)
    exact = a @ b
    err = {f: float(np.mean(np.abs(o - exact))) for f, o in outs.items()}
    assert err["LoFi"] > 10 * err["HiFi4"]
    # LoFi multiplies in0 (SrcB) with 6 and in1 (SrcA) with 4 explicit mantissa bits
    lofi_model = round_mantissa(a, 6, "truncate").astype(np.float64) @ round_mantissa(
        b, 4, "truncate"
    ).astype(np.float64)
    assert float(np.max(np.abs(outs["LoFi"] - lofi_model))) < 1e-4 * float(
        np.max(np.abs(lofi_model))
    )


def test_error_falls_with_each_fidelity_pass(run: Runner) -> None:
    errors = [
        _matmul_error(run, 2, fp32_dest_acc_en=True, math_fidelity=f)
        for f in ("LoFi", "HiFi2", "HiFi3", "HiFi4")
    ]
    assert errors[0] > errors[1] > errors[2] > errors[3]


def _copy_program(unpack_to_dest: bool, out_format: str = "Float32") -> dict[str, Any]:
    prog = load_fixture_program("copy")
    prog["compute_config"].update(
        fp32_dest_acc_en=True, unpack_to_dest_mode=["UnpackToDestFp32"] if unpack_to_dest else []
    )
    for cb in prog["cbs"]:
        if cb["index"] == 16:
            cb.update(format=out_format, page_size=tile_bytes(out_format))
    for b in prog["buffers"]:
        if b["name"] == "out":
            b["format"] = out_format
    return prog


def _f32_input() -> np.ndarray:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    x[0, :4] = [
        1.0 + 2.0**-12,
        -(1.0 + 2.0**-12),
        3.0,
        0.0,
    ]  # low bits that TF32 drops, and exact values
    return x


def test_unpack_to_dest_fp32_copies_f32_exactly(run: Runner) -> None:
    x = _f32_input()
    out = run("copy", {"x": x}, program=_copy_program(True)).outputs["out"]
    np.testing.assert_array_equal(out, x)


def test_default_unpack_of_f32_truncates_to_tf32(run: Runner) -> None:
    x = _f32_input()
    out = run("copy", {"x": x}, program=_copy_program(False)).outputs["out"]
    np.testing.assert_array_equal(out, to_tf32(x, "truncate"))
    assert np.any(out != x)


@pytest.mark.parametrize("mode", ["ties_away", "nearest_even", "truncate"])
def test_packer_rounding_mode_is_applied_to_bf16_output(run: Runner, mode: str) -> None:
    x = _f32_input()
    # Exact ties at bf16 precision, where ties_away and nearest_even differ.
    x[1, :3] = [1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, -(1.0 + 2.0**-8)]
    numerics = Numerics(pack_rounding=mode)  # type: ignore[arg-type]
    out = run(
        "copy", {"x": x}, program=_copy_program(True, "Float16_b"), numerics=numerics
    ).outputs["out"]
    np.testing.assert_array_equal(out, round_mantissa(x, 7, mode))  # type: ignore[arg-type]


def test_packer_rounding_modes_give_different_results() -> None:
    x = np.array([1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 1.0 + 2.0**-9], dtype=np.float32)
    results = {m: tuple(round_mantissa(x, 7, m)) for m in ("ties_away", "nearest_even", "truncate")}
    assert len(set(results.values())) == 3


def test_l1_accumulation_rounds_once_per_step_in_output_format(run: Runner) -> None:
    k = 4
    rng = np.random.default_rng(6)
    # Mixed magnitudes so per-step bf16 rounding loses bits a single rounding would keep.
    x = to_bf16(rng.standard_normal((32, 32 * k)) * np.repeat([1.0, 1e-2, 3e-3, 1e-3], 32)[None, :])
    prog = load_fixture_program("l1_acc_sum")
    for cb in prog["cbs"]:
        cb.update(format="Float16_b", page_size=2048)
    for b in prog["buffers"]:
        b["format"] = "Float16_b"
    prog["compute_config"].update(fp32_dest_acc_en=False)
    set_ct_args(prog, [k], ("compute",))
    out = run("l1_acc_sum", {"x": x}, program=prog).outputs["out"]
    tiles = [x[:, 32 * i : 32 * (i + 1)].astype(np.float64) for i in range(k)]
    # The packer narrows each L1 sum to nearest even (the calibrated default, NUMERICS.md).
    acc = tiles[0].astype(np.float32)
    for t in tiles[1:]:
        acc = round_mantissa((acc.astype(np.float64) + t).astype(np.float32), 7, "nearest_even")
    np.testing.assert_array_equal(out, acc)
    once = round_mantissa(np.sum(tiles, axis=0).astype(np.float32), 7, "nearest_even")
    assert np.any(out != once)


def test_outputs_are_poisoned_not_zeroed(run: Runner) -> None:
    prog = load_fixture_program("copy")
    prog["kernels"]["writer"]["runtime_args"][2] = 1  # writes only the first of two tiles
    x = _f32_input()
    result = run("copy", {"x": x}, program=prog)
    assert np.all(np.isnan(result.outputs["out"][:, 32:]))
    assert any("CB 16 ended with 1 pushed pages never popped" in w for w in result.warnings)


def test_a_fresh_cb_reservation_holds_the_poison_pattern(run: Runner) -> None:
    x = to_bf16(np.random.default_rng(5).standard_normal((32, 32)))
    out = run("reserve_unwritten", {"x": x}).outputs["out"]
    np.testing.assert_array_equal(out[:, :32], x)
    poison = int.from_bytes(POISON_BYTES, "little") << 16  # a bf16 value as float32 bits
    assert np.all(out[:, 32:].view(np.uint32) == poison)


def test_without_reserve_poisoning_a_reservation_keeps_its_pages_stale_data(run: Runner) -> None:
    x = to_bf16(np.random.default_rng(5).standard_normal((32, 32)))
    out = run("reserve_unwritten", {"x": x}, numerics=Numerics(poison_reserve=False)).outputs["out"]
    np.testing.assert_array_equal(out[:, 32:], x)


@pytest.mark.parametrize("precise", [False, True])
def test_bfp8_packing_follows_block_float_model(run: Runner, precise: bool) -> None:
    x = _f32_input()
    prog = _copy_program(True, "Float32")
    prog["compute_config"]["bfp8_pack_precise"] = precise
    for cb in prog["cbs"]:
        if cb["index"] == 16:
            cb.update(format="Bfp8_b", page_size=1088)
    for b in prog["buffers"]:
        if b["name"] == "out":
            b["format"] = "Bfp8_b"
    out = run("copy", {"x": x}, program=prog).outputs["out"]
    # precise: align to the shared exponent with rounding; otherwise bf16 first, then truncating
    # alignment; both roundings use the packer's (default nearest_even)
    flat = tilize(x) if precise else tilize(to_bf16(x, "nearest_even"))
    exps, mants = bfp8_quantize(flat, "nearest_even" if precise else "truncate")
    np.testing.assert_array_equal(out, untilize(bfp8_values(exps, mants), 1, 2))


def test_bfp8_input_unpacks_exactly(run: Runner) -> None:
    x = _f32_input()
    prog = _copy_program(False, "Float32")
    for cb in prog["cbs"]:
        if cb["index"] == 0:
            cb.update(format="Bfp8_b", page_size=1088)
    for b in prog["buffers"]:
        if b["name"] == "x":
            b["format"] = "Bfp8_b"
    out = run("copy", {"x": x}, program=prog).outputs["out"]
    np.testing.assert_array_equal(out, to_bfp8(x))


def _tile_ops_program(code: int, **config: object) -> dict[str, Any]:
    prog = load_fixture_program("tile_ops")
    prog["kernels"]["compute"]["runtime_args"] = [code]
    prog["compute_config"].update(config)
    return prog


def _bf16_pair(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return to_bf16(rng.standard_normal((32, 32))), to_bf16(rng.standard_normal((32, 32)) * 3)


def _rsub(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return y - x


@pytest.mark.parametrize(
    ("code", "op", "mode", "other"),
    [
        (17, np.add, "truncate", "nearest_even"),
        (18, np.subtract, "truncate", "nearest_even"),
        (28, _rsub, "truncate", "nearest_even"),
        (19, np.multiply, "nearest_even", "truncate"),
        (27, np.divide, "nearest_even", "truncate"),
    ],
)
def test_sfpu_binary_results_narrow_into_16_bit_dst_as_upstream_documents(
    run: Runner, code: int, op: Any, mode: str, other: str
) -> None:
    """add/sub/rsub_binary_tile store natively (truncate, DstRoundingMode::Default);
    mul_binary_tile and div_binary_tile round to nearest even (eltwise_binary_sfpu.h@1387d4d6)."""
    x, y = _bf16_pair(code)
    out = run("tile_ops", {"x": x, "y": y}, program=_tile_ops_program(code, fp32_dest_acc_en=False))
    # The SFPU's fp32 result (exact for add, sub and mul of bf16 operands; the correctly
    # rounded quotient for div), then narrowed into the 16-bit DST.
    exact = op(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    expected = round_mantissa(exact, 7, mode)  # type: ignore[arg-type]
    np.testing.assert_array_equal(out.outputs["out"], expected)
    assert np.any(expected != round_mantissa(exact, 7, other))  # type: ignore[arg-type]


# (op, code with DstRoundingMode::Default, code with DstRoundingMode::NearestEven)
_ROUNDING_MODE_OPS = [(np.add, 17, 29), (np.subtract, 18, 30), (_rsub, 28, 31)]
_ROUNDING_MODE_IDS = ["add_binary_tile", "sub_binary_tile", "rsub_binary_tile"]


@pytest.mark.parametrize(("op", "default", "nearest_even"), _ROUNDING_MODE_OPS, ids=_ROUNDING_MODE_IDS)
def test_nearest_even_rounding_mode_rounds_sfpu_add_sub_rsub_into_16_bit_dst(
    run: Runner, op: Any, default: int, nearest_even: int
) -> None:
    """eltwise_binary_sfpu.h@1387d4d6: DstRoundingMode::NearestEven is software RNE."""
    x, y = _bf16_pair(default)
    out = run("tile_ops", {"x": x, "y": y}, program=_tile_ops_program(nearest_even, fp32_dest_acc_en=False))
    exact = op(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out.outputs["out"], round_mantissa(exact, 7, "nearest_even"))
    assert np.any(out.outputs["out"] != round_mantissa(exact, 7, "truncate"))


@pytest.mark.parametrize(("op", "default", "nearest_even"), _ROUNDING_MODE_OPS, ids=_ROUNDING_MODE_IDS)
def test_dst_rounding_mode_is_ignored_with_fp32_dest(run: Runner, op: Any, default: int, nearest_even: int) -> None:
    """eltwise_binary_sfpu.h@1387d4d6: the mode is ignored when fp32 dest is on; both modes
    keep the fp32 result."""
    x, y = _bf16_pair(default)
    exact = op(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    assert np.any(exact != round_mantissa(exact, 7, "nearest_even"))  # the fp32 result has bits bf16 lacks
    for code in (default, nearest_even):
        out = run("tile_ops", {"x": x, "y": y}, program=_tile_ops_program(code, fp32_dest_acc_en=True))
        np.testing.assert_array_equal(out.outputs["out"], exact)


def _with_formats(prog: dict[str, Any], formats: dict[int, str]) -> dict[str, Any]:
    """``prog`` with the CBs of ``formats`` (index -> format) and their buffers in that format."""
    names = {0: "x", 1: "y", 16: "out"}
    for cb in prog["cbs"]:
        if cb["index"] in formats:
            cb.update(format=formats[cb["index"]], page_size=tile_bytes(formats[cb["index"]]))
    for b in prog["buffers"]:
        index = next(i for i, n in names.items() if n == b["name"])
        if index in formats:
            b["format"] = formats[index]
    return prog


def test_bcast_of_a_float32_tile_unpacks_to_dest_keeping_all_32_bits(run: Runner) -> None:
    """bcast.h@00b0fa3f: 32-bit formats go through unpack-to-dest (A2D), not the 19-bit SrcB."""
    x = _f32_input()[:, :32].copy()
    x[:, 0] = 1.0 + 2.0**-12  # below TF32's 10 mantissa bits
    out = run("tile_ops", {"x": x, "y": x}, program=_tile_ops_program(5, fp32_dest_acc_en=True)).outputs["out"]
    np.testing.assert_array_equal(out, np.repeat(x[:, :1], 32, axis=1))


def test_bcast_of_a_bf16_tile_goes_through_srcb(run: Runner) -> None:
    """bcast.h@00b0fa3f: non-32-bit formats are broadcast through SrcB (B2D), which holds
    bf16 exactly; SrcA's format does not matter."""
    x = to_bf16(np.random.default_rng(30).standard_normal((32, 32)))
    prog = _with_formats(_tile_ops_program(5, fp32_dest_acc_en=False), {0: "Float16_b", 1: "Float16_b"})
    out = run("tile_ops", {"x": x, "y": x}, program=prog).outputs["out"]
    np.testing.assert_array_equal(out, np.repeat(x[:, :1], 32, axis=1))


def test_bcast_of_a_bf16_tile_needs_srcb_configured_for_its_format(run: Runner) -> None:
    """The start-up configured SrcA for x (bf16) and SrcB for y (Float32): a B2D broadcast of
    x reads SrcB's format."""
    x = to_bf16(np.random.default_rng(31).standard_normal((32, 32)))
    prog = _with_formats(_tile_ops_program(5, fp32_dest_acc_en=False), {0: "Float16_b"})
    with pytest.raises(ProtocolError, match=r"unary_bcast\(cb=0, Float16_b\): SrcB is configured for Float32"):
        run("tile_ops", {"x": x, "y": x}, program=prog)


def test_bcast_of_a_float32_tile_needs_srca_configured_for_its_format(run: Runner) -> None:
    """An A2D broadcast of y (Float32) unpacks through SrcA's unpacker, configured for x (bf16)."""
    x = to_bf16(np.random.default_rng(32).standard_normal((32, 32)))
    prog = _with_formats(_tile_ops_program(43, fp32_dest_acc_en=True), {0: "Float16_b"})
    with pytest.raises(ProtocolError, match=r"unary_bcast\(cb=1, Float32\): SrcA is configured for Float16_b"):
        run("tile_ops", {"x": x, "y": x}, program=prog)


def test_bcast_of_a_float32_tile_into_a_16_bit_dst_is_a_protocol_error(run: Runner) -> None:
    x = _f32_input()[:, :32].copy()
    with pytest.raises(ProtocolError, match=r"unary_bcast\(cb=0\): a 32-bit input unpacks straight to DST"):
        run("tile_ops", {"x": x, "y": x}, program=_tile_ops_program(5, fp32_dest_acc_en=False))


def _face_row_scaler(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A scaler tile whose first row of each face holds distinct bf16 values and every other
    row holds garbage, and the (face, column-in-face) table of those values."""
    rng = np.random.default_rng(seed)
    y = np.full((32, 32), 7.0, dtype=np.float32)
    table = to_bf16(rng.uniform(0.25, 2.0, size=(2, 2, 16)))
    for fr in range(2):
        for fc in range(2):
            y[16 * fr, 16 * fc : 16 * fc + 16] = table[fr, fc]
    return y, table.astype(np.float64)


def test_reduce_reads_the_scaler_from_the_first_row_of_each_face(run: Runner) -> None:
    """reduce.h@0112bb1e: the scaler CB's first row of each face; input element (r, c) is
    weighted by its face's scaler row at the reduced index within the face."""
    x = to_bf16(np.random.default_rng(21).standard_normal((32, 32))).astype(np.float64)
    y, s = _face_row_scaler(22)
    w_row = np.array([[s[r // 16, c // 16, c % 16] for c in range(32)] for r in range(32)])
    w_col = np.array([[s[r // 16, c // 16, r % 16] for c in range(32)] for r in range(32)])
    col_sums = (x * w_col).sum(axis=0)
    s00 = s[0, 0, 0]
    expected = {  # code: (dim, per-face-row reading, element-(0, 0) reading)
        2: ("row", (x * w_row).sum(axis=1), x.sum(axis=1) * s00),
        3: ("col", col_sums, x.sum(axis=0) * s00),
        # REDUCE_SCALAR applies the scaler in both passes (columns, then the row of sums).
        4: ("scalar", np.array([(col_sums * w_row[0]).sum()]), np.array([x.sum() * s00 * s00])),
    }
    for code, (dim, ref, element_00) in expected.items():
        out = run("tile_ops", {"x": x, "y": y}, program=_tile_ops_program(code)).outputs["out"]
        got = {"row": out[:, 0], "col": out[0, :], "scalar": out[:1, 0]}[dim]
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5, err_msg=f"REDUCE_{dim.upper()}")
        assert not np.allclose(got, element_00, rtol=1e-3)


@pytest.mark.parametrize(("code", "dim"), [(2, "row"), (3, "col"), (4, "scalar")])
def test_reduce_ignores_the_scaler_outside_the_first_row_of_each_face(run: Runner, code: int, dim: str) -> None:
    """reduce.h@0112bb1e: only the first row of each scaler face is read, so what the other
    rows hold (zero as the generated readers write it, or anything) changes nothing."""
    x = to_bf16(np.random.default_rng(24).standard_normal((32, 32)))
    clean, _ = _face_row_scaler(25)
    clean[np.arange(32) % 16 != 0, :] = 0.0
    noisy = clean.copy()
    noisy[np.arange(32) % 16 != 0, :] = to_bf16(np.random.default_rng(26).uniform(-4.0, 4.0, size=(30, 32)))
    outs = [run("tile_ops", {"x": x, "y": y}, program=_tile_ops_program(code)).outputs["out"] for y in (clean, noisy)]
    np.testing.assert_array_equal(outs[1], outs[0], err_msg=f"REDUCE_{dim.upper()}")


FIDELITIES = ("LoFi", "HiFi2", "HiFi3", "HiFi4")


def _broadcast(y: np.ndarray, dim: str | None) -> np.ndarray:
    """B as an FPU binary broadcasts it (bcast.h@00b0fa3f)."""
    if dim == "row":
        return np.repeat(y[:1, :], 32, axis=0)
    if dim == "col":
        return np.repeat(y[:, :1], 32, axis=1)
    if dim == "scalar":
        return np.full_like(y, y[0, 0])
    return y


# tile_ops code, the op and B's broadcast of each FPU binary form.
_FPU_ADD_SUB = {
    "add_tiles": (26, np.add, None),
    "sub_tiles": (24, np.subtract, None),
    "add_tiles_bcast_rows": (32, np.add, "row"),
    "add_tiles_bcast_cols": (33, np.add, "col"),
    "add_tiles_bcast_scalar": (34, np.add, "scalar"),
    "sub_tiles_bcast_rows": (35, np.subtract, "row"),
    "sub_tiles_bcast_cols": (36, np.subtract, "col"),
    "sub_tiles_bcast_scalar": (37, np.subtract, "scalar"),
    "any_tiles_bcast<ELWADD, COL>": (41, np.add, "col"),
}
_FPU_MUL = {
    "mul_tiles": (25, None),
    "mul_tiles_bcast_rows": (38, "row"),
    "mul_tiles_bcast_cols": (39, "col"),
    "mul_tiles_bcast_scalar": (40, "scalar"),
    "any_tiles_bcast<ELWMUL, ROW>": (42, "row"),
}


def _srca_srcb_operands() -> tuple[np.ndarray, np.ndarray]:
    """Float32 operands that pass SrcA/SrcB unchanged (TF32) and have mantissa bits below the
    4 (SrcA) and 6 (SrcB) high bits LoFi's multiplier pass sees."""
    rng = np.random.default_rng(23)
    x = to_tf32(rng.standard_normal((32, 32)).astype(np.float32), "truncate")
    y = to_tf32(rng.standard_normal((32, 32)).astype(np.float32), "truncate")
    assert np.any(round_mantissa(x, 4, "truncate") != x) and np.any(round_mantissa(y, 6, "truncate") != y)
    return x, y


def _fidelity_product(a: np.ndarray, b: np.ndarray, fidelity: str) -> np.ndarray:
    """SrcA a times SrcB b as the fidelity passes form it (NUMERICS.md "Math fidelity")."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ah, bh = round_mantissa(a, 4, "truncate").astype(np.float64), round_mantissa(b, 6, "truncate").astype(np.float64)
    product = {
        "LoFi": ah * bh,
        "HiFi2": a64 * bh,
        "HiFi3": a64 * bh + ah * (b64 - bh),
        "HiFi4": a64 * b64,
    }[fidelity]
    return product.astype(np.float32)


@pytest.mark.parametrize("fidelity", FIDELITIES)
@pytest.mark.parametrize("form", list(_FPU_ADD_SUB))
def test_fpu_add_and_sub_run_at_lofi_whatever_the_configured_fidelity(run: Runner, form: str, fidelity: str) -> None:
    """eltwise_binary.h@00b0fa3f and any_tiles_bcast (bcast.h@00b0fa3f): add/sub run at LoFi,
    one pass of the adder over the whole SrcA/SrcB values, so every configured fidelity gives
    the exact sum; a pass per phase of the configured fidelity would add it again."""
    code, op, dim = _FPU_ADD_SUB[form]
    x, y = _srca_srcb_operands()
    out = run("tile_ops", {"x": x, "y": y}, program=_tile_ops_program(code, math_fidelity=fidelity)).outputs["out"]
    np.testing.assert_array_equal(out, op(x, _broadcast(y, dim)))


@pytest.mark.parametrize("fidelity", FIDELITIES)
@pytest.mark.parametrize("form", list(_FPU_MUL))
def test_fpu_mul_runs_at_the_configured_fidelity(run: Runner, form: str, fidelity: str) -> None:
    """mul_tiles and the MUL broadcast forms use MATH_FIDELITY: on the same operands as the add
    test, each fidelity keeps a different part of the product (LoFi drops the low bits)."""
    code, dim = _FPU_MUL[form]
    x, y = _srca_srcb_operands()
    out = run("tile_ops", {"x": x, "y": y}, program=_tile_ops_program(code, math_fidelity=fidelity)).outputs["out"]
    b = _broadcast(y, dim)
    np.testing.assert_array_equal(out, _fidelity_product(x, b, fidelity))
    if fidelity != "HiFi4":
        assert np.any(out != _fidelity_product(x, b, "HiFi4"))
