"""Emulated matmul time vs NumPy float32 matmul of the same shape.

An 8x8-tile output (256x256) at K = 8, 32, 128 tiles, run with the matmul
fixture kernel (matmul_block, 2x4 subblocks accumulating K in a 16-bit DST,
bf16 operands, HiFi4, the calibrated numerics of NUMERICS.md). Emulator time is
the kernels' wall time inside the emulator process (RunResult.kernel_seconds:
from the moment the three kernel threads have started to the end of the last one;
median of several runs); compile time and process start-up are excluded. The two are
timed round by round, and "ratio median" is the median of the rounds' ratios, so a
phase of the shared machine hits both sides of a ratio alike; "ratio min" compares the
two at their best. A round: a pause that lets OpenBLAS's threads stop spinning, an
untimed emulator run, the timed one, 50 ms of NumPy calls, then five timed NumPy calls
(their median): each side at the speed it has in steady use. With --accuracy
it also times the default `ttlgen accuracy` table (warm: kernels already compiled).

Kernel time used to include work that is not the kernels': a new thread's wait
for its first time on a core (the clock started when the threads were created,
and on the shared 2-core machine a reader was seen to start 270 us later), the
main thread's wake-up and the joins after the last kernel had finished (about
40 us), the lazy binding of the first call of each shared-library function (164
of them, some in the kernels' run) and the reader thread's malloc arena, created
by the first cb_reserve_back's poison buffer (about 50 us). The clock now starts
once every kernel thread has run, the run ends when the last kernel finishes,
symbols are bound at start-up (-z now) and the poisoning allocates nothing, so
those are process start-up, as thread creation already was.
Usage: python bench/emulator.py [--repeats N] [--accuracy]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from ttlgen.device import run_program

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "device" / "fixtures" / "matmul"
MT = NT = 8
BLAS_IDLE_S = 0.3
NUMPY_WARM_S = 0.05
SUB_H, SUB_W = 2, 4


def matmul_program(kt: int) -> dict[str, Any]:
    prog: dict[str, Any] = copy.deepcopy(json.loads((FIXTURE / "program.json").read_text()))
    ct = [MT, NT, kt, SUB_H, SUB_W, 0]  # the last: not negated
    for role in ("reader", "compute", "writer"):
        prog["kernels"][role]["compile_time_args"] = ct
    shapes = {"a": [MT, kt], "b": [kt, NT], "c": [MT, NT]}
    for b in prog["buffers"]:
        b["shape_tiles"] = shapes[b["name"]]
    for cb in prog["cbs"]:
        cb["num_pages"] = {0: 8 * SUB_H, 1: 8 * SUB_W, 16: 2 * SUB_H * SUB_W}[cb["index"]]
    return prog


def accuracy_table_seconds(repeats: int) -> list[float]:
    """Wall time of the default `ttlgen accuracy` table, after one warm-up run."""
    from typer.testing import CliRunner

    from ttlgen.cli import app

    specs = Path(__file__).resolve().parent.parent / "specs"
    runner = CliRunner()
    times = []
    for i in range(repeats + 1):
        t0 = time.perf_counter()
        result = runner.invoke(app, ["accuracy", "--no-progress", "--specs", str(specs)])
        if result.exit_code != 0:
            raise SystemExit(f"ttlgen accuracy failed: {result.stderr}")
        if i:  # the first run compiles what is not cached yet
            times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--accuracy", action="store_true", help="also time the default ttlgen accuracy table"
    )
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(
        f"{'K tiles':>8} {'emu median ms':>14} {'emu min ms':>11} {'numpy median ms':>16} "
        f"{'numpy min ms':>13} {'ratio median':>13} {'ratio min':>10}"
    )
    for kt in (8, 32, 128):
        a = rng.standard_normal((MT * 32, kt * 32)).astype(np.float32)
        b = rng.standard_normal((kt * 32, NT * 32)).astype(np.float32)
        prog = matmul_program(kt)
        run_program(FIXTURE, {"a": a, "b": b}, program=prog)  # compile + warm up
        np.matmul(a, b)
        # Round by round, as bench/build.py times its rows: this shared machine's speed
        # drifts by a third between phases of seconds to minutes, and each round's ratio
        # compares the two under the same phase. NumPy's time in a round is the median of
        # five calls.
        emu, ref, ratios = [], [], []
        for _ in range(args.repeats):
            # OpenBLAS's worker threads busy-wait for about 0.1 s (2^28 cycles) after a
            # call before they sleep; an emulator run inside that window shares both
            # cores with them (measured: K = 8 took 3-12 ms instead of 1.3).
            time.sleep(BLAS_IDLE_S)
            # Each side is timed after a warm-up of its own, as it runs in steady use (the
            # accuracy table runs programs back to back; NumPy is called in loops): after
            # the sleep, the first milliseconds of vector work run slower on this host
            # (NumPy at K = 8: three calls 15% slower than fifty ms of them; an emulator
            # run 5-12% slower than one after 10 ms of matmul work).
            run_program(FIXTURE, {"a": a, "b": b}, program=prog)
            e = run_program(FIXTURE, {"a": a, "b": b}, program=prog).kernel_seconds
            warm_until = time.perf_counter() + NUMPY_WARM_S
            while time.perf_counter() < warm_until:
                np.matmul(a, b)
            calls = []
            for _ in range(5):
                t0 = time.perf_counter()
                np.matmul(a, b)
                calls.append(time.perf_counter() - t0)
            n = statistics.median(calls)
            emu.append(e)
            ref.append(n)
            ratios.append(e / n)
        e_med, e_min = statistics.median(emu) * 1e3, min(emu) * 1e3
        n_med, n_min = statistics.median(ref) * 1e3, min(ref) * 1e3
        print(
            f"{kt:>8} {e_med:>14.2f} {e_min:>11.2f} {n_med:>16.3f} {n_min:>13.3f} "
            f"{statistics.median(ratios):>13.1f} {e_min / n_min:>10.1f}"
        )
    if args.accuracy:
        times = accuracy_table_seconds(max(1, args.repeats // 3))
        print(
            f"\nttlgen accuracy, default table (K 1..64, blocks 2 and 16), warm: "
            f"median {statistics.median(times):.2f} s, min {min(times):.2f} s"
        )


if __name__ == "__main__":
    main()

