"""Resolve time of the kernel-configuration resolver library, against z3 on the same instances.

Kernels of 10, 100, 1,000 and 10,000 ops on Blackhole:
  mixed    fixed ops (copy, exp, reduce, matmul, transpose, stores) and add/sub/mul binaries
           over 8, 16, 32 and 64 dataflow buffers (bf16 and f32)
  chain    adversarial: binaries linked through shared f32 buffers into one long chain
           that only a fixed SFPU consumer at the very end decides, so every op's choice
           is forced backwards from the last op (a plain search recounts all ops per step)
  free     adversarial: every binary keeps both options (bf16), so the search must decide
           every op in turn

The resolver column times the whole `resolve()` call (requirement collection, search,
preferences, plan). The z3 column times only encoding and solving of the requirements the
resolver collected, as Booleans (32-bit DST, unpack-to-DST per buffer, FPU per op), and
reproduces the specified answer by fixing ops in walk order, FPU first when satisfiable,
then the width preference and the forced unpack set. Answers must be identical.

The resolver runs over the tables `ttlgen build` resolves kernels with (built from specs/).

Run: python bench/resolve.py [--runs N] [--sizes 10,100,1000,10000] [--no-z3]
Targets: 1,000 ops under 20 ms; growth per 10x ops at most 12x; faster than z3 at every size.
z3-solver is a bench-only dependency (the `bench` extra).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ttlgen import resolver as kc  # noqa: E402
from ttlgen.resolve import load_catalog  # noqa: E402
from ttlgen.resolver import collect, requirements, semantics  # noqa: E402
from ttlgen.resolver import resolver as engine  # noqa: E402


class Names:
    """The spec's element types, as the plan stage passes them (enum members)."""

    def __init__(self, catalog: kc.Catalog) -> None:
        elements = {e.name: e.name for e in catalog.tables.elements}
        self.F32 = elements["f32"]
        self.BF16 = elements["bf16"]


def mixed(types: Names, n: int, n_dfbs: int, rng: random.Random) -> kc.KernelDescription:
    f32 = [d for d in range(n_dfbs) if d % 2 == 0]
    bf16 = [d for d in range(n_dfbs) if d % 2 == 1]
    dfbs = {d: types.F32 if d in f32 else types.BF16 for d in range(n_dfbs)}
    # Every f32 buffer is read into DST by some op, so binaries reading it must use SFPU;
    # half of the binaries read only bf16 buffers and stay free to use FPU.
    ops: list[kc.TileOp] = []
    results: list[str] = []
    for i in range(n):
        roll = rng.random()
        op_id = f"op{i}"
        if roll < 0.45:
            pool = bf16 if rng.random() < 0.5 else f32
            a, b = rng.choice(pool), rng.choice(pool)
            tile = (0, 0) if rng.random() < 0.8 else (0, 1)
            ops.append(kc.TileOp(op_id, rng.choice(("tile_add", "tile_sub", "tile_mul")), (kc.DfbOperand(a), kc.DfbOperand(b, tile))))
        elif roll < 0.60 or i < len(f32):
            d = f32[i % len(f32)] if i < len(f32) else rng.choice(range(n_dfbs))
            ops.append(kc.TileOp(op_id, "tile_exp", (kc.DfbOperand(d),)))
        elif roll < 0.70:
            ops.append(kc.TileOp(op_id, "copy_tile", (kc.DfbOperand(rng.choice(range(n_dfbs))),)))
        elif roll < 0.78:
            ops.append(kc.TileOp(op_id, "tile_reduce", (kc.DfbOperand(rng.choice(bf16)), kc.DfbOperand(rng.choice(bf16))), attrs={"reduce_dim": "col"}))
        elif roll < 0.84:
            ops.append(kc.TileOp(op_id, "tile_matmul_block", (kc.DfbOperand(rng.choice(bf16)), kc.DfbOperand(rng.choice(bf16)))))
        elif roll < 0.88:
            ops.append(kc.TileOp(op_id, "tile_transpose", (kc.DfbOperand(rng.choice(bf16)),)))
        elif results:
            ops.append(kc.TileOp(op_id, "tile_store", (kc.ValueOperand(rng.choice(results)),)))
            continue
        else:
            ops.append(kc.TileOp(op_id, "copy_tile", (kc.DfbOperand(rng.choice(bf16)),)))
        results.append(op_id)
    return kc.KernelDescription(dfbs, tuple(ops))


