"""Compile and run the generated C++ of a tree, and get the Python resolver's answers for
the same queries (tests/cpp_tables/answers.py), from the library with the plan stage's
tables and from the generated package."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SPECS, real_plan
from tests.cpp_tables import answers
from tests.resolver.kit import tables_of
from ttlgen import pipeline, resolver

HERE = Path(__file__).resolve().parent
STANDIN = HERE / "ttlang_standin.hpp"
DRIVER = HERE / "adapter_driver.cpp"
DUMP = Path("tests") / "ttl_kernel_config_tables_dump.cpp"
WARNINGS = ("-Wall", "-Wextra", "-Werror", "-pedantic")
STANDARDS = ("c++17", "c++20")
# What a program here is compiled as unless a test names a standard.
DEFAULT_STANDARD = STANDARDS[0]
# MLIR types the adapter is driven with, by how MLIR prints them, with what MLIR says of each:
# the vocabulary's element type its predicate recognizes it as (None: none does) and, for an
# integer or float type, its bit width and whether it is a float (answers.MlirType).
MLIR_TYPES: dict[str, answers.MlirType] = {
    "bf16": answers.MlirType("bf16", 16, True),
    "f16": answers.MlirType("f16", 16, True),
    "f32": answers.MlirType("f32", 32, True),
    "si32": answers.MlirType("si32", 32, False),
    "ui16": answers.MlirType("u16", 16, False),
    "ui32": answers.MlirType("u32", 32, False),
    # No predicate recognizes these: the adapter knows them by bit width alone.
    "i32": answers.MlirType(None, 32, False),
    "i16": answers.MlirType(None, 16, False),
    "ui8": answers.MlirType(None, 8, False),
    "i1": answers.MlirType(None, 1, False),
    "si64": answers.MlirType(None, 64, False),
    "f64": answers.MlirType(None, 64, True),
    "tf32": answers.MlirType(None, 19, True),
    "f8E4M3FN": answers.MlirType(None, 8, True),
    # Neither an integer nor a float: no element.
    "index": answers.MlirType(None, None, False),
}
UNKNOWN_ARCHITECTURE = "grayskull"


def gxx() -> str:
    found = shutil.which("g++")
    if found is None:
        pytest.fail("g++ is needed to compile the generated C++")
    return found


def compile_cpp(
    source: Path | Sequence[Path], binary: Path, includes: list[Path], std: str = DEFAULT_STANDARD
) -> subprocess.CompletedProcess[str]:
    """Compile and link one program from ``source`` (one translation unit or several)."""
    sources = [source] if isinstance(source, Path) else list(source)
    return subprocess.run(
        [gxx(), f"-std={std}", *WARNINGS, *(f"-I{i}" for i in includes), *map(str, sources), "-o", str(binary)],
        capture_output=True, text=True, check=False, timeout=300,
    )


def check_syntax(source: Path, includes: list[Path], std: str = DEFAULT_STANDARD) -> subprocess.CompletedProcess[str]:
    """Compile ``source`` without linking: its return code says whether it compiles."""
    return subprocess.run(
        [gxx(), f"-std={std}", *WARNINGS, "-fsyntax-only", *(f"-I{i}" for i in includes), str(source)],
        capture_output=True, text=True, check=False, timeout=300,
    )


def run_json_lines(binary: Path, *args: str) -> list[dict[str, Any]]:
    run = subprocess.run([str(binary), *args], capture_output=True, text=True, check=False, timeout=120)
    assert (run.returncode, run.stderr) == (0, ""), run.stderr
    return [json.loads(line) for line in run.stdout.splitlines()]


def cpp_table_answers(tree: Path, work: Path) -> list[dict[str, Any]]:
    """Compile tree/tests/<dump program> against tree/include and run it."""
    binary = work / "tables_dump"
    built = compile_cpp(tree / DUMP, binary, [tree / "include"])
    assert built.returncode == 0, built.stderr
    return run_json_lines(binary)


def architecture_names(specs: Path) -> list[str]:
    """Names to select an architecture by: each architecture's name, its runtime name, that
    in lower case and capitalized (which upstream never prints), and one no spec declares."""
    names = [UNKNOWN_ARCHITECTURE]
    for arch in tables_of(specs).tables.architectures:
        names.append(str(arch.name))
        if arch.runtime_name is not None:
            names += [arch.runtime_name, arch.runtime_name.lower(), arch.runtime_name.capitalize()]
    return list(dict.fromkeys(names))


def cpp_adapter_answers(tree: Path, specs: Path, work: Path, std: str = DEFAULT_STANDARD) -> list[dict[str, Any]]:
    """Compile the adapter driver against the stand-in and tree/include, and run it."""
    binary = work / f"adapter_driver_{std.replace('+', 'x')}"
    built = compile_cpp(DRIVER, binary, [HERE, tree / "include"], std)
    assert built.returncode == 0, built.stderr
    return run_json_lines(binary, *architecture_names(specs), "--", *MLIR_TYPES)


def library_table_answers(specs: Path) -> list[dict[str, Any]]:
    """The resolver library's answers, over the tables the plan stage builds from ``specs``."""
    return answers.table_answers(resolver, resolver.Catalog(tables_of(specs).tables))


def package_table_answers(tree: Path) -> list[dict[str, Any]]:
    """The generated package's answers, in an interpreter without site-packages or ttlgen."""
    run = subprocess.run(
        [sys.executable, "-I", "-S", "-B", str(HERE / "answers.py"), str(tree / "python")],
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    loaded: list[dict[str, Any]] = json.loads(run.stdout)
    return loaded


def library_adapter_answers(specs: Path) -> list[dict[str, Any]]:
    _, plan = real_plan() if specs == SPECS else pipeline.plan(specs)
    c = plan.kernel_target_cpp
    assert c is not None
    primitives = [e.spec for e in c.primitive.enumerators]
    catalog = resolver.Catalog(tables_of(specs).tables)
    return answers.adapter_answers(resolver, catalog, primitives, MLIR_TYPES, architecture_names(specs))


def canonical(records: list[dict[str, Any]]) -> Counter[str]:
    """Records as comparable text; the order of a set-valued answer does not matter."""
    out: Counter[str] = Counter()
    for record in records:
        record = dict(record)
        for key in ("widths", "configurations"):
            if key in record:
                record[key] = sorted(record[key])
        out[json.dumps(record, sort_keys=True)] += 1
    return out


def differences(left: list[dict[str, Any]], right: list[dict[str, Any]], limit: int = 10) -> str:
    a, b = canonical(left), canonical(right)
    only_left = sorted((a - b).elements())[:limit]
    only_right = sorted((b - a).elements())[:limit]
    return "only in the first:\n  " + "\n  ".join(only_left) + "\nonly in the second:\n  " + "\n  ".join(only_right)
