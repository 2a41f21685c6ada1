"""Identifiers the generated kernels declare besides the spelled kernel API.

The lowering names what it declares with these, and the kernel model rejects a dataflow
buffer or loop variable that would collide with one of them.
"""

from __future__ import annotations

# Functions the reader and writer programs define, and the C++ names the printer writes.
DRAM_TENSOR = "dram_tensor"
READ_BLOCK = "read_block"
WRITE_BLOCK = "write_block"
GENERATED = frozenset([DRAM_TENSOR, READ_BLOCK, WRITE_BLOCK, "main", "uint32_t"])


def cb(dfb: str) -> str:
    """The compile-time constant holding a DFB's circular-buffer id."""
    return f"cb_{dfb}"


def tensor(dfb: str) -> str:
    """The address generator of the DRAM tensor feeding or draining a DFB."""
    return dfb


def blocks_moved(dfb: str) -> str:
    """The count of blocks the reader or writer has moved for a DFB so far."""
    return f"n_{dfb}"


def declared_for(dfb: str) -> tuple[str, ...]:
    """Every identifier the generated kernels declare for a DFB."""
    return (cb(dfb), tensor(dfb), blocks_moved(dfb))
