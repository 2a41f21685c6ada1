"""Host-side tile formats: float <-> Float32 / Float16_b bytes and tilize/untilize.

Tiles are 32x32 and stored as four 16x16 faces (top-left, top-right,
bottom-left, bottom-right), each face row-major, as in L1 and DRAM on Tensix.
A buffer of ``rows x cols`` tiles stores its tiles row-major.

Bfp8_b (block float): each 16-element row of a face shares one 8-bit exponent;
a tile is 64 exponent bytes (group order = element order) followed by 1024
bytes of sign (bit 7) and a 7-bit magnitude m, value = m / 64 * 2**(exp - 127).
See NUMERICS.md for how values are rounded into it.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

Rounding = Literal["ties_away", "nearest_even", "truncate"]
Format = Literal["Float32", "Float16_b", "Bfp8_b"]

TILE = 32
FACE = 16
FORMATS: tuple[Format, ...] = ("Float32", "Float16_b", "Bfp8_b")
ROUNDINGS: tuple[Rounding, ...] = ("ties_away", "nearest_even", "truncate")

#: Bytes of a NaN pattern that is a quiet NaN read as Float16_b (0x7FC1) or
#: Float32 (0x7FC17FC1): poison for outputs and fresh L1.
POISON_BYTES = b"\xc1\x7f"

F32 = npt.NDArray[np.float32]


def tile_bytes(fmt: str) -> int:
    """Bytes of one 32x32 tile in ``fmt``."""
    if fmt == "Float32":
        return TILE * TILE * 4
    if fmt == "Float16_b":
        return TILE * TILE * 2
    if fmt == "Bfp8_b":
        return TILE * TILE + 64
    raise ValueError(f"unsupported format {fmt!r}; supported: {', '.join(FORMATS)}")


def round_mantissa(x: npt.ArrayLike, keep: int, mode: Rounding) -> F32:
    """Round float32 values to ``keep`` of 23 mantissa bits (sign-magnitude).

    NaN stays NaN and Inf stays Inf; overflow of the magnitude rounds to Inf.
    """
    if mode not in ROUNDINGS:
        raise ValueError(f"unknown rounding mode {mode!r}; expected one of {ROUNDINGS}")
    a = np.array(x, dtype=np.float32)  # a contiguous copy that keeps 0-d shapes
    u = a.view(np.uint32)
    drop = 23 - keep
    special = (u & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
    original = u[special] if special.any() else None
    # In place on the copy: add the rounding increment, then clear the dropped bits. A
    # carry out of the mantissa bumps the exponent, as rounding up must.
    if mode == "ties_away":
        u += np.uint32(1 << (drop - 1))
    elif mode == "nearest_even":
        u += np.uint32((1 << (drop - 1)) - 1) + ((u >> np.uint32(drop)) & np.uint32(1))
    u &= np.uint32(~((1 << drop) - 1) & 0xFFFFFFFF)
    if original is not None:
        # Inf keeps its bits; a NaN keeps its high payload and stays a (quiet) NaN.
        nan = (original & np.uint32(0x007FFFFF)) != 0
        kept = original & np.uint32(~((1 << drop) - 1) & 0xFFFFFFFF)
        u[special] = np.where(nan, kept | np.uint32(0x00400000), original)
    return a


def to_bf16(x: npt.ArrayLike, mode: Rounding = "nearest_even") -> F32:
    """Values of ``x`` rounded to bfloat16 precision, as float32."""
    return round_mantissa(x, 7, mode)


def to_tf32(x: npt.ArrayLike, mode: Rounding = "truncate") -> F32:
    """Values of ``x`` narrowed to the 19-bit SrcA/SrcB format (10 mantissa bits)."""
    return round_mantissa(x, 10, mode)


def _round_to_int(q: npt.NDArray[np.float64], mode: Rounding) -> npt.NDArray[np.float64]:
    if mode == "truncate":
        return np.floor(q)
    if mode == "ties_away":
        return np.floor(q + 0.5)
    if mode == "nearest_even":
        return np.rint(q)
    raise ValueError(f"unknown rounding mode {mode!r}; expected one of {ROUNDINGS}")


def bfp8_quantize(
    flat: npt.ArrayLike, mode: Rounding
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """Shared exponents (one per 16 values) and sign|magnitude bytes of Bfp8_b.

    ``flat`` is in tile/face order (length a multiple of 16). Magnitudes that
    round up to 128 are clamped to 127 (the exponent is shared and stays put).
    """
    v = np.asarray(flat, dtype=np.float32).reshape(-1, 16)
    exps = ((v.view(np.uint32) >> np.uint32(23)) & np.uint32(0xFF)).max(axis=1).astype(np.int64)
    scale = np.ldexp(1.0, (127 + 6 - exps))[:, None]
    m = np.minimum(_round_to_int(np.abs(v.astype(np.float64)) * scale, mode), 127).astype(np.uint8)
    sign = (np.signbit(v) & (m > 0)).astype(np.uint8) << np.uint8(7)
    return exps.astype(np.uint8), (sign | m).reshape(-1)


def bfp8_values(exps: npt.ArrayLike, mants: npt.ArrayLike) -> F32:
    """Float values of Bfp8_b exponent and sign|magnitude bytes (exact)."""
    e = np.asarray(exps, dtype=np.int64)
    b = np.asarray(mants, dtype=np.uint8).reshape(len(e), 16)
    mag = np.ldexp((b & 0x7F).astype(np.float64), (e - 127 - 6)[:, None])
    return np.where(b & 0x80, -mag, mag).astype(np.float32).reshape(-1)


def to_bfp8(a: npt.ArrayLike, mode: Rounding = "nearest_even") -> F32:
    """Values of a 2-D array (sides multiple of 32) after a round trip through Bfp8_b."""
    m = np.asarray(a, dtype=np.float32)
    exps, mants = bfp8_quantize(tilize(m), mode)
    return untilize(bfp8_values(exps, mants), m.shape[0] // TILE, m.shape[1] // TILE)


def tilize(a: npt.ArrayLike) -> F32:
    """2-D array (multiples of 32) -> flat float32 array in tile/face order."""
    m = np.asarray(a, dtype=np.float32)
    if m.ndim != 2 or m.shape[0] % TILE or m.shape[1] % TILE:
        raise ValueError(f"tilize needs a 2-D array with sides multiple of 32, got shape {m.shape}")
    rt, ct = m.shape[0] // TILE, m.shape[1] // TILE
    # axes: tile row, face row, row in face, tile col, face col, col in face
    t = m.reshape(rt, 2, FACE, ct, 2, FACE)
    return np.ascontiguousarray(t.transpose(0, 3, 1, 4, 2, 5)).reshape(-1)


def untilize(flat: npt.ArrayLike, rows_tiles: int, cols_tiles: int) -> F32:
    """Inverse of :func:`tilize` for a buffer of ``rows_tiles x cols_tiles`` tiles."""
    f = np.asarray(flat, dtype=np.float32).reshape(rows_tiles, cols_tiles, 2, 2, FACE, FACE)
    return np.ascontiguousarray(f.transpose(0, 2, 4, 1, 3, 5)).reshape(
        rows_tiles * TILE, cols_tiles * TILE
    )


def encode(a: npt.ArrayLike, fmt: str, rounding: Rounding = "nearest_even") -> bytes:
    """Tilize a 2-D array and convert it to ``fmt`` bytes (host-side rounding ``rounding``)."""
    flat = tilize(a)
    if fmt == "Float32":
        return flat.astype("<f4").tobytes()
    if fmt == "Float16_b":
        bits = to_bf16(flat, rounding).view(np.uint32) >> np.uint32(16)
        return bits.astype("<u2").tobytes()
    if fmt == "Bfp8_b":
        # Tile by tile, as decode reads them: the 64 exponents, then the 1024 sign|magnitudes.
        exps, mants = bfp8_quantize(flat, rounding)
        tiles = len(flat) // (TILE * TILE)
        return np.concatenate([exps.reshape(tiles, -1), mants.reshape(tiles, -1)], axis=1).tobytes()
    raise ValueError(f"unsupported format {fmt!r}; supported: {', '.join(FORMATS)}")


def decode(buf: bytes, fmt: str, rows_tiles: int, cols_tiles: int) -> F32:
    """Bytes of ``rows_tiles x cols_tiles`` tiles in ``fmt`` -> 2-D float32 array."""
    n = rows_tiles * cols_tiles * TILE * TILE
    if len(buf) != n * tile_bytes(fmt) // (TILE * TILE):
        raise ValueError(f"{len(buf)} bytes do not hold {rows_tiles}x{cols_tiles} {fmt} tiles")
    if fmt == "Float32":
        flat = np.frombuffer(buf, dtype="<f4").astype(np.float32)
    elif fmt == "Bfp8_b":
        tiles = np.frombuffer(buf, dtype=np.uint8).reshape(
            rows_tiles * cols_tiles, TILE * TILE + 64
        )
        flat = bfp8_values(tiles[:, :64].reshape(-1), tiles[:, 64:].reshape(-1))
    else:
        flat = (np.frombuffer(buf, dtype="<u2").astype(np.uint32) << np.uint32(16)).view(np.float32)
    return untilize(flat, rows_tiles, cols_tiles)
