"""Identifiers the generated kernels declare besides the spelled kernel API.

The lowering names what it declares with these, and the kernel model rejects a dataflow
buffer or loop variable that would collide with one of them.
"""

from __future__ import annotations

# Functions the reader and writer programs define, and the C++ names the printer writes.
READ_BLOCK = "read_block"
WRITE_BLOCK = "write_block"
FILL_FACE_ROWS = "fill_face_rows"
GENERATED = frozenset([READ_BLOCK, WRITE_BLOCK, FILL_FACE_ROWS, "main", "uint32_t"])


def cb(dfb: str) -> str:
    """The compile-time constant holding a DFB's circular-buffer id."""
    return f"cb_{dfb}"


def tensor(dfb: str) -> str:
    """The accessor of the DRAM tensor feeding or draining a DFB."""
    return dfb


def accessor_args(dfb: str) -> str:
    """The compile-time accessor arguments of that tensor (levels whose accessor takes them)."""
    return f"{dfb}_args"


def blocks_moved(dfb: str) -> str:
    """The count of blocks the reader or writer has moved for a DFB so far."""
    return f"n_{dfb}"


def declared_for(dfb: str) -> tuple[str, ...]:
    """Every identifier the generated kernels declare for a DFB."""
    return (cb(dfb), tensor(dfb), accessor_args(dfb), blocks_moved(dfb))
