"""Located spec errors: every error class of the layout and program kinds, and single edits
of the real ABI spec, give a message naming the file, line, column and key path."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from abi_support import REPO, copy_specs, spec_errors

FIXTURES = REPO / "tests" / "fixtures" / "bad_specs"

# (kind, case, the complete list of messages)
CASES = [
    ("layout", "bit_field_overflow", [
        "specs/layout.yaml:25:37: words.hdr.fields[2].bits: bit field 'slot' (bits 24..39) overflows its 32-bit word",
    ]),
    ("layout", "bit_field_overlap", [
        "specs/layout.yaml:24:9: words.hdr.fields[1]: bit field 'flags' (bits 4..11) overlaps 'handler' (bits 0..7)",
    ]),
    ("layout", "block_size_mismatch", [
        "specs/layout.yaml:40:11: blocks.control.size: declared size 0x70 of block 'control' disagrees with the end of its last region, 0x60",
    ]),
    ("layout", "c_name_collision", [
        "specs/layout.yaml:44:16: blocks.control.regions[2].name: the offset of region 'stop_bytes' of block 'control' gets the C name MI_CONTROL_STOP_BYTES and the Python name mini_abi.layout.CONTROL_STOP_BYTES, which the size of region 'stop' of block 'control' also gets; rename one of them\n"
        "  note: specs/layout.yaml:43:16: blocks.control.regions[1].name: the size of region 'stop' of block 'control' comes from here",
    ]),
    ("layout", "duplicate_name", [
        "specs/layout.yaml:11:16: enums.handler.values[1].name: duplicate enum 'handler' value name 'nop' (first declared at specs/layout.yaml:10:16)",
    ]),
    ("layout", "enum_range_overlap", [
        "specs/layout.yaml:14:9: enums.handler.ranges[1]: range 'dispatcher' (200..254) overlaps range 'user' (1..239)",
    ]),
    ("layout", "enum_value_out_of_range", [
        "specs/layout.yaml:11:29: enums.handler.values[1].value: value 256 of enum 'handler' is out of its range 0..255 (8 bits)",
    ]),
    ("layout", "region_misaligned", [
        "specs/layout.yaml:43:42: blocks.control.regions[1].size: size 0x18 of region 'stop' is not a multiple of 16 bytes",
        'specs/layout.yaml:44:18: blocks.control.regions[2].offset: region [2] (reserved) at 0x58 is not 16-byte aligned',
        'specs/layout.yaml:44:30: blocks.control.regions[2].size: size 0x8 of region [2] (reserved) is not a multiple of 16 bytes',
    ]),
    ("layout", "region_offset_gap", [
        "specs/layout.yaml:43:30: blocks.control.regions[1].offset: declared offset 0x50 of region 'stop' disagrees with the computed offset 0x40 (the end of region 'ring'): an undeclared gap of 16 bytes at 0x40..0x4F; declare a reserved region there",
    ]),
    ("layout", "region_overlap", [
        "specs/layout.yaml:43:30: blocks.control.regions[1].offset: declared offset 0x30 of region 'stop' disagrees with the computed offset 0x40 (the end of region 'ring'): an overlap of 16 bytes with the region before it",
    ]),
    ("layout", "region_slot_size", [
        "specs/layout.yaml:42:42: blocks.control.regions[0].size: region 'ring' holds 2 x struct 'command' of 16 bytes, but each slot has 32 bytes",
    ]),
    ("layout", "struct_field_overlap", [
        "specs/layout.yaml:32:28: structs.command.fields[2].offset: field 'a0' (bytes 4..7) overlaps 'hdr' (bytes 4..7)",
        "specs/layout.yaml:33:28: structs.command.fields[3].offset: undeclared gap at bytes 8..11 before field 'a1'; declare a reserved field there",
    ]),
    ("layout", "struct_undeclared_gap", [
        "specs/layout.yaml:32:28: structs.command.fields[2].offset: undeclared gap at bytes 8..11 before field 'a1'; declare a reserved field there",
    ]),
    ("layout", "unknown_key", [
        "specs/layout.yaml:40:5: blocks.control.alignment: unknown key 'alignment'; valid keys: align, doc, prefix, regions, size",
    ]),
    ("programs", "duplicate_handler_id", [
        "specs/program.yaml:10:9: handlers[1].id: handler 'done' has id 1, which handler 'run' already has",
    ]),
    ("programs", "duplicate_handler_name", [
        "specs/program.yaml:9:11: handlers[1].name: duplicate handler name 'run' (first declared at specs/program.yaml:6:11)",
    ]),
    ("programs", "handler_id_out_of_range", [
        "specs/program.yaml:10:9: handlers[1].id: handler 'done' has id 240, outside the user range 1..239 of enum 'handler' in 'mini'",
    ]),
    ("programs", "too_many_arguments", [
        "specs/program.yaml:12:11: handlers[1].args: handler 'done' has 3 arguments, but a command has 2 argument words (array 'args')",
    ]),
    ("programs", "unknown_flag", [
        "specs/program.yaml:11:13: handlers[1].flags[0]: unknown flag 'urgent'; the 'flag' flags are: exclusive",
    ]),
    ("programs", "unknown_layout", [
        "specs/program.yaml:3:9: layout: unknown layout 'maxi'; known layouts: mini",
    ]),
]


@pytest.mark.parametrize(("kind", "case", "messages"), CASES, ids=[f"{k}/{c}" for k, c, _ in CASES])
def test_bad_spec_fixture_is_reported_where_it_is_wrong(tmp_path: Path, kind: str, case: str, messages: list[str]) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(FIXTURES / kind / case, specs)
    assert spec_errors(specs) == messages


def test_every_fixture_has_a_case() -> None:
    found = {(d.parent.name, d.name) for kind in ("layout", "programs") for d in (FIXTURES / kind).iterdir()}
    assert found == {(k, c) for k, c, _ in CASES}


def test_fixture_base_is_valid(tmp_path: Path) -> None:
    # The fixtures differ from one valid tree by one edit each; check that tree builds.
    base = tmp_path / "specs"
    base.mkdir()
    shutil.copy(FIXTURES / "programs" / "unknown_flag" / "layout.yaml", base / "layout.yaml")
    program = (FIXTURES / "programs" / "unknown_flag" / "program.yaml").read_text()
    (base / "program.yaml").write_text(program.replace("[urgent]", "[exclusive]"))
    assert spec_errors(base) == []


def _edit(specs: Path, old: str, new: str) -> int:
    """Replace the one line holding ``old``; return its 1-based line number."""
    path = specs / "abi" / "komorebi.yaml"
    lines = path.read_text().splitlines(keepends=True)
    (index,) = [i for i, line in enumerate(lines) if old in line]
    lines[index] = lines[index].replace(old, new)
    path.write_text("".join(lines))
    return index + 1


# (text in the real spec, its replacement, the key path and message the edit must produce)
SPEC_MUTATIONS = [
    (
        "{name: stop, offset: 0x410,",
        "{name: stop, offset: 0x420,",
        "blocks.control.regions[2].offset",
        "declared offset 0x420 of region 'stop' disagrees with the computed offset 0x410 (the end of region "
        "'reserved'): an undeclared gap of 16 bytes at 0x410..0x41F; declare a reserved region there",
    ),
    (
        "{name: state, offset: 0x640, size: 0xC0,",
        "{name: state, offset: 0x640, size: 0xD0,",
        "blocks.control.regions[7].offset",
        "declared offset 0x700 of region 'job' disagrees with the computed offset 0x710 (the end of region "
        "'state'): an overlap of 16 bytes with the region before it",
    ),
    (
        "{name: hdr, offset: 4,",
        "{name: hdr, offset: 8,",
        "structs.command.fields[2].offset",
        "field 'group' (bytes 8..11) overlaps 'hdr' (bytes 8..11)",
    ),
    (
        "{name: a9, offset: 60}",
        "{name: a9, offset: 62}",
        "structs.command.fields[15].offset",
        "field 'a9' at byte 62 is not on a 4-byte word boundary",
    ),
    (
        "{name: handler, lsb: 0, bits: 8, enum: handler}",
        "{name: handler, lsb: 0, bits: 9, enum: handler}",
        "words.hdr.fields[1]",
        "bit field 'flags' (bits 8..15) overlaps 'handler' (bits 0..8)",
    ),
    (
        "{name: exit, value: 1, doc: left on an EXIT command}",
        "{name: exit, value: 256, doc: left on an EXIT command}",
        "enums.end.values[0].value",
        "value 256 of enum 'end' is out of its range 0..255 (8 bits)",
    ),
]


@pytest.mark.parametrize(("old", "new", "path", "message"), SPEC_MUTATIONS, ids=[m[2] for m in SPEC_MUTATIONS])
def test_one_edit_of_the_abi_spec_is_a_located_error(tmp_path: Path, old: str, new: str, path: str, message: str) -> None:
    specs = copy_specs(tmp_path)
    edited_line = _edit(specs, old, new)
    errors = spec_errors(specs)
    assert errors, "the edit was accepted"
    location = re.compile(rf"^specs/abi/komorebi\.yaml:(\d+):\d+: {re.escape(path)}: {re.escape(message)}$")
    matches = [location.match(e) for e in errors]
    assert any(matches), errors
    line = next(int(m[1]) for m in matches if m)
    # The error points into the edited region of the file, not at its top.
    assert abs(line - edited_line) <= 2, (line, edited_line, errors)
