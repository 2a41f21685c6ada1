"""Upper limits of `ttlgen accuracy`, checked before anything is built or allocated.

Stdlib only, so that the command line can state them in its help without importing NumPy.
A row's time and memory grow with K x block^2 (its inputs are 2 x block x K tiles, its float64
reference takes K steps over the block): at K = 256, block = 16 a row holds about 2 x 34 MB of
float64 inputs, so no single value can exhaust memory.

Run times, warm (kernels compiled), measured on the 2-core development machine (AMD EPYC VM,
2 vCPUs): with the machine otherwise idle, `--k 256 --block 16` (three rows at the limits)
took 5.3-5.5 s and `--k 256,255,171 --block 16` (nine rows, the largest table MAX_WORK allows)
9.2 s; with other jobs running on it they took 31 s and 62 s. Most of the time is the float64
reference, whose NumPy matmuls (threaded BLAS) slowed down up to 30-fold on the busy machine;
the emulator's own share is at most about 1.5 s per row at the limits.
"""

from __future__ import annotations

from collections.abc import Sequence

#: The matmul kernels of `ttlgen accuracy`, by their spec's accuracy_method, in table order.
ACCURACY_METHODS = ("l1_acc", "dst_roundtrip", "fp32_dest")

MAX_K = 256
MAX_BLOCK = 16
MAX_SEEDS = 16
#: Values per list.
MAX_VALUES = 16
#: The whole table: K x block^2 x seeds summed over its rows, at most that of eight rows at
#: the limits (about 10 s on the idle 2-core machine, a minute or more when it is busy); the
#: default table is an eighth of it.
MAX_WORK = 8 * MAX_K * MAX_BLOCK**2


def table_work(ks: Sequence[int], blocks: Sequence[int], seeds: int) -> int:
    """K x block^2 x seeds summed over the rows of the table (MAX_WORK bounds it)."""
    return len(ACCURACY_METHODS) * sum(k * b * b for k in set(ks) for b in set(blocks)) * seeds


LIMITS_HELP = (
    f"Limits: K <= {MAX_K} and block <= {MAX_BLOCK} (one row at the limits takes about 2 s on an "
    "idle 2-core machine, 10 s or more on a busy one), at most "
    f"{MAX_VALUES} values per list, seeds <= {MAX_SEEDS}, and K x block^2 x seeds summed over the "
    f"rows at most {MAX_WORK} (eight rows at the limits: about 10 s idle, a minute or more "
    "busy); a value outside them or a malformed list is exit 2."
)