def chain(types: Names, n: int, n_dfbs: int, rng: random.Random) -> kc.KernelDescription:
    del rng
    dfbs = {d: types.F32 for d in range(n_dfbs)}
    ops = [
        kc.TileOp(f"op{i}", "tile_add", (kc.DfbOperand((n_dfbs - 1 - i) % n_dfbs), kc.DfbOperand((n_dfbs - 2 - i) % n_dfbs)))
        for i in range(n - 1)
    ]
    ops.append(kc.TileOp("last", "tile_exp", (kc.DfbOperand(0),)))
    return kc.KernelDescription(dfbs, tuple(ops))


def free(types: Names, n: int, n_dfbs: int, rng: random.Random) -> kc.KernelDescription:
    dfbs = {d: types.BF16 for d in range(n_dfbs)}
    ops = [
        kc.TileOp(f"op{i}", "tile_mul", (kc.DfbOperand(rng.randrange(n_dfbs)), kc.DfbOperand(rng.randrange(n_dfbs))))
        for i in range(n)
    ]
    return kc.KernelDescription(dfbs, tuple(ops))


def z3_resolve(kernel: kc.KernelDescription, target: kc.TargetEnvironment, policy: kc.KernelConfigPolicy) -> tuple[Any, ...] | None:
    """The same answer from z3: strategies in walk order FPU-first, width preference, unpack set."""
    import z3

    collected = collect.collect(kernel, target, policy)
    s = z3.Solver()
    w32 = z3.Bool("w32")
    unpack: dict[int, Any] = {}

    def lit(internal: requirements.Req) -> list[Any]:
        req = requirements.requirement(internal)
        assert req is not None
        out = []
        if req.widths == 0:
            out.append(z3.BoolVal(False))
        elif req.widths == engine.W32:
            out.append(w32)
        elif req.widths == engine.W16:
            out.append(z3.Not(w32))
        if req.dfb is not None and req.modes != semantics.ALL_MODES:
            u = unpack.setdefault(req.dfb, z3.Bool(f"u{req.dfb}"))
            out.append(u if req.modes == engine.M_UNPACK else z3.Not(u) if req.modes == engine.M_DEFAULT else z3.BoolVal(False))
        return out

    for req in collected.fixed:
        s.add(*lit(req))
    sfpu: list[Any] = []
    for i, op in enumerate(collected.search):
        g = z3.Bool(f"s{i}")  # true: SFPU (z3 prefers false, i.e. FPU, when free)
        sfpu.append(g)
        assert len(op.options) == 2
        s.add(z3.Implies(z3.Not(g), z3.And(*lit_all(lit, op.requirements(0)))))
        s.add(z3.Implies(g, z3.And(*lit_all(lit, op.requirements(1)))))
    if s.check() != z3.sat:
        return None
    # Walk order, FPU first: keep the current model while it already picks FPU; ask z3
    # only where it does not. Every kept model satisfies all choices made so far.
    model = s.model()
    chosen = []
    for g in sfpu:
        if z3.is_true(model.eval(g, model_completion=True)):
            if s.check(z3.Not(g)) == z3.sat:
                model = s.model()
                s.add(z3.Not(g))
                chosen.append("fpu")
            else:
                s.add(g)
                chosen.append("sfpu")
        else:
            s.add(z3.Not(g))
            chosen.append("fpu")
    wants32 = any(
        target.full_fp32(kind).supported for _, kind in collected.fp32_ops
    )
    can32 = s.check(w32) == z3.sat
    can16 = s.check(z3.Not(w32)) == z3.sat
    width = 32 if (wants32 and can32) or not can16 else 16
    forced = sorted(d for d, u in unpack.items() if s.check(z3.Not(u)) == z3.unsat)
    return tuple(chosen), width, tuple(forced)


