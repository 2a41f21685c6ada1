"""The generated C++ of TT-Lang's tables meets the gates of all generated C/C++: warning-free
under -Wall -Wextra -Werror -pedantic in C++17 and C++20, without MLIR or LLVM, naming its
source specs, and clang-format clean also when the specs' names and texts are long."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GENERATED, REPO, real_plan, run_cli
from tests.cpp_tables.support import (
    DEFAULT_STANDARD,
    HERE,
    STANDARDS,
    canonical,
    compile_cpp,
    cpp_table_answers,
    differences,
    library_table_answers,
)

HEADER = Path("include/ttl_kernel_config/kernel_target_tables.hpp")
ADAPTER = Path("include/ttl_kernel_config/KernelTargetEnvironments.gen.inc")
DUMP = Path("tests/ttl_kernel_config_tables_dump.cpp")


def _clang_format() -> str:
    found = shutil.which("clang-format", path=str(Path(sys.executable).parent)) or shutil.which("clang-format")
    if found is None:
        pytest.fail("clang-format is not installed; install the test extra: pip install -e '.[test]'")
    return found


# The adapter driver in every standard, and the dump program in DEFAULT_STANDARD (the
# standard cpp_table_answers compiles it in), are compiled with these warnings as errors
# by the fixtures of tests/cpp_tables/conftest.py, which then run them for
# tests/cpp_tables/test_cpp_equality.py (test_adapter_answers_every_query_as_the_resolver_does,
# and committed_answers): the same compiles are not repeated here.
@pytest.mark.parametrize(
    ("source", "std"), [*(("header", std) for std in STANDARDS), *(("dump", std) for std in STANDARDS if std != DEFAULT_STANDARD)]
)
def test_generated_cpp_compiles_warning_free(source: str, std: str, tmp_path: Path) -> None:
    program = {"header": tmp_path / "tu.cpp", "dump": GENERATED / DUMP}[source]
    if source == "header":
        program.write_text(f'#include "{HEADER.relative_to("include").as_posix()}"\nint main() {{ return 0; }}\n')
    result = compile_cpp(program, tmp_path / "program", [HERE, GENERATED / "include"], std)
    assert result.returncode == 0, result.stderr


def test_table_header_includes_the_standard_library_only() -> None:
    includes = re.findall(r"#include <([^>]+)>", (GENERATED / HEADER).read_text(encoding="utf-8"))
    assert includes and all("/" not in i and "." not in i for i in includes), includes
    assert "#include \"" not in (GENERATED / HEADER).read_text(encoding="utf-8")


def test_generated_cpp_names_its_source_specs() -> None:
    _, plan = real_plan()
    assert plan.kernel_target_cpp is not None
    for path in (HEADER, ADAPTER, DUMP):
        text = (GENERATED / path).read_text(encoding="utf-8")
        for source in plan.kernel_target_cpp.sources:
            assert f"//   {source}\n" in text, (path, source)


def _lengthen(specs: Path) -> None:
    """Long names (up to the 63 characters a name may have) and texts everywhere the C++
    prints them."""
    renames = {
        "gen1_llk": "gen1_low_level_kernels_of_the_compute_config_descriptor_api",
        "name: wormhole_b0_gen1_config": "name: wormhole_b0_launched_through_the_metal_two_compute_gen1_config",
    }
    for path in sorted(specs.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        for old, new in renames.items():
            text = text.replace(old, new)
        text = text.replace("why: a bf16 row broadcast", "why: " + "a long reason, " * 12 + "a bf16 row broadcast")
        text = text.replace('warning: "full-fp32 row reduce', 'warning: "' + "quite a long warning " * 8 + "full-fp32 row reduce")
        path.write_text(text, encoding="utf-8")


def test_long_names_and_texts_stay_clang_format_clean(spec_copy: Path, tmp_path: Path) -> None:
    _lengthen(spec_copy)
    out = tmp_path / "generated"
    build = run_cli("build", "--specs", spec_copy, "--out", out)
    assert build.exit_code == 0, build.stderr
    for path in (HEADER, ADAPTER, DUMP):
        result = subprocess.run(
            [_clang_format(), f"--style=file:{REPO / '.clang-format'}", "--dry-run", "-Werror", str(out / path)],
            capture_output=True, text=True, check=False,
        )
        assert result.returncode == 0, result.stderr
    cpp = cpp_table_answers(out, tmp_path)
    python = library_table_answers(spec_copy)
    assert canonical(cpp) == canonical(python), differences(cpp, python)
