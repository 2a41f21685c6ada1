"""Located spec errors: single edits of the real ABI spec give a message naming the file,
line, column and key path. (Each error class of the layout and program kinds has a bad-spec
case with its exact messages in tests/fixtures/bad_specs/, run by test_spec_error_messages.)"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from abi_support import REPO, copy_specs, spec_errors

from tests.conftest import real_documents
from ttlgen.errors import DiagnosticSink, format_key_path
from ttlgen.model import layout as layout_model


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


def _word_numbers(data: dict[str, Any]) -> list[tuple[str | int, ...]]:
    """The key path of one of each kind of offset, size, count and index a layout states,
    taken from the first struct, table and block that has one."""
    paths: list[tuple[str | int, ...]] = []
    for name, struct in data.get("structs", {}).items():
        paths += [("structs", name, "size"), ("structs", name, "fields", 0, "offset")]
        paths += [("structs", name, "fields", i, "count") for i, f in enumerate(struct["fields"]) if "count" in f][:1]
        break
    for name, table in data.get("tables", {}).items():
        paths += [("tables", name, "size"), ("tables", name, "entries", 0, "index")]
        paths += [("tables", name, "entries", i, "count") for i, e in enumerate(table["entries"]) if "count" in e][:1]
        break
    for name, block in data.get("blocks", {}).items():
        paths += [("blocks", name, "align"), ("blocks", name, "size")]
        paths += [("blocks", name, "regions", 0, "offset"), ("blocks", name, "regions", 0, "size")]
        paths += [("blocks", name, "regions", i, "slots") for i, r in enumerate(block["regions"]) if "slots" in r][:1]
        break
    return paths


_LAYOUT = next(d for d in real_documents() if d.kind == layout_model.KIND)


@pytest.mark.parametrize("path", _word_numbers(_LAYOUT.data), ids=lambda p: format_key_path(p))
def test_a_layout_number_beyond_its_word_is_a_located_error(path: tuple[str | int, ...]) -> None:
    data = copy.deepcopy(_LAYOUT.data)
    *parent, key = path
    holder: Any = data
    for step in parent:
        holder = holder[step]
    top = (1 << data["word"]["bits"]) - 1
    holder[key] = top + 1
    sink = DiagnosticSink()
    layout_model.build([dataclasses.replace(_LAYOUT, data=data)], sink)
    wanted = f"0x{top + 1:X} does not fit in a 32-bit word (at most 0x{top:X}): "
    (error,) = [d for d in sink.diagnostics if d.message.startswith(wanted)]
    assert error.mark == _LAYOUT.mark(path)


def test_the_schemas_word_is_the_one_the_layout_model_holds_values_in() -> None:
    """Constants, enum values and marker values are held to a word by the schema's u32 (the
    editor schema carries it); the model holds offsets, sizes, counts and indices to the
    layout's word: both are the same width."""
    schema = json.loads((REPO / "ttlgen" / "schemas" / "ttlgen.layout.v1.schema.json").read_text())
    bits = schema["properties"]["word"]["properties"]["bits"]["const"]
    assert schema["$defs"]["u32"]["maximum"] == (1 << bits) - 1
