"""The generated kernels fit the tt-metal API level of their target, at `current` and at `legacy`.

Every shipped kernel compiles (syntax only, warnings and deprecations as errors) against the
kernel-API headers generated from the API spec of its level; the same kernels generated at
`legacy` (the shipped runtime API pinned to its legacy runtime version) pass the legacy
checks and compile against the legacy headers. The headers declare only what the level has:
a removed function does not exist, a deprecated form warns with upstream's message (or,
where the reference quotes none, ttlgen's summary of the change).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest
from kernel_helpers import all_kernels, legacy_build, pin_api_level

from tests.conftest import GENERATED, REPO, SPECS, host_define_flags, real_project, run_cli
from ttlgen.device.build import CompileError, compile_kernel
from ttlgen.device.program import load_program
from ttlgen.emit.emulator_api import function_lines
from ttlgen.errors import Mark
from ttlgen.model.call_forms import Placeholder
from ttlgen.model.cpp_declarations import parse_declaration
from ttlgen.model.kernels import Store, walk_statements, walk_values
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
                compile_kernel(kernel_dir / spec.source, role, spec.emulated_compile_time_args(), api_dir, kernel_defines=spec.defines)
            except CompileError as error:
                errors.append(str(error))
    return errors


def _compile_snippet(tmp_path: Path, api_dir: Path, body: str, includes: Iterable[str]) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "snippet.cpp"
    source.write_text("".join(f'#include "{h}"\n' for h in includes) + f"void kernel_main() {{\n{body}\n}}\n")
    # The C locale keeps the compiler's quotes ASCII.
    return subprocess.run([*FLAGS, f"-I{api_dir}", f"-I{GLUE}", str(source)], capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})


@pytest.fixture(scope="module")
def legacy_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every shipped kernel generated at API level `legacy` (a build with the legacy pin)."""
    return legacy_build(tmp_path_factory) / "out"


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


def _expected_defines(project: Project, level: str) -> dict[str, dict[str, str]]:
    """Per kernel, the defines its ops' spellings at ``level`` need, with the kernel's
    attribute values spelled (read from the model, not listed here)."""
    spelled = project.spelling.at(level)
    assert spelled is not None
    expected: dict[str, dict[str, str]] = {}
    for kernel in project.kernels.kernels:
        found: dict[str, str] = {}
        for statement in walk_statements(kernel.body):
            if not isinstance(statement, Store):
                continue
            for use in walk_values(statement.value):
                for spelling in (s for s in spelled.spellings if s.op == use.op):
                    attrs = {f"attr.{a}": spelling.attribute_spelling(a, v) or v for a, v in use.attrs}
                    for define in spelling.defines:
                        value = define.bind(attrs)
                        assert value is not None
                        found[define.name] = value
        expected[kernel.name] = found
    return expected


def _program_defines(tree: Path, name: str) -> dict[str, str]:
    defines: dict[str, str] = json.loads((tree / "kernels" / name / "program.json").read_text())["kernels"]["compute"].get("defines", {})
    return defines


def test_a_kernel_carries_the_defines_its_ops_spellings_need_at_its_level(legacy_tree: Path) -> None:
    project = real_project()
    legacy = _expected_defines(project, "legacy")
    # Some op of the shipped kernels needs a define the host passes at the legacy level
    # (ttnn 0.69.0's reduce reads REDUCE_OP/REDUCE_DIM), so the check below says something.
    assert any(legacy.values())
    for name, defines in legacy.items():
        assert _program_defines(legacy_tree, name) == defines, name
        # The emulator and the hardware path read them from program.json.
        assert dict(load_program(legacy_tree / "kernels" / name).kernels["compute"].defines) == defines
    for name, defines in _expected_defines(project, "current").items():
        assert _program_defines(GENERATED, name) == defines, name


