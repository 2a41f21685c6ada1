"""Which rounding steps of bf16 K accumulation explain the hardware calibration rows?

Each candidate mechanism states where and how a matmul's K accumulation is rounded on a
16-bit DST (fp32_dest_acc_en off, HiFi4, bf16 operands, bf16 output): how the FPU adds
the 32 products of one K tile, how the result lands in DST, and how the packer's L1
accumulation narrows its sum. No candidate has a constant that depends on K or on a row.
The study runs every candidate over the rows of ``ttlgen/device/calibration/
hardware_accuracy.json`` on the same inputs ``ttlgen accuracy`` draws (seeded standard
normal, rounded to bf16) and prints mean_abs, max_abs and 1 - PCC per row and candidate,
with the ratio to hardware and whether the row meets the calibration targets.

    python tests/device/numerics_study.py [--seeds N] [--json]

The emulator implements the chosen candidate (``CHOSEN``); ``test_numerics`` checks that
the emulator's output equals this model's bit for bit.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ttlgen.device.calibration import HardwareRow, load_calibration, ratios
from ttlgen.run import compare

F64 = npt.NDArray[np.float64]
Mode = Literal["ties_away", "nearest_even", "truncate"]
TF32, BF16, FP32 = 10, 7, 23


def round_bits(x: F64, keep: int, mode: Mode) -> F64:
    """Round finite float64 values to ``keep`` explicit mantissa bits (sign-magnitude)."""
    u = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
    drop = 52 - keep
    mask = np.uint64((1 << drop) - 1)
    rem, base = u & mask, u & ~mask
    half = np.uint64(1 << (drop - 1))
    if mode == "truncate":
        up = np.zeros(u.shape, dtype=bool)
    elif mode == "ties_away":
        up = rem >= half
    else:
        odd = ((base >> np.uint64(drop)) & np.uint64(1)) == 1
        up = (rem > half) | ((rem == half) & odd)
    out: F64 = np.where(up, base + np.uint64(1 << drop), base).view(np.float64)
    return out


@dataclass(frozen=True)
class Mechanism:
    """Where and how the K accumulation of a 16-bit-DST matmul is rounded."""

    name: str
    where: str
    #: products the FPU adds before the sum lands in DST (32: one K tile; 16: one face)
    chunk: int = 32
    #: "exact" (float64), "fp32" (each add rounded to fp32, RNE) or "tf32" (each add
    #: formed in fp32 and then rounded to TF32 with ``acc_mode``)
    accumulate: Literal["exact", "fp32", "tf32"] = "tf32"
    acc_mode: Mode = "ties_away"
    #: "dst": the chain starts at DST's value; "zero": the products are summed first and
    #: the sum is added to DST
    start: Literal["dst", "zero"] = "dst"
    order: Literal["sequential", "tree"] = "sequential"
    #: narrowing of the landed sum into DST: (mantissa bits, mode) steps; () keeps TF32
    land: tuple[tuple[int, Mode], ...] = ((BF16, "ties_away"),)
    #: rounding of the packer's L1 sum (and of DST -> bf16 when DST is wider than bf16)
    pack: Mode = "nearest_even"


CANDIDATES: tuple[Mechanism, ...] = (
    Mechanism(
        "face16_fp32_l1away",
        "previous default: 16 products summed in fp32 per face, added to DST, TF32 then bf16 "
        "ties-away per face; packer L1 add ties-away",
        chunk=16, accumulate="fp32", start="zero", land=((TF32, "ties_away"), (BF16, "ties_away")),
        pack="ties_away",
    ),
    Mechanism(
        "face16_fp32",
        "as face16_fp32_l1away with an RNE packer",
        chunk=16, accumulate="fp32", start="zero", land=((TF32, "ties_away"), (BF16, "ties_away")),
    ),
    Mechanism(
        "face16_exact_rne",
        "16 products summed exactly per face, added to DST and rounded once to bf16 RNE",
        chunk=16, accumulate="exact", start="zero", land=((BF16, "nearest_even"),),
    ),
    Mechanism(
        "tile_exact_rne",
        "32 products of a K tile summed exactly, added to DST, rounded once to bf16 RNE",
        accumulate="exact", start="zero", land=((BF16, "nearest_even"),),
    ),
    Mechanism(
        "tile_exact_tf32_away",
        "32 products summed exactly, added to DST, TF32 then bf16, both ties-away",
        accumulate="exact", start="zero", land=((TF32, "ties_away"), (BF16, "ties_away")),
    ),
    Mechanism(
        "tf32_chain",
        "each of a K tile's 32 products is added onto DST's value in fp32 and the sum is "
        "rounded to TF32 ties-away; the K tile's result lands in DST as bf16 ties-away; the "
        "packer adds L1 + DST exactly and rounds to bf16 RNE",
    ),
    Mechanism("tf32_chain_l1away", "tf32_chain with a ties-away packer", pack="ties_away"),
    Mechanism("tf32_chain_l1trunc", "tf32_chain with a truncating packer", pack="truncate"),
    Mechanism(
        "tf32_chain_face16",
        "tf32_chain, landing in DST as bf16 after each 16 products (one face per instruction)",
        chunk=16,
    ),
    Mechanism(
        "tf32_chain_from_zero",
        "the 32 products chained at TF32 from zero, then added to DST (TF32, bf16 ties-away)",
        start="zero", land=((TF32, "ties_away"), (BF16, "ties_away")),
    ),
    Mechanism(
        "tf32_tree",
        "the 32 products summed pairwise at TF32 ties-away, then added to DST (TF32, bf16)",
        start="zero", order="tree", land=((TF32, "ties_away"), (BF16, "ties_away")),
    ),
    Mechanism(
        "tf32_chain_rne",
        "tf32_chain with round-to-nearest-even at the TF32 and bf16 steps",
        acc_mode="nearest_even", land=((BF16, "nearest_even"),),
    ),
    Mechanism(
        "tf32_chain_trunc",
        "tf32_chain with truncation at the TF32 steps",
        acc_mode="truncate",
    ),
    Mechanism(
        "dst_keeps_tf32",
        "tf32_chain, but DST keeps the TF32 sum; only the packer narrows to bf16 (RNE)",
        land=(),
    ),
)
CHOSEN = "tf32_chain"


def inputs(k: int, block: int, seed: int) -> tuple[F64, F64]:
    """The operands `ttlgen accuracy` draws for (K, block, seed), as the device holds them."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((block * 32, k * 32)).astype(np.float32)
    b = rng.standard_normal((k * 32, block * 32)).astype(np.float32)
    return (
        round_bits(a.astype(np.float64), BF16, "nearest_even"),
        round_bits(b.astype(np.float64), BF16, "nearest_even"),
    )