def lit_all(lit: Any, reqs: list[requirements.Req]) -> list[Any]:
    """z3 literals of a list of the resolver's internal requirements."""
    out: list[Any] = []
    for req in reqs:
        out.extend(lit(req))
    return out


def answer(plan: kc.Plan, collected_search: list[requirements.SearchOp]) -> tuple[Any, ...]:
    strategies = {op_id: str(s) for op_id, s in plan.strategies}
    return tuple(strategies[op.op] for op in collected_search), int(plan.dest_width), plan.unpack_to_dest_fp32


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--no-z3", action="store_true")
    args = parser.parse_args()
    catalog = load_catalog(REPO / "specs")
    names = Names(catalog)
    target = catalog.get_target("blackhole")
    policy = kc.KernelConfigPolicy()
    sizes = [int(s) for s in args.sizes.split(",")]
    dfb_counts = {10: 8, 100: 16, 1000: 32, 10000: 64}
    rows = []
    failures = 0
    # Time-correlated noise (other tenants of a shared machine) would bias the ratio
    # between two sizes timed minutes apart, so the runs are interleaved across sizes
    # and families, and each size's median is taken over the same stretch of time.
    instances = [
        (family, n, family(names, n, dfb_counts.get(n, 64), random.Random(n)))
        for family in (mixed, chain, free)
        for n in sizes
    ]
    samples: dict[int, list[float]] = {i: [] for i in range(len(instances))}
    plans: dict[int, Any] = {}
    for _ in range(args.runs):
        for i, (_family, _n, kernel) in enumerate(instances):
            start = time.perf_counter()
            plans[i] = kc.resolve(kernel, target, policy)
            samples[i].append(time.perf_counter() - start)
    previous: dict[Any, float] = {}
    for i, (family, n, kernel) in enumerate(instances):
        plan = plans[i]
        if not isinstance(plan, kc.Plan):
            raise SystemExit(f"{family.__name__} {n}: the bench kernel does not resolve: {plan.format()}")
        ms = statistics.median(samples[i]) * 1000
        growth = f"{ms / previous[family]:5.1f}x" if family in previous else "     -"
        previous[family] = ms
        z3_ms, same = float("nan"), "-"
        if not args.no_z3:
            z3_samples = []
            result = None
            for _ in range(3 if n < 10000 else 1):
                start = time.perf_counter()
                result = z3_resolve(kernel, target, policy)
                z3_samples.append(time.perf_counter() - start)
            z3_ms = statistics.median(z3_samples) * 1000
            collected = collect.collect(kernel, target, policy)
            same = "yes" if result == answer(plan, collected.search) else "NO"
            failures += same == "NO"
        rows.append((family.__name__, n, len(kernel.dfbs), ms, growth, z3_ms, same))
    print(f"{'kernel':8} {'ops':>6} {'dfbs':>5} {'resolver ms':>12} {'growth':>7} {'z3 ms':>10} {'speedup':>8} {'same':>5}")
    for name, n, d, ms, growth, z3_ms, same in rows:
        speed = f"{z3_ms / ms:7.0f}x" if z3_ms == z3_ms else "       -"
        print(f"{name:8} {n:6d} {d:5d} {ms:12.3f} {growth:>7} {z3_ms:10.1f} {speed:>8} {same:>5}")
    if failures:
        raise SystemExit(f"{failures} instance(s) differ between the resolver and z3")


if __name__ == "__main__":
    main()
