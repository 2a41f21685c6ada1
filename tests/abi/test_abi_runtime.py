"""The codec runtime shared by every layout (``ttlgen.abi_runtime.words``): tested where it
lives, and shipped verbatim as ``_words.py`` of each generated codec package."""

from __future__ import annotations

from pathlib import Path

import pytest
from abi_support import REPO

from ttlgen.abi_runtime import words
from ttlgen.emit._header import header_lines

HDR = words.Word(
    "hdr",
    (
        words.Field("handler", 0, 8, 256),
        words.Field("slot", 8, 8, 16, limit_reason="the ring region has 16 slots"),
        words.Field("marker", 24, 8, 256, fixed=0x4B),
    ),
)


def test_the_shipped_copy_is_the_module_verbatim() -> None:
    shipped = (REPO / "generated" / "python" / "komorebi_abi" / "_words.py").read_text(encoding="utf-8")
    head = "".join(f"# {line}".rstrip() + "\n" for line in header_lines(("ttlgen/abi_runtime/words.py",)))
    assert shipped == head + "\n" + Path(words.__file__).read_text(encoding="utf-8")


def test_pack_sets_fixed_fields_and_unpack_returns_every_field() -> None:
    packed = words.pack_word(HDR, {"handler": 7, "slot": 3})
    assert packed == 7 | 3 << 8 | 0x4B << 24
    assert words.unpack_word(HDR, packed) == {"handler": 7, "slot": 3, "marker": 0x4B}


def test_a_value_past_a_field_limit_names_the_limit_and_why() -> None:
    with pytest.raises(words.AbiError, match=r"slot 16 is out of range 0\.\.15 \(the ring region has 16 slots\)"):
        words.check_field(HDR, "slot", 16)
    assert words.check_field(HDR, "slot", 16, strict=False) == 16  # what a device wrote need only fit its bits


def test_bytes_and_words_round_trip_little_endian() -> None:
    data = words.words_to_bytes([0x01020304, 5])
    assert data == bytes([4, 3, 2, 1, 5, 0, 0, 0])
    assert words.bytes_to_words(data, 8, "pair") == (0x01020304, 5)
    with pytest.raises(words.AbiError, match="pair must be 8 bytes, got 4"):
        words.bytes_to_words(data[:4], 8, "pair")
