"""The generated C/C++ headers compile warning-free in every supported language standard,
the generated runtime check agrees with the spec, and a hand-edited offset fails the build."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from abi_support import C_STANDARDS, CXX_STANDARDS, WARNINGS

Compiler = Callable[[Sequence[str]], subprocess.CompletedProcess[str]]

C_SOURCE = """\
#include "komorebi/abi/km_abi.h"

uint32_t km_compile_check(const km_command_t* command);

uint32_t km_compile_check(const km_command_t* command) {
    return KM_LANDED(command) ? km_hdr_handler(command->hdr) : KM_HANDLER_EXIT;
}
"""

CXX_SOURCE = """\
#include "komorebi/abi/km_abi.h"
#include "komorebi/device/km_layout.hpp"
#include "komorebi/programs/mapcollect.hpp"

static_assert(km::kStLast == KM_ST_LAST, "one spec, two headers");
static_assert(km::kGaveLimit == KM_GAVE_LIMIT, "one spec, two headers");
static_assert(km::kCbTokenCompute == KM_CB_TOKEN_COMPUTE, "one spec, two headers");
static_assert(mapcollect::kHandlerMap <= KM_HANDLER_USER_MAX, "a user handler");

std::uint32_t km_compile_check(const km_command_t& command);

std::uint32_t km_compile_check(const km_command_t& command) {
    return KM_LANDED(&command) ? mapcollect::map_tiles(command) : km::kEndExit;
}
"""


def _compile(compiler: Compiler, tool: str, std: str, include: Path, source: Path) -> subprocess.CompletedProcess[str]:
    return compiler([tool, f"-std={std}", *WARNINGS, f"-I{include}", "-fsyntax-only", str(source)])


@pytest.mark.parametrize("std", C_STANDARDS)
def test_c_header_compiles_without_warnings(abi_out: Path, compiler: Compiler, tmp_path: Path, std: str) -> None:
    source = tmp_path / "check.c"
    source.write_text(C_SOURCE)
    result = _compile(compiler, "gcc", std, abi_out / "include", source)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("std", CXX_STANDARDS)
def test_cxx_headers_compile_without_warnings(abi_out: Path, compiler: Compiler, tmp_path: Path, std: str) -> None:
    source = tmp_path / "check.cpp"
    source.write_text(CXX_SOURCE)
    result = _compile(compiler, "g++", std, abi_out / "include", source)
    assert result.returncode == 0, result.stderr


def test_runtime_offset_program_is_silent_and_succeeds(abi_out: Path, compiler: Compiler, tmp_path: Path) -> None:
    binary = tmp_path / "offsets"
    program = abi_out / "tests" / "km_abi_offsets.c"
    built = compiler(["gcc", "-std=c99", *WARNINGS, f"-I{abi_out / 'include'}", str(program), "-o", str(binary)])
    assert built.returncode == 0, built.stderr
    run = subprocess.run([str(binary)], capture_output=True, text=True, check=False, timeout=30)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


def test_runtime_offset_program_reports_a_wrong_header(abi_out: Path, compiler: Compiler, tmp_path: Path) -> None:
    # The same program against a header whose gave-up code was edited by hand (enum
    # values have no static assert): it must name the macro and both values.
    include = _mutated_include(abi_out, tmp_path, "KM_GAVE_LIMIT", "2u", "9u")
    binary = tmp_path / "offsets"
    program = abi_out / "tests" / "km_abi_offsets.c"
    built = compiler(["gcc", "-std=c11", f"-I{include}", str(program), "-o", str(binary)])
    assert built.returncode == 0, built.stderr
    run = subprocess.run([str(binary)], capture_output=True, text=True, check=False, timeout=30)
    assert run.returncode == 1
    assert run.stdout == "KM_GAVE_LIMIT is 9, the spec says 2\n"


def _mutated_include(abi_out: Path, tmp_path: Path, macro: str, old: str, new: str) -> Path:
    header = (abi_out / "include/komorebi/abi/km_abi.h").read_text()
    pattern = re.compile(rf"^(#define {macro}\s+){re.escape(old)}$", re.M)
    assert len(pattern.findall(header)) == 1, f"{macro} {old} not found once in the header"
    include = tmp_path / "include"
    target = include / "komorebi/abi/km_abi.h"
    target.parent.mkdir(parents=True)
    target.write_text(pattern.sub(rf"\g<1>{new}", header))
    return include


# (macro, value in the header, edited value, the assert message that must fire)
HEADER_MUTATIONS = [
    ("KM_CONTROL_STOP", "0x410u", "0x420u", "KM_CONTROL_STOP"),
    ("KM_CONTROL_STATE_BYTES", "0xC0u", "0xB0u", "KM_CONTROL_STATE"),
    ("KM_COMMAND_HDR_OFFSET", "4u", "8u", "km_command_t layout"),
    ("KM_CONTROL_BYTES", "0x15C0u", "0x15D0u", "KM_CONTROL_BYTES"),
]


@pytest.mark.parametrize(("macro", "old", "new", "message"), HEADER_MUTATIONS)
def test_an_edited_offset_fails_its_static_assert(
    abi_out: Path, compiler: Compiler, tmp_path: Path, macro: str, old: str, new: str, message: str
) -> None:
    include = _mutated_include(abi_out, tmp_path, macro, old, new)
    source = tmp_path / "check.c"
    source.write_text(C_SOURCE)
    c11 = _compile(compiler, "gcc", "c11", include, source)
    assert c11.returncode != 0
    assert f'static assertion failed: "{message}"' in c11.stderr
    cxx = compiler(["g++", "-std=c++17", f"-I{include}", "-fsyntax-only", "-x", "c++", str(source)])
    assert cxx.returncode != 0
    assert "static assertion failed" in cxx.stderr and message in cxx.stderr
    # C99 has no _Static_assert: the fallback still stops the build.
    c99 = _compile(compiler, "gcc", "c99", include, source)
    assert c99.returncode != 0
    assert "is negative" in c99.stderr
