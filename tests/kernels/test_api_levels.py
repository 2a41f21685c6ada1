"""The generated kernels fit the tt-metal API level of their target, at `current` and at `legacy`.

Every shipped kernel compiles (syntax only, warnings and deprecations as errors) against the
kernel-API headers generated from the API spec of its level; the same kernels generated at
`legacy` (the shipped runtime API pinned to its legacy runtime version) pass the legacy
checks and compile against the legacy headers. The headers declare only what the level has:
a removed function does not exist, a deprecated form warns with upstream's message (or,
where the reference quotes none, ttlgen's summary of the change).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest
from kernel_helpers import all_kernels, pin_api_level

from tests.conftest import GENERATED, REPO, SPECS, real_project, run_cli
from ttlgen.device.build import CompileError, compile_kernel
from ttlgen.device.program import load_program
from ttlgen.emit.emulator_api import function_lines
from ttlgen.errors import Mark
from ttlgen.model.cpp_declarations import parse_declaration
from ttlgen.model.project import Project
from ttlgen.model.tt_metal_api import Deprecation, FunctionForm, KernelKind

GLUE = REPO / "ttlgen" / "device" / "include"
FLAGS = ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Werror", "-Werror=deprecated-declarations"]


def _syntax_errors(tree: Path, api_dir: Path) -> list[str]:
    """Compile every kernel source of ``tree`` against ``api_dir``; the compiler's complaints.

    Each source is compiled as the emulator compiles it (-Wall -Wextra -Werror, so a
    deprecated form fails too, and its entry point must be the level's): through the
    emulator's compile cache, keyed by the source, the level's headers, the glue, the flags
    and the compiler, so a kernel an emulator run or an earlier test compiled is not
    compiled again."""
    errors = []
    for kernel_dir in sorted((tree / "kernels").iterdir()):
        for role, spec in load_program(kernel_dir).kernels.items():
            try:
                compile_kernel(kernel_dir / spec.source, role, spec.emulated_compile_time_args(), api_dir)
            except CompileError as error:
                errors.append(str(error))
    return errors


def _compile_snippet(tmp_path: Path, api_dir: Path, body: str, includes: Iterable[str]) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "snippet.cpp"
    source.write_text("".join(f'#include "{h}"\n' for h in includes) + f"void kernel_main() {{\n{body}\n}}\n")
    # The C locale keeps the compiler's quotes ASCII.
    return subprocess.run([*FLAGS, f"-I{api_dir}", f"-I{GLUE}", str(source)], capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})


@functools.cache
def _legacy_tree(root: Path) -> Path:
    specs = root / "specs"
    import shutil

    shutil.copytree(SPECS, specs)
    pin_api_level(specs, "legacy")
    result = run_cli("build", "--specs", specs, "--out", root / "out")
    assert result.exit_code == 0, result.stderr
    return root / "out"


@pytest.fixture(scope="module")
def legacy_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every shipped kernel generated at API level `legacy` (a build with the legacy pin)."""
    return _legacy_tree(tmp_path_factory.mktemp("legacy"))


def test_shipped_targets_use_the_current_api_level(project: Project) -> None:
    levels = {t.name: t.kernel_api for t in project.targets.targets if t.runtime_api != "none" and t.rejected is None}
    assert levels and set(levels.values()) == {"current"}, levels
    assert {k.api_level for k in all_kernels().values()} == {"current"}


def test_program_json_names_the_api_level_of_its_sources() -> None:
    for name in all_kernels():
        assert json.loads((GENERATED / "kernels" / name / "program.json").read_text())["kernel_api"] == "current"


def test_every_shipped_kernel_compiles_against_the_current_api_headers() -> None:
    assert _syntax_errors(GENERATED, GENERATED / "emulator" / "current") == []


def test_every_shipped_kernel_generated_at_legacy_compiles_against_the_legacy_api_headers(legacy_tree: Path) -> None:
    assert sorted(p.name for p in (legacy_tree / "kernels").iterdir()) == sorted(all_kernels())
    assert _syntax_errors(legacy_tree, legacy_tree / "emulator" / "legacy") == []


def test_legacy_kernels_use_the_legacy_api(legacy_tree: Path) -> None:
    compute = (legacy_tree / "kernels" / "matmul_subblocked" / "compute.cpp").read_text()
    reader = (legacy_tree / "kernels" / "matmul_subblocked" / "reader.cpp").read_text()
    assert "\nvoid kernel_main() {\n" in compute
    assert '#include "api/compute/matmul.h"' in compute
    assert "binary_op_init_common(cb_b, cb_a, cb_out);" in compute
    assert "mm_block_init_short(cb_a, cb_b, 0, 4, 1, 2);" in compute
    assert "noc_async_read_page(" in reader and "InterleavedAddrGenFast<true>" in reader
    assert json.loads((legacy_tree / "kernels" / "matmul_subblocked" / "program.json").read_text())["kernel_api"] == "legacy"


def test_current_kernels_use_the_current_api() -> None:
    compute = (GENERATED / "kernels" / "matmul_subblocked" / "compute.cpp").read_text()
    reader = (GENERATED / "kernels" / "matmul_subblocked" / "reader.cpp").read_text()
    assert "\nvoid kernel_main() {\n" in compute and "namespace" not in compute
    assert '#include "api/compute/matmul.h"' in compute
    assert "compute_kernel_hw_startup<SrcOrder::Reverse>(cb_a, cb_b, cb_out);" in compute
    assert "matmul_block_init(cb_a, cb_b, 0, 4, 1, 2);" in compute and "mm_" not in compute
    assert "noc_async_read_page(" in reader and "TensorAccessor(a_args," in reader


def test_the_current_headers_lack_what_the_level_removed(tmp_path: Path) -> None:
    result = _compile_snippet(tmp_path, GENERATED / "emulator" / "current", "    mm_block_init_short(0, 1);", ["api/compute/matmul.h"])
    assert result.returncode != 0
    assert "'mm_block_init_short' was not declared in this scope" in result.stderr


def test_a_deprecated_form_warns_with_upstreams_message(tmp_path: Path) -> None:
    level = real_project().api.level("current")
    assert level is not None
    (form,) = level.forms("unary_op_init_common", KernelKind.COMPUTE)
    assert form.deprecated is not None and form.deprecated.quoted
    result = _compile_snippet(tmp_path, GENERATED / "emulator" / "current", "    unary_op_init_common(0, 16);", [form.header])
    assert result.returncode != 0
    assert f"is deprecated: {form.deprecated.message} ({form.deprecated.source})" in result.stderr
    assert "[-Werror=deprecated-declarations]" in result.stderr


def test_a_deprecation_without_upstreams_words_carries_ttlgens_summary() -> None:
    # A release may deprecate a function without a message; the spec then says why in its
    # own words, and the emulator's attribute says whose words they are.
    form = FunctionForm(
        parse_declaration("void old_init(uint32_t icb)"), "api/compute/x.h", KernelKind.COMPUTE, "ckernel",
        frozenset(), Deprecation("use new_init", "ttnn 0.81.1", quoted=False), (), None, Mark("x.yaml"),
    )  # fmt: skip
    emulation = real_project().api.emulation
    assert emulation is not None
    assert '[[deprecated("use new_init (ttlgen\'s summary of ttnn 0.81.1)")]]' in function_lines(form, emulation)


def test_the_current_form_of_the_same_function_compiles(tmp_path: Path) -> None:
    result = _compile_snippet(tmp_path, GENERATED / "emulator" / "current", "    unary_bcast_init<BroadcastType::COL>(0);", ["api/compute/bcast.h"])
    assert result.returncode == 0, result.stderr


def test_headers_that_exist_in_no_version_are_not_generated() -> None:
    for level, prefix in (("current", "api/compute"), ("legacy", "api/compute")):
        for op in ("log", "tanh", "sigmoid", "abs"):
            assert not (GENERATED / "emulator" / level / prefix / "eltwise_unary" / f"{op}.h").exists()


@pytest.mark.device
def test_the_emulator_runs_a_legacy_kernel(legacy_tree: Path) -> None:
    """Full inits, the *_tiles_init and mm_* inits and InterleavedAddrGenFast paging still run."""
    import numpy as np

    from ttlgen.device import run_program
    from ttlgen.device.formats import to_bf16

    rng = np.random.default_rng(5)
    a, b = (to_bf16(rng.standard_normal((64, 64))) for _ in range(2))
    result = run_program(legacy_tree / "kernels" / "eltwise_add_bf16", {"a": a, "b": b}, api_dir=legacy_tree / "emulator" / "legacy")
    np.testing.assert_allclose(result.outputs["out"], to_bf16(a + b), rtol=2**-7, atol=2**-7)


def test_every_generated_api_header_compiles_on_its_own(tmp_path: Path) -> None:
    """Each header's bodies name glue that exists, whatever kernel includes it."""
    sources = []
    for level in ("current", "legacy"):
        root = GENERATED / "emulator" / level
        for header in sorted(root.rglob("*.h")):
            source = tmp_path / f"{level}_{len(sources)}.cpp"
            source.write_text(f'#include "{header.relative_to(root).as_posix()}"\n')
            sources.append((root, source))
    assert len(sources) > 40
    for level in ("current", "legacy"):
        root = GENERATED / "emulator" / level
        files = [str(s) for r, s in sources if r == root]
        proc = subprocess.run([*FLAGS, "-Wextra", f"-I{root}", f"-I{GLUE}", *files], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