def test_a_legacy_kernel_without_its_defines_does_not_compile_on_the_emulator(legacy_tree: Path) -> None:
    # The emulator's headers take a host define from the kernel's build alone, as tt-metal's
    # JIT does: without it, a header that reads it does not compile.
    name = next(n for n, d in _expected_defines(real_project(), "legacy").items() if d)
    spec = load_program(legacy_tree / "kernels" / name).kernels["compute"]
    with pytest.raises(CompileError):
        compile_kernel(legacy_tree / "kernels" / name / spec.source, "compute", (), legacy_tree / "emulator" / "legacy")


def _reduce_attrs(project: Project) -> tuple[str, dict[str, str], dict[str, str]]:
    """An op with a define at legacy whose value follows an attribute, and two attribute sets
    of it that give that define different values."""
    spelled = project.spelling.at("legacy")
    assert spelled is not None
    spelling = next(s for s in spelled.spellings if any(isinstance(d.value, Placeholder) for d in s.defines))
    define = next(d for d in spelling.defines if isinstance(d.value, Placeholder))
    assert isinstance(define.value, Placeholder)
    varied = define.value.key.removeprefix("attr.")
    kernel = next(k for k in project.kernels.kernels for s in walk_statements(k.body) if isinstance(s, Store) for v in walk_values(s.value) if v.op == spelling.op)
    use = next(v for s in walk_statements(kernel.body) if isinstance(s, Store) for v in walk_values(s.value) if v.op == spelling.op)
    attrs = dict(use.attrs)
    values = [v for v, _ in dict(spelling.attributes)[varied] if v != attrs[varied]]
    return spelling.op, attrs, {**attrs, varied: values[0]}


def test_two_ops_of_a_kernel_needing_different_values_of_a_define_is_a_located_error(tmp_path: Path) -> None:
    import shutil

    project = real_project()
    op, first, second = _reduce_attrs(project)
    kernel = next(k for k in project.kernels.kernels for s in walk_statements(k.body) if isinstance(s, Store) for v in walk_values(s.value) if v.op == op)
    specs = tmp_path / "specs"
    shutil.copytree(SPECS, specs)
    pin_api_level(specs, "legacy")
    source = Path(kernel.source)
    text = (specs / source.relative_to("specs")).read_text(encoding="utf-8") if not source.is_absolute() else source.read_text(encoding="utf-8")
    # The shipped kernel again under a new name, its one use of the op computed twice into
    # two outputs, with attributes that need different values of one define.
    import yaml

    data = yaml.safe_load(text)["kernels"][kernel.name]
    data["dfbs"]["out_b"] = {**next(d for d in data["dfbs"].values() if "output" in d), "index": 17}

    def twice(body: list[dict[str, object]]) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for step in body:
            if "loop" in step:
                loop = dict(step["loop"])  # type: ignore[call-overload]
                loop["body"] = twice(loop["body"])
                out.append({"loop": loop})
            elif "store" in step:
                store = dict(step["store"])  # type: ignore[call-overload]
                out.append({"store": {**store, "value": {**store["value"], "attrs": first}}})
                target = store["to"]
                out.append({"reserve": "out_b"})
                out.append({"store": {**store, "to": "out_b", "value": {**store["value"], "attrs": second}}})
                out.append({"push": "out_b"})
                del target
            else:
                out.append(step)
        return out

    data["body"] = twice(data["body"])
    (specs / "kernels" / "zz_defines.yaml").write_text(
        "spec: ttlgen.kernel/v1\n" + yaml.safe_dump({"kernels": {"zz_conflicting_defines": data}}, sort_keys=False), encoding="utf-8"
    )
    result = run_cli("validate", "--specs", specs)
    assert result.exit_code == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if "per kernel" in line]
    assert len(lines) == 1, result.stderr
    assert re.match(r"^\S*zz_defines\.yaml:\d+:\d+: kernels\.zz_conflicting_defines\.", lines[0]), lines[0]
    assert "the host passes one value of a define per kernel" in lines[0]


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
        # A header that reads a define the host passes compiles only with it, as upstream's
        # does: each gets a value an op's spelling gives it.
        defines = host_define_flags(level)
        proc = subprocess.run([*FLAGS, "-Wextra", *defines, f"-I{root}", f"-I{GLUE}", *files], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