def _adder(m: Mechanism) -> Callable[[F64, F64], F64]:
    if m.accumulate == "exact":
        return lambda s, p: s + p
    if m.accumulate == "fp32":
        return lambda s, p: (s + p).astype(np.float32).astype(np.float64)
    # The sum formed in fp32 (one RNE rounding: an FMA, the product being exact), then TF32.
    return lambda s, p: round_bits((s + p).astype(np.float32).astype(np.float64), TF32, m.acc_mode)


def _land(m: Mechanism, x: F64) -> F64:
    for bits, mode in m.land:
        x = round_bits(x, bits, mode)
    return x


def k_step(m: Mechanism, dst: F64, a: F64, b: F64) -> F64:
    """DST after one matmul K tile (a: [M, 32], b: [32, N]) lands on it."""
    add = _adder(m)
    for c0 in range(0, 32, m.chunk):
        products = [np.multiply.outer(a[:, j], b[j, :]) for j in range(c0, c0 + m.chunk)]
        if m.order == "tree":
            while len(products) > 1:
                products = [add(products[i], products[i + 1]) for i in range(0, len(products), 2)]
            dst = _land(m, add(dst, products[0]))
            continue
        s = dst if m.start == "dst" else np.zeros_like(dst)
        for p in products:
            s = add(s, p)
        dst = _land(m, s if m.start == "dst" else add(dst, s))
    return dst


