"""Located spec errors: single edits of the real ABI spec give a message naming the file,
line, column and key path. (Each error class of the layout and program kinds has a bad-spec
case with its exact messages in tests/fixtures/bad_specs/, run by test_spec_error_messages.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from abi_support import copy_specs, spec_errors


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
