"""Every compute call the emulator provides computes what tt-metal's does, checked
one op per test against float64 NumPy on bf16-representable data (fp32 DST and
Float32 CBs, so only fp32 arithmetic error remains)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from device_helpers import Runner, load_fixture_program

from ttlgen.device.formats import to_bf16

pytestmark = pytest.mark.device

F = np.ndarray


def _reduce_row(x: F, y: F) -> F:
    out = np.zeros((32, 32))
    out[:, 0] = x.sum(axis=1) * y[0, 0]
    return out


def _reduce_col(x: F, y: F) -> F:
    out = np.zeros((32, 32))
    out[0, :] = x.sum(axis=0) * y[0, 0]
    return out


def _reduce_scalar(x: F, y: F) -> F:
    # REDUCE_SCALAR reduces columns, then the row of column sums, applying the scaler in
    # both passes (upstream's AVG scaler for it is 1/sqrt(N)); NUMERICS.md "Reduce".
    out = np.zeros((32, 32))
    out[0, 0] = x.sum() * y[0, 0] * y[0, 0]
    return out


OPS: dict[str, tuple[int, Callable[[F, F], F]]] = {
    "copy": (0, lambda x, y: x),
    "transpose": (1, lambda x, y: x.T),
    "reduce_row": (2, _reduce_row),
    "reduce_col": (3, _reduce_col),
    "reduce_scalar": (4, _reduce_scalar),
    "bcast_col": (5, lambda x, y: np.repeat(x[:, :1], 32, axis=1)),
    "bcast_row": (6, lambda x, y: np.repeat(x[:1, :], 32, axis=0)),
    "bcast_scalar": (7, lambda x, y: np.full((32, 32), x[0, 0])),
    "exp": (8, lambda x, y: np.exp(x)),
    "log": (9, lambda x, y: np.log(x)),
    "sqrt": (10, lambda x, y: np.sqrt(x)),
    "rsqrt": (11, lambda x, y: 1 / np.sqrt(x)),
    "tanh": (12, lambda x, y: np.tanh(x)),
    "sigmoid": (13, lambda x, y: 1 / (1 + np.exp(-x))),
    "negative": (14, lambda x, y: -x),
    "abs": (15, lambda x, y: np.abs(x)),
    "relu": (16, lambda x, y: np.maximum(x, 0)),
    "add_binary_tile": (17, lambda x, y: x + y),
    "sub_binary_tile": (18, lambda x, y: x - y),
    "mul_binary_tile": (19, lambda x, y: x * y),
    "binary_max_tile": (20, lambda x, y: np.maximum(x, y)),
    "matmul_tiles": (21, lambda x, y: x @ y),
    "matmul_tiles_transpose": (22, lambda x, y: x @ y.T),
    "fill_tile": (23, lambda x, y: np.full((32, 32), 2.5)),
    "sub_tiles": (24, lambda x, y: x - y),
    "mul_tiles": (25, lambda x, y: x * y),
    "add_tiles": (26, lambda x, y: x + y),
    "div_binary_tile": (27, lambda x, y: x / y),
    "rsub_binary_tile": (28, lambda x, y: y - x),
    "add_tiles_bcast_rows": (32, lambda x, y: x + y[:1, :]),
    "add_tiles_bcast_cols": (33, lambda x, y: x + y[:, :1]),
    "add_tiles_bcast_scalar": (34, lambda x, y: x + y[0, 0]),
    "sub_tiles_bcast_rows": (35, lambda x, y: x - y[:1, :]),
    "sub_tiles_bcast_cols": (36, lambda x, y: x - y[:, :1]),
    "sub_tiles_bcast_scalar": (37, lambda x, y: x - y[0, 0]),
    "mul_tiles_bcast_rows": (38, lambda x, y: x * y[:1, :]),
    "mul_tiles_bcast_cols": (39, lambda x, y: x * y[:, :1]),
    "mul_tiles_bcast_scalar": (40, lambda x, y: x * y[0, 0]),
    "any_tiles_bcast_add_col": (41, lambda x, y: x + y[:, :1]),
    "any_tiles_bcast_mul_row": (42, lambda x, y: x * y[:1, :]),
}
POSITIVE_ONLY = {"log", "sqrt", "rsqrt"}
NONZERO_Y = {"div_binary_tile"}


@pytest.mark.parametrize("name", list(OPS))
def test_tile_op_matches_numpy(run: Runner, name: str) -> None:
    code, ref_fn = OPS[name]
    rng = np.random.default_rng(code)
    x = to_bf16(rng.standard_normal((32, 32)))
    y = to_bf16(rng.standard_normal((32, 32)))
    if name in POSITIVE_ONLY:
        x = to_bf16(np.abs(x) + 0.25)
    if name in NONZERO_Y:
        y = to_bf16(np.copysign(np.abs(y) + 0.25, y))
    if name.startswith("reduce"):
        y = np.full((32, 32), 0.5, dtype=np.float32)
    prog = load_fixture_program("tile_ops")
    prog["kernels"]["compute"]["runtime_args"] = [code]
    out = run("tile_ops", {"x": x, "y": y}, program=prog).outputs["out"]
    ref = ref_fn(x.astype(np.float64), y.astype(np.float64))
    np.testing.assert_allclose(
        out, ref, rtol=2e-6, atol=2e-5 * max(1.0, float(np.max(np.abs(ref))))
    )
