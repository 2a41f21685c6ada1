"""The emulator records matmul calls and lands them in DST when DST is next touched
(runtime/matmul.cpp), sharing the landing with its helper thread. What a kernel computes
must not depend on that: not on where a batch of recorded calls ends, not on how a
subblock splits into calls, and not on what touches DST next."""

from __future__ import annotations

import numpy as np
import pytest
from device_helpers import Runner, matmul_inputs, matmul_program

pytestmark = pytest.mark.device


@pytest.mark.parametrize("fidelity", ["LoFi", "HiFi3", "HiFi4"])
@pytest.mark.parametrize("fp32_dest", [False, True])
def test_matmul_bits_do_not_depend_on_the_subblock_shape_or_on_batch_boundaries(
    run: Runner, fidelity: str, fp32_dest: bool
) -> None:
    # K = 50 with 2x4 subblocks (2x2 in a 32-bit DST, which holds 4 tiles) records 6 (4)
    # operand tiles a call, 300 (200) for the K loop: more than a batch holds (192), so each
    # tile's chain lands in two flushes; with 1x1 subblocks, 100 operand tiles land in one.
    mt, nt, kt = 2, 4, 50
    sub = (2, 2) if fp32_dest else (2, 4)
    inputs = matmul_inputs(mt, nt, kt, seed=21)
    config = {"math_fidelity": fidelity, "fp32_dest_acc_en": fp32_dest}
    block = run("matmul", inputs, program=matmul_program(mt, nt, kt, sub, out_format="Float32", **config))
    single = run("matmul", inputs, program=matmul_program(mt, nt, kt, (1, 1), out_format="Float32", **config))
    assert block.outputs["c"].tobytes() == single.outputs["c"].tobytes()


def test_an_sfpu_op_after_the_k_loop_sees_the_accumulated_sums(run: Runner) -> None:
    mt, nt, kt = 2, 4, 8
    inputs = matmul_inputs(mt, nt, kt, seed=22)
    plain = run("matmul", inputs, program=matmul_program(mt, nt, kt, (2, 4))).outputs["c"]
    negated = run("matmul", inputs, program=matmul_program(mt, nt, kt, (2, 4), negate=True)).outputs["c"]
    assert np.any(plain != 0)
    assert negated.tobytes() == (-plain).tobytes()
