"""What each of the emulator's speed devices buys: kernel time with the device and without
it, interleaved round by round, on the matmul of bench/emulator.py (an 8x8-tile output at
K = 8, 32 and 128 tiles).

The devices, each removed by a define the runtime honours (only this benchmark sets them):

- ``cb poll``: a blocked kernel polls its CB for 1 ms before it sleeps (TTLEMU_SPIN_US=0:
  it sleeps at once);
- ``pinning``: kernel and helper threads start on chosen cores (TTLEMU_NO_PINNING).

Measured for issue 24 (three runs of 9, 15 and 25 rounds at load 1.6-2.3, another session
on the 2-core machine: not idle), "saves" at K = 8 / 32 / 128:
- AVX-512 matmul path beside AVX2: 5-12 % / 12-17 % / 5-19 %; removed (AVX2 stays).
- cb poll: 16-21 % / -6-9 % / -34-5 %; kept: it is what holds bench/emulator.py's K = 8
  ratio under 5x (without it and AVX-512, 5.0-5.2x; with the poll, emulator minimum
  0.66 ms against 0.97 ms).
- pinning: 3-13 % / 15-24 % (median 21 %) / -13-22 %; kept on its K = 32 median.

A device earns its place when it buys at least 20 % at some K (issue 24): the "saves"
column is 1 - with/without of the medians of the rounds' times. Run it on an idle machine:
python bench/emulator_devices.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from emulator import BLAS_IDLE_S, FIXTURE, MT, NT, matmul_program

from ttlgen.device import build, run_program

DEVICES = {"cb poll": ("-DTTLEMU_SPIN_US=0",), "pinning": ("-DTTLEMU_NO_PINNING",)}
KS = (8, 32, 128)


def kernel_seconds(flags: tuple[str, ...], inputs: dict[str, np.ndarray], program: dict[str, object]) -> float:
    """One warm run then one timed run, with the runtime built with ``flags`` added."""
    base = build.CXXFLAGS
    build.CXXFLAGS = (*base, *flags)
    try:
        run_program(FIXTURE, inputs, program=program)
        return run_program(FIXTURE, inputs, program=program).kernel_seconds
    finally:
        build.CXXFLAGS = base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'device':>8} {'K':>4} {'with ms':>9} {'without ms':>11} {'saves':>7}")
    for kt in KS:
        inputs = {
            "a": rng.standard_normal((MT * 32, kt * 32)).astype(np.float32),
            "b": rng.standard_normal((kt * 32, NT * 32)).astype(np.float32),
        }
        program = matmul_program(kt)
        for flags in ((), *DEVICES.values()):
            kernel_seconds(flags, inputs, program)  # compile each variant before timing
        times: dict[str, list[float]] = {name: [] for name in ("all", *DEVICES)}
        for _ in range(args.rounds):
            time.sleep(BLAS_IDLE_S)
            times["all"].append(kernel_seconds((), inputs, program))
            for name, flags in DEVICES.items():
                times[name].append(kernel_seconds(flags, inputs, program))
        with_all = statistics.median(times["all"])
        for name in DEVICES:
            without = statistics.median(times[name])
            print(f"{name:>8} {kt:>4} {with_all * 1e3:>9.2f} {without * 1e3:>11.2f} {1 - with_all / without:>7.1%}")


if __name__ == "__main__":
    main()
