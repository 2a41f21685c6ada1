"""Identifiers the generated kernels declare for a kernel's dataflow buffers.

The kernel model reserves the same prefixes for loop variables (see ``model/kernels.py``).
"""

from __future__ import annotations


def cb(dfb: str) -> str:
    """The compile-time constant holding a DFB's circular-buffer id."""
    return f"cb_{dfb}"


def tensor(dfb: str) -> str:
    """The address generator of the DRAM tensor feeding or draining a DFB."""
    return dfb


def blocks_moved(dfb: str) -> str:
    """The count of blocks the reader or writer has moved for a DFB so far."""
    return f"n_{dfb}"
