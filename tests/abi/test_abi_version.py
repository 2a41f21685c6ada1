"""The layout's ABI version reaches every language, and builders survive an added field.

The version is stated once in the layout spec and printed as constants in the C header, the
C++ header, the Python layout module and the docs; its identifiers come from the naming pass
like every other. A field added to the command gives the Python builders a keyword with the
reserved value as default, so existing callers keep working.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from abi_support import build_abi, copy_specs, spec_errors

LAYOUT = "abi/komorebi.yaml"
VERSION_LINE = "abi_version: {major: 1, minor: 0}\n"


def _edit(specs: Path, old: str, new: str) -> None:
    path = specs / LAYOUT
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _line_of(specs: Path, text: str) -> int:
    lines = (specs / LAYOUT).read_text(encoding="utf-8").splitlines()
    (number,) = [i + 1 for i, line in enumerate(lines) if text in line]
    return number


def test_the_spec_version_is_a_constant_in_c_cpp_python_and_the_docs(tmp_path: Path) -> None:
    specs = copy_specs(tmp_path)
    _edit(specs, VERSION_LINE, "abi_version: {major: 3, minor: 7}\n")
    out = tmp_path / "out"
    build_abi(specs, out)
    c_header = (out / "include/komorebi/abi/km_abi.h").read_text(encoding="utf-8")
    cpp_header = (out / "include/komorebi/device/km_layout.hpp").read_text(encoding="utf-8")
    python = (out / "python/komorebi_abi/layout.py").read_text(encoding="utf-8")
    docs = (out / "docs/komorebi-abi.md").read_text(encoding="utf-8")
    assert re.search(r"^#define KM_ABI_VERSION_MAJOR 3u$", c_header, re.M)
    assert re.search(r"^#define KM_ABI_VERSION_MINOR 7u$", c_header, re.M)
    assert "constexpr std::uint32_t kAbiVersionMajor = 3;" in cpp_header
    assert "constexpr std::uint32_t kAbiVersionMinor = 7;" in cpp_header
    assert "ABI_VERSION_MAJOR = 3\nABI_VERSION_MINOR = 7\n" in python
    assert "ABI version **3.7**" in docs


def test_a_constant_named_like_the_version_is_a_located_error_naming_both(tmp_path: Path) -> None:
    specs = copy_specs(tmp_path)
    _edit(specs, "  - name: behind_port\n", "  - {name: abi_version_major, value: 3}\n  - name: behind_port\n")
    constant = _line_of(specs, "abi_version_major")
    version = _line_of(specs, "abi_version:")
    assert spec_errors(specs) == [
        f"specs/{LAYOUT}:{constant}:12: constants[1].name: constant 'abi_version_major' gets the C name "
        "KM_ABI_VERSION_MAJOR, the C++ name km::kAbiVersionMajor and the Python name komorebi_abi.layout.ABI_VERSION_MAJOR, "
        "which the ABI major version of layout 'komorebi' also gets; rename one of them\n"
        f"  note: specs/{LAYOUT}:{version}:14: abi_version: the ABI major version of layout 'komorebi' comes from here"
    ]


def test_a_layout_without_a_version_is_a_located_error(tmp_path: Path) -> None:
    specs = copy_specs(tmp_path)
    _edit(specs, VERSION_LINE, "")
    assert spec_errors(specs) == [f"specs/{LAYOUT}:2:1: missing required key 'abi_version'"]


@pytest.fixture
def grown_package(tmp_path: Path) -> Iterator[ModuleType]:
    """The Python package of a layout whose command header gained a bit field in its spare bits."""
    specs = copy_specs(tmp_path)
    _edit(
        specs,
        "      - {name: slot, lsb: 16, bits: 8, indexes: ring, doc: the ring slot the command was written to}\n",
        "      - {name: slot, lsb: 16, bits: 8, indexes: ring, doc: the ring slot the command was written to}\n"
        "      - {name: priority, lsb: 24, bits: 8, doc: a new field}\n",
    )
    out = tmp_path / "out"
    build_abi(specs, out)
    path = str(out / "python")
    saved = {name: module for name, module in sys.modules.items() if name == "komorebi_abi" or name.startswith("komorebi_abi.")}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, path)
    try:
        yield importlib.import_module("komorebi_abi.programs.mapcollect")
    finally:
        sys.path.remove(path)
        for name in [n for n in sys.modules if n == "komorebi_abi" or n.startswith("komorebi_abi.")]:
            del sys.modules[name]
        sys.modules.update(saved)


def test_a_builder_call_written_before_a_field_was_added_still_works(grown_package: ModuleType) -> None:
    command = grown_package.map_command(sequence=9, slot=2, first=1, count=2, src=1, dst=2, tiles=3, scale=4)
    assert command.priority == 0
    assert grown_package.map_command(sequence=9, slot=2, first=1, count=2, src=1, dst=2, tiles=3, scale=4, priority=5).priority == 5


def test_builders_default_the_command_fields_to_the_reserved_value(kabi: ModuleType) -> None:
    import komorebi_abi.programs.mapcollect as mapcollect  # type: ignore[import-not-found]

    command = mapcollect.map_command(src=1, dst=2, tiles=3, scale=4)
    assert (command.sequence, command.slot, command.first, command.count) == (0, 0, 0, 0)
    assert kabi.Command.unpack(command.pack()) == command
