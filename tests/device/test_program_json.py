"""program.json validation (pure Python, no compiler)."""

from __future__ import annotations

from typing import Any

import pytest
from device_helpers import load_fixture_program

from ttlgen.device import ProgramError, parse_program


def test_underscore_top_level_keys_are_ignored() -> None:
    data: dict[str, Any] = load_fixture_program("copy")
    data["_anything"] = {"not": "checked"}
    assert parse_program(data).buffer("x").shape_tiles == (1, 2)


def test_unknown_top_level_key_is_an_error() -> None:
    data = load_fixture_program("copy")
    data["cb"] = []
    with pytest.raises(ProgramError, match="unknown key 'cb'"):
        parse_program(data)


def test_page_size_must_hold_one_tile_of_the_format() -> None:
    data = load_fixture_program("copy")
    data["cbs"][0]["page_size"] = 2048
    with pytest.raises(
        ProgramError, match=r"cbs\[0\].page_size: 2048 is not one Float32 tile \(4096 bytes\)"
    ):
        parse_program(data)


def test_buffer_placeholder_must_name_a_buffer() -> None:
    data = load_fixture_program("copy")
    data["kernels"]["reader"]["runtime_args"][1] = {"buffer": "nope"}
    with pytest.raises(
        ProgramError, match=r"kernels.reader.runtime_args\[1\]: no buffer named 'nope'"
    ):
        parse_program(data)


def test_unpack_to_dest_mode_is_indexed_by_cb() -> None:
    data = load_fixture_program("copy")
    data["compute_config"]["unpack_to_dest_mode"] = ["UnpackToDestFp32"]
    cc = parse_program(data).compute_config
    assert cc.unpack_to_dest(0) and not cc.unpack_to_dest(16)


def test_unsupported_format_is_rejected_with_supported_list() -> None:
    data = load_fixture_program("copy")
    data["cbs"][0]["format"] = "Bfp4_b"
    with pytest.raises(ProgramError, match="'Bfp4_b' is not supported"):
        parse_program(data)
