"""Host-side formats: tile/face layout and rounding modes (pure Python)."""

from __future__ import annotations

import numpy as np
import pytest

from ttlgen.device.formats import (
    bfp8_quantize,
    bfp8_values,
    decode,
    encode,
    round_mantissa,
    tilize,
    to_bf16,
    untilize,
)


def test_tilize_orders_faces_then_face_rows() -> None:
    a = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)  # 2x1 tiles
    flat = tilize(a)
    assert flat[0:16].tolist() == a[0, 0:16].tolist()  # face 0, row 0
    assert flat[16:32].tolist() == a[1, 0:16].tolist()  # face 0, row 1
    assert flat[256:272].tolist() == a[0, 16:32].tolist()  # face 1, row 0
    assert flat[512:528].tolist() == a[16, 0:16].tolist()  # face 2, row 0
    assert flat[1024:1040].tolist() == a[32, 0:16].tolist()  # second tile


def test_untilize_inverts_tilize() -> None:
    a = np.random.default_rng(0).standard_normal((96, 64)).astype(np.float32)
    np.testing.assert_array_equal(untilize(tilize(a), 3, 2), a)


@pytest.mark.parametrize(
    ("value", "mode", "expected"),
    [
        (1.0 + 2.0**-8, "ties_away", 1.0 + 2.0**-7),
        (1.0 + 2.0**-8, "nearest_even", 1.0),
        (1.0 + 3 * 2.0**-8, "nearest_even", 1.0 + 2 * 2.0**-7),
        (-(1.0 + 2.0**-8), "ties_away", -(1.0 + 2.0**-7)),
        (1.0 + 2.0**-7 - 2.0**-20, "truncate", 1.0),
    ],
)
def test_bf16_rounding_modes(value: float, mode: str, expected: float) -> None:
    assert float(round_mantissa(np.float32(value), 7, mode)) == expected  # type: ignore[arg-type]


def test_rounding_keeps_nan_and_inf() -> None:
    x = np.array([np.nan, np.inf, -np.inf], dtype=np.float32)
    r = to_bf16(x, "ties_away")
    assert np.isnan(r[0]) and r[1] == np.inf and r[2] == -np.inf


def test_bf16_bytes_roundtrip_exactly_for_bf16_values() -> None:
    a = to_bf16(np.random.default_rng(1).standard_normal((32, 64)))
    np.testing.assert_array_equal(decode(encode(a, "Float16_b"), "Float16_b", 1, 2), a)


def test_bfp8_group_shares_the_largest_exponent() -> None:
    group = np.array([1.5, -0.75, 2.0**-6, 2.0**-8, 3 * 2.0**-7] + [0.0] * 11, dtype=np.float32)
    exps, mants = bfp8_quantize(group, "nearest_even")
    assert exps.tolist() == [127]  # exponent of 1.5
    # steps of 2**-6: 2**-8 is a quarter step (rounds to 0); 3 * 2**-7 is 1.5 steps (tie, to even 2)
    assert bfp8_values(exps, mants)[:5].tolist() == [1.5, -0.75, 2.0**-6, 0.0, 2 * 2.0**-6]


def test_bfp8_bytes_roundtrip_through_encode_decode() -> None:
    a = np.random.default_rng(2).standard_normal((32, 64)).astype(np.float32)
    once = decode(encode(a, "Bfp8_b"), "Bfp8_b", 1, 2)
    np.testing.assert_array_equal(decode(encode(once, "Bfp8_b"), "Bfp8_b", 1, 2), once)
    assert np.max(np.abs(once - a)) <= np.max(np.abs(a)) * 2.0**-6
