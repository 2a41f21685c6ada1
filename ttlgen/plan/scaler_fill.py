"""The tiles a reader builds in L1 instead of reading a DRAM tensor: reduce scalers.

A dataflow buffer with ``fill: scaler`` holds the scaler tile of the op operand that reads
it, as the spelling spec's ``scaler`` of that op says (reduce.h@0112bb1e: the first row of
each face holds the value, every other element is zero; the value comes from the op's
attributes, e.g. SUM 1 and AVG 1/N). Every op reading the buffer must read it as such an
operand and agree on the value. The value is stored in the buffer's format, encoded as the
spelling spec's format entry says (sign, exponent, mantissa bits), and the reader writes it
as 32-bit words of packed elements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model.kernels import DfbRef, Kernel, OpExpr, Store, walk_statements, walk_values
from ttlgen.model.ops import OpsModel
from ttlgen.model.spelling import LevelSpelling, SpellingModel, TileLayout, scaler_entity

WORD_BITS = 32  # the reader writes L1 in uint32_t words


@dataclass(frozen=True)
class Fill:
    """A buffer whose tiles are zero but for the first row of each face, which holds ``value``."""

    dfb: str
    value: float  # as the buffer's format stores it
    word: int  # one L1 word of elements holding it
    tile_words: int
    faces: int
    face_words: int
    row_words: int  # a face's first row


def encode(value: float, element_bits: int, mantissa_bits: int) -> tuple[int, float]:
    """``value`` in a sign-exponent-mantissa format, rounded to nearest even: its bits and
    the value they hold. Normal numbers and zero only (a scaler is 1 or 1/N)."""
    if value == 0.0:
        return 0, 0.0
    exponent_bits = element_bits - 1 - mantissa_bits
    bias = 2 ** (exponent_bits - 1) - 1
    fraction, exponent = math.frexp(abs(value))  # abs(value) = fraction * 2**exponent, 0.5 <= fraction < 1
    scaled = fraction * 2 ** (mantissa_bits + 1)
    mantissa = round(scaled)  # Python rounds half to even
    if mantissa == 2 ** (mantissa_bits + 1):
        mantissa, exponent = mantissa // 2, exponent + 1
    biased = exponent - 1 + bias
    if not 0 < biased < 2**exponent_bits - 1:
        raise ValueError(f"{value!r} is outside the normal range of a {element_bits}-bit format")
    bits = (int(value < 0) << (element_bits - 1)) | (biased << mantissa_bits) | (mantissa - 2**mantissa_bits)
    return bits, math.copysign(mantissa * 2.0 ** (exponent - mantissa_bits - 1), value)


@dataclass(frozen=True)
class _Read:
    """A read of a buffer in a store's value: by an op's operand, or as the whole value (a copy)."""

    mark: Mark
    op: OpExpr | None
    operand: int | None  # the operand's position in the op's args


def _reads(kernel: Kernel, dfb: str) -> list[_Read]:
    found = []
    for stmt in walk_statements(kernel.body):
        if not isinstance(stmt, Store):
            continue
        if isinstance(stmt.value, DfbRef) and stmt.value.dfb == dfb:
            found.append(_Read(stmt.value.mark, None, None))
        for expr in walk_values(stmt.value):
            found.extend(_Read(arg.mark, expr, i) for i, arg in enumerate(expr.args) if isinstance(arg, DfbRef) and arg.dfb == dfb)
    return found


def fills(kernel: Kernel, ops: OpsModel, spelling: SpellingModel, level: LevelSpelling, sink: DiagnosticSink) -> tuple[Fill, ...]:
    """The tile each ``fill: scaler`` buffer of ``kernel`` holds, or located errors."""
    by_name = {op.name: op for op in ops.ops}
    out = []
    for dfb in kernel.dfbs:
        if dfb.fill is None:
            continue
        tile = spelling.tile
        if tile is None:
            sink.error(dfb.mark, f"the reader cannot build {dfb.name!r}: {spelling.source} gives no tile layout (`tile`)")
            continue
        values: dict[float, Mark] = {}
        misread = False
        for read in _reads(kernel, dfb.name):
            expr = read.op
            op = by_name.get(expr.op) if expr is not None else None
            operand = op.operands[read.operand].name if op is not None and read.operand is not None and read.operand < len(op.operands) else None
            scaler = None
            if expr is not None:
                scaler = next((s.scaler for s in level.spellings if s.op == expr.op and s.scaler is not None and s.scaler.operand == operand), None)
            if expr is None or scaler is None:
                what = f"operand {operand!r} of {expr.op!r}" if expr is not None else "a copy"
                sink.error(
                    read.mark,
                    f"{what} reads {dfb.name!r}, which the reader fills as a scaler tile; only an op's scaler operand "
                    f"(the spelling spec's `scaler`, e.g. tile_reduce's) reads one",
                    after=[scaler_entity(expr.op)] if expr is not None else [],
                )
                misread = True
                continue
            value = scaler.value(dict(expr.attrs), tile)
            if value is None:
                sink.error(expr.mark, f"{expr.op!r} has no scaler for attributes {dict(expr.attrs)} (its spelling's scaler: {scaler.mark})")
                misread = True
                continue
            values.setdefault(value, expr.mark)
        if misread:
            continue
        if not values:
            sink.error(dfb.mark, f"{dfb.name!r} is filled as a scaler tile, but no op reads it as its scaler")
            continue
        if len(values) > 1:
            (first, at), (second, other) = list(values.items())[:2]
            sink.error(
                dfb.mark,
                f"the ops reading scaler tile {dfb.name!r} need different scalers: {first!r} ({at}) and {second!r} ({other}); "
                "give each its own buffer",
            )
            continue
        (value,) = values
        fill = _fill(dfb.name, dfb.dtype, value, tile, spelling, sink, dfb.mark)
        if fill is not None:
            out.append(fill)
    return tuple(out)


def _fill(name: str, dtype: str, value: float, tile: TileLayout, spelling: SpellingModel, sink: DiagnosticSink, mark: Mark) -> Fill | None:
    fmt = spelling.format(dtype)
    if fmt is None or fmt.mantissa_bits is None:
        sink.error(mark, f"the reader cannot write {dtype!r} elements: {spelling.source} gives its format no mantissa_bits")
        return None
    element_bits = fmt.element_bits
    per_word = WORD_BITS // element_bits if WORD_BITS % element_bits == 0 else 0
    if per_word == 0 or tile.face_cols % per_word:
        sink.error(mark, f"the reader writes 32-bit words: {element_bits}-bit elements do not fill a face row of {tile.face_cols} in whole words")
        return None
    try:
        bits, stored = encode(value, element_bits, fmt.mantissa_bits)
    except ValueError as exc:
        sink.error(mark, f"the reader cannot write the scaler of {name!r}: {exc}")
        return None
    word = 0
    for _ in range(per_word):
        word = (word << element_bits) | bits
    return Fill(
        dfb=name,
        value=stored,
        word=word,
        tile_words=tile.elements // per_word,
        faces=tile.faces,
        face_words=tile.face_rows * tile.face_cols // per_word,
        row_words=tile.face_cols // per_word,
    )
