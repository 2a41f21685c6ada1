"""Packing helpers shared by every layout: little-endian words and bit fields in a word.

This file is the same for every layout spec; the generated modules describe their words
with :class:`Field` and :class:`Word` and call these functions.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

WORD_BITS = 32
WORD_BYTES = 4
WORD_MAX = (1 << WORD_BITS) - 1


class AbiError(ValueError):
    """A value that does not fit the ABI (out of range, wrong length, not landed)."""


@dataclass(frozen=True)
class Field:
    """``bits`` bits of a word starting at bit ``lsb``; values below ``limit`` are valid."""

    name: str
    lsb: int
    bits: int
    limit: int
    fixed: int | None = None
    limit_reason: str = ""

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1


@dataclass(frozen=True)
class Word:
    """A word made of bit fields (fixed fields hold a marker value)."""

    name: str
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field:
        for field in self.fields:
            if field.name == name:
                return field
        raise KeyError(name)


def check_word(what: str, value: int) -> int:
    """``value`` if it fits in an unsigned word, else :class:`AbiError`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise AbiError(f"{what} must be an integer, got {value!r}")
    if not 0 <= value <= WORD_MAX:
        raise AbiError(f"{what} {value} does not fit in a {WORD_BITS}-bit word (0..{WORD_MAX})")
    return value


def check_field(word: Word, name: str, value: int, strict: bool = True) -> int:
    """``value`` if it is valid for field ``name`` of ``word``, else :class:`AbiError`.

    A value must fit the field's bits; with ``strict`` (building, not decoding what a
    device wrote) it must also lie below the field's limit, e.g. a ring slot index.
    """
    field = word.field(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise AbiError(f"{name} must be an integer, got {value!r}")
    limit = field.limit if strict else 1 << field.bits
    if value < 0 or value >= limit:
        if limit < (1 << field.bits):
            reason = f" ({field.limit_reason})" if field.limit_reason else ""
            raise AbiError(f"{name} {value} is out of range 0..{field.limit - 1}{reason}")
        raise AbiError(
            f"{name} {value} overflows its {field.bits} bits in the {word.name} word "
            f"(0..{field.limit - 1})"
        )
    return value


def pack_word(word: Word, values: Mapping[str, int]) -> int:
    """The word with each field set from ``values`` (fixed fields from the layout)."""
    out = 0
    for field in word.fields:
        value = field.fixed if field.fixed is not None else check_field(word, field.name, values[field.name], False)
        out |= (value & field.mask) << field.lsb
    return out


def unpack_word(word: Word, value: int) -> dict[str, int]:
    """Every field of ``value`` by name (fixed fields included, as found)."""
    check_word(word.name, value)
    return {field.name: (value >> field.lsb) & field.mask for field in word.fields}


def words_to_bytes(words: Sequence[int]) -> bytes:
    return struct.pack(f"<{len(words)}I", *(check_word("word", w) for w in words))


def bytes_to_words(data: bytes, size: int, what: str) -> tuple[int, ...]:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise AbiError(f"{what} must be bytes, got {type(data).__name__}")
    if len(data) != size:
        raise AbiError(f"{what} must be {size} bytes, got {len(data)}")
    return struct.unpack(f"<{size // WORD_BYTES}I", bytes(data))


def name_of(names: Mapping[int, str], value: int) -> str:
    """The printed name of an enum value; unknown values print as their number."""
    return names.get(value, str(value))
