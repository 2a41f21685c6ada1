"""Each protocol violation and an unsatisfiable wait is reported with the call,
kernel, CB and counts, as a typed error and within a short time."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from device_helpers import Runner, load_fixture_program, set_ct_args

from ttlgen.device import ConfigError, DeadlockError, DeviceTimeoutError, ProtocolError

pytestmark = pytest.mark.device


def _x(tiles: int = 2) -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(1).standard_normal((32, 32 * tiles)).astype(np.float32)}


def test_pop_beyond_waited_names_call_cb_and_counts(run: Runner) -> None:
    with pytest.raises(
        ProtocolError, match=r"compute: cb_pop_front\(cb=0, 2 pages\): only 1 pages were waited"
    ):
        run("violation_pop_unwaited", _x())


def test_push_beyond_reserved_names_call_cb_and_counts(run: Runner) -> None:
    with pytest.raises(
        ProtocolError, match=r"compute: cb_push_back\(cb=16, 2 pages\): only 1 pages were reserved"
    ):
        run("violation_push_unreserved", _x())


def test_math_without_acquire_is_reported(run: Runner) -> None:
    with pytest.raises(
        ProtocolError, match=r"copy_tile\(dst=0\): math uses DST without tile_regs_acquire"
    ):
        run("violation_math_without_acquire", _x(1))


def test_pack_without_wait_is_reported(run: Runner) -> None:
    with pytest.raises(
        ProtocolError, match=r"pack_tile\(dst=0, cb=16\): pack reads DST without tile_regs_wait"
    ):
        run("violation_pack_without_wait", _x(1))


def test_l1_acc_left_on_at_kernel_end_is_reported(run: Runner) -> None:
    with pytest.raises(
        ProtocolError, match=r"L1 accumulation left enabled at the end of the compute kernel"
    ):
        run("violation_l1_acc_left_on", _x(4))


def test_unsatisfiable_wait_is_a_deadlock_naming_kernel_cb_and_counts(run: Runner) -> None:
    start = time.monotonic()
    with pytest.raises(DeadlockError) as err:
        run("deadlock", _x(), timeout_s=30.0)
    assert time.monotonic() - start < 20.0  # found by the runtime, not by the timeout
    msg = str(err.value)
    assert "compute blocked in cb_wait_front(cb=0, 3 pages): 2 of 4 pages available" in msg
    assert "reader finished" in msg
    assert "writer blocked in cb_wait_front(cb=16, 1 pages)" in msg


# (fp32_dest_acc_en, dst_full_sync_en) -> DST tiles usable per acquire
CAPACITY = {(False, True): 16, (False, False): 8, (True, True): 8, (True, False): 4}


def _copy_with_dst_index(fp32: bool, full_sync: bool, dst_index: int) -> dict[str, Any]:
    prog = load_fixture_program("copy")
    prog["compute_config"].update(fp32_dest_acc_en=fp32, dst_full_sync_en=full_sync)
    if not fp32:  # a 16-bit DST cannot take f32 data through the default path cleanly; use bf16 CBs
        for cb in prog["cbs"]:
            cb.update(format="Float16_b", page_size=2048)
        for b in prog["buffers"]:
            b["format"] = "Float16_b"
    set_ct_args(prog, [2, dst_index], ("compute",))
    return prog


@pytest.mark.parametrize(("fp32", "full_sync"), list(CAPACITY))
def test_dst_index_beyond_capacity_is_reported(run: Runner, fp32: bool, full_sync: bool) -> None:
    cap = CAPACITY[(fp32, full_sync)]
    with pytest.raises(
        ProtocolError, match=rf"copy_tile: DST index {cap} beyond capacity {cap} tiles"
    ):
        run("copy", _x(), program=_copy_with_dst_index(fp32, full_sync, cap))


@pytest.mark.parametrize(("fp32", "full_sync"), list(CAPACITY))
def test_last_dst_index_within_capacity_is_accepted(
    run: Runner, fp32: bool, full_sync: bool
) -> None:
    cap = CAPACITY[(fp32, full_sync)]
    x = _x()
    out = run("copy", x, program=_copy_with_dst_index(fp32, full_sync, cap - 1)).outputs["out"]
    np.testing.assert_array_equal(np.isnan(out), False)


def test_fpu_read_of_unpack_to_dest_cb_is_reported(run: Runner) -> None:
    prog = load_fixture_program("eltwise_add")
    for cb in prog["cbs"]:
        cb.update(format="Float32", page_size=4096)
    for b in prog["buffers"]:
        b["format"] = "Float32"
    prog["compute_config"].update(fp32_dest_acc_en=True, unpack_to_dest_mode=["UnpackToDestFp32"])
    rng = np.random.default_rng(2)
    inputs = {n: rng.standard_normal((64, 64)).astype(np.float32) for n in ("a", "b")}
    with pytest.raises(
        ProtocolError, match=r"add_tiles\(cb=0\): CB 0 is configured UnpackToDestFp32"
    ):
        run("eltwise_add", inputs, program=prog)


def test_unpack_to_dest_without_fp32_dest_is_a_config_error(run: Runner) -> None:
    prog = load_fixture_program("copy")
    prog["compute_config"].update(fp32_dest_acc_en=False, unpack_to_dest_mode=["UnpackToDestFp32"])
    with pytest.raises(
        ConfigError, match=r"CB 0 is UnpackToDestFp32 but fp32_dest_acc_en is false"
    ):
        run("copy", _x(), program=prog)


def _tile_ops(op: int, x_format: str, y_format: str, fp32_dest: bool) -> dict[str, Any]:
    prog = load_fixture_program("tile_ops")
    fmts = {0: x_format, 1: y_format, 16: "Float32"}
    for cb in prog["cbs"]:
        f = fmts[cb["index"]]
        cb.update(format=f, page_size=4096 if f == "Float32" else 2048)
    for b in prog["buffers"]:
        b["format"] = {"x": x_format, "y": y_format, "out": "Float32"}[b["name"]]
    prog["compute_config"]["fp32_dest_acc_en"] = fp32_dest
    prog["kernels"]["compute"]["runtime_args"] = [op]
    return prog


def _xy() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {n: rng.standard_normal((32, 32)).astype(np.float32) for n in ("x", "y")}


def test_unpack_of_cb_in_other_format_than_configured_is_reported(run: Runner) -> None:
    # op 17 copies x (configured SrcA, Float32) and then y (Float16_b) without reconfig_data_format
    with pytest.raises(
        ProtocolError,
        match=r"copy_tile\(cb=1, Float16_b\): SrcA is configured for Float32 \(CB 0\)",
    ):
        run("tile_ops", _xy(), program=_tile_ops(17, "Float32", "Float16_b", True))


def test_broadcast_of_16bit_input_with_fp32_dest_is_reported(run: Runner) -> None:
    with pytest.raises(
        ProtocolError, match=r"unary_bcast\(cb=0\): a 16-bit input with fp32_dest_acc_en"
    ):
        run("tile_ops", _xy(), program=_tile_ops(5, "Float16_b", "Float16_b", True))


def test_kernel_spinning_outside_the_api_is_a_timeout_not_a_hang(run: Runner) -> None:
    start = time.monotonic()
    with pytest.raises(
        DeviceTimeoutError,
        match=r"reader running \(not in a CB wait\); compute blocked in cb_wait_front",
    ):
        run("timeout_spin", _x(), timeout_s=1.0)
    assert time.monotonic() - start < 10.0


def test_l1_accumulation_into_block_float_cb_is_reported(run: Runner) -> None:
    prog = load_fixture_program("l1_acc_sum")
    for cb in prog["cbs"]:
        if cb["index"] == 16:
            cb.update(format="Bfp8_b", page_size=1088)
    for b in prog["buffers"]:
        if b["name"] == "out":
            b["format"] = "Bfp8_b"
    with pytest.raises(
        ProtocolError, match=r"L1 accumulation is not valid for a block-float \(Bfp8_b\) output CB"
    ):
        run("l1_acc_sum", _x(4), program=prog)