def pack_bf16(m: Mechanism, dst: F64) -> F64:
    return round_bits(dst, BF16, m.pack)


def simulate(m: Mechanism, method: str, a: F64, b: F64) -> F64:
    """The bf16 output of the l1_acc or dst_roundtrip kernel over all K tiles of a @ b."""
    k_tiles = a.shape[1] // 32
    zero = np.zeros((a.shape[0], b.shape[1]))
    tiles = [(a[:, 32 * k : 32 * k + 32], b[32 * k : 32 * k + 32, :]) for k in range(k_tiles)]
    if method == "l1_acc":
        acc: F64 | None = None
        for ak, bk in tiles:
            dst = k_step(m, zero, ak, bk)
            # The first pack overwrites; later ones add the DST value to L1 exactly and
            # narrow the sum once.
            acc = pack_bf16(m, dst) if acc is None else round_bits(acc + dst, BF16, m.pack)
        assert acc is not None
        return acc
    if method == "dst_roundtrip":
        partial = zero
        for ak, bk in tiles:
            # copy_tile brings the bf16 partial back into DST exactly; the matmul adds to it
            partial = pack_bf16(m, k_step(m, partial, ak, bk))
        return partial
    raise ValueError(f"unknown method {method!r}")


@dataclass(frozen=True)
class Result:
    mechanism: str
    method: str
    k: int
    block: int
    mean_abs: float
    max_abs: float
    one_minus_pcc: float
    mean_ratio: float
    max_ratio: float
    one_minus_pcc_ratio: float
    within_targets: bool


def study(m: Mechanism, rows: tuple[HardwareRow, ...], seeds: range) -> list[Result]:
    out = []
    for hw in rows:
        metrics = []
        for seed in seeds:
            a, b = inputs(hw.k, hw.block, seed)
            metrics.append(compare(simulate(m, hw.method, a, b), a @ b))
        mean = float(np.mean([x.mean_abs for x in metrics]))
        peak = float(np.mean([x.max_abs for x in metrics]))
        pcc = float(np.mean([x.pcc for x in metrics]))
        r = ratios(peak, mean, pcc, hw)
        out.append(
            Result(m.name, hw.method, hw.k, hw.block, mean, peak, 1.0 - pcc,
                   r.mean_abs, r.max_abs, r.one_minus_pcc, r.within_targets())
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=4, help="seeds 0..N-1 per row (default 4)")
    parser.add_argument("--json", action="store_true", help="print every number as JSON")
    args = parser.parse_args(argv)
    calibration = load_calibration()
    results = {m.name: study(m, calibration.rows, range(args.seeds)) for m in CANDIDATES}
    if args.json:
        print(json.dumps({name: [asdict(r) for r in rs] for name, rs in results.items()}, indent=1))
        return 0
    print(f"hardware: {calibration.source}")
    print(f"seeds 0..{args.seeds - 1}; ratio = emulated / hardware (mean_abs, max_abs, 1-pcc); * = outside the targets\n")
    for m in CANDIDATES:
        rs = results[m.name]
        verdict = "fits" if all(r.within_targets for r in rs) else "rejected"
        print(f"{m.name}{' (chosen)' if m.name == CHOSEN else ''}: {verdict}\n  {m.where}")
        for r in rs:
            flag = " " if r.within_targets else "*"
            print(
                f" {flag} {r.method:<14} K={r.k:<3} mean_abs={r.mean_abs:.4f} ({r.mean_ratio:4.2f})"
                f"  max_abs={r.max_abs:.3f} ({r.max_ratio:4.2f})"
                f"  1-pcc={r.one_minus_pcc:.3e} ({r.one_minus_pcc_ratio:4.2f})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
