"""The spelling spec is the only source of tt-metal names, and it is checked where it is written.

Every kernel-API function, type and entry-point name the generated kernels use comes from
specs/ops/tt_metal_spelling.yaml; the generator's code and the kernel templates name none
of them (the forbidden set is derived from the spec, so a new spelling extends it). Each
spelled call is parsed into one call with known placeholders, with located errors.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kernel_helpers import REPO, pin_api_level

from tests.conftest import real_project, run_cli
from ttlgen import pipeline
from ttlgen.emit._base import EmitContext, Templates
from ttlgen.emit._header import finalize
from ttlgen.emit._templates import default_templates_dir
from ttlgen.emit.kernels import emit_kernel
from ttlgen.model.tt_metal_api import KernelKind

SPELLING = Path("ops") / "tt_metal_spelling.yaml"


def _api_names() -> frozenset[str]:
    project = real_project()
    names = project.spelling.api_names
    # The set covers every spelled call and every name the API specs declare, entry points
    # included (else this test proves nothing).
    assert {form.function for form in project.spelling.forms()} <= names
    assert {name for level in project.api.levels for name in level.names()} <= names
    assert {level.entry(kind).function for level in project.api.levels for kind in KernelKind} <= names
    return names


def _mentions(paths: list[Path], names: frozenset[str]) -> list[str]:
    word = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names))) + r")\b")
    found = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found.extend(f"{path.relative_to(REPO)}:{number}: {m.group(1)}" for m in word.finditer(line))
    return found


def test_no_tt_metal_name_appears_in_the_generators_python() -> None:
    """Every module of ttlgen/ but the emulator, which stands in for tt-metal itself (it
    implements the API the kernels call and maps their entry points, like a runtime), and
    ttlgen/upstream, which compiles kernels as tt-metal's JIT does (its defines included)."""
    outside = (REPO / "ttlgen" / "device", REPO / "ttlgen" / "upstream")
    modules = sorted(p for p in (REPO / "ttlgen").rglob("*.py") if not any(d in p.parents for d in outside))
    assert len(modules) > 40
    assert _mentions(modules, _api_names()) == []


def test_no_tt_metal_name_appears_in_the_kernel_templates() -> None:
    assert _mentions(sorted((REPO / "templates" / "kernels").glob("*.j2")), _api_names()) == []


def _edit(specs: Path, old: str, new: str) -> None:
    path = specs / SPELLING
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _files(specs: Path, kernel: str) -> dict[str, str]:
    _, plan = pipeline.plan(specs)
    (lowered,) = [k for k in plan.kernels if k.kernel.name == kernel]
    return {Path(f.path).name: finalize(f).decode() for f in emit_kernel(lowered, EmitContext(Templates(default_templates_dir())))}


def _edit_file(specs: Path, path: str, old: str, new: str) -> None:
    file = specs / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new))


def test_the_entry_point_is_api_spec_data(spec_copy: Path) -> None:
    """Another entry-point form is an edit of the API level, not a code change."""
    _edit_file(spec_copy, "tt_metal/current.yaml", "compute: {function: kernel_main}", "compute: {namespace: NAMESPACE, function_macro: MAIN}")
    compute = _files(spec_copy, "eltwise_add_bf16")["compute.cpp"]
    assert "\nnamespace NAMESPACE {\nvoid MAIN {\n    constexpr uint32_t cb_a = 0;\n" in compute
    assert compute.endswith("}\n} // namespace NAMESPACE\n")


def test_the_tensor_accessor_is_spelling_data(spec_copy: Path) -> None:
    """The current level's accessor shape swapped for a brace-initialised generator."""
    _edit(spec_copy, """    current:
      compile_time_args: TensorAccessorArgs<{offset}>()
      next_offset: next_compile_time_args_offset()
      construct: TensorAccessor({args}, {address}, {page_size})""", """    current:
      type: InterleavedAddrGenFast<true>
      fields: [address, page_size, data_format]""")
    files = _files(spec_copy, "eltwise_add_bf16")
    reader = files["reader.cpp"]
    assert "const InterleavedAddrGenFast<true> a =\n        {get_arg_val<uint32_t>(0), get_tile_size(cb_a), get_dataformat(cb_a)};" in reader
    assert "TensorAccessor" not in reader
    assert "compile_time_args" not in files["program.json"]


def test_an_accessor_type_the_level_lacks_is_a_located_error(spec_copy: Path, tmp_path: Path) -> None:
    _edit(spec_copy, "      type: InterleavedAddrGenFast<true>", "      type: InterleavedAddrGen<true>")
    error = _build_error_of_legacy(spec_copy, tmp_path)
    assert re.match(r"specs/ops/tt_metal_spelling\.yaml:\d+:\d+: dataflow\.accessor\.legacy\.type: ", error), error
    assert "unknown type 'InterleavedAddrGen' at API level 'legacy' (did you mean 'InterleavedAddrGenFast'?)" in error


def _build_error_of_legacy(specs: Path, tmp_path: Path) -> str:
    pin_api_level(specs, "legacy")
    return _build_error(specs, tmp_path)


def _build_error(specs: Path, tmp_path: Path) -> str:
    result = run_cli("build", "--specs", specs, "--out", tmp_path / "out")
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()
    return result.stderr


def test_two_calls_in_one_spelling_are_a_located_error(spec_copy: Path, tmp_path: Path) -> None:
    _edit(spec_copy, "pack: pack_tile<true>({dst}, {cb}, {tile})", "pack: pack_tile<true>({dst}, {cb}, {tile}); tile_regs_release()")
    error = _build_error(spec_copy, tmp_path)
    assert re.match(r"specs/ops/tt_metal_spelling\.yaml:\d+:\d+: kernel\.pack: ", error)
    assert "'; tile_regs_release()' follows the call; write exactly one call, without ';'" in error


@pytest.mark.parametrize(
    ("old", "new", "path", "expected"),
    [
        ("l1_acc: pack_reconfig_l1_acc({enable})", "l1_acc: pack_reconfig_l1_acc({cb})", "kernel.l1_acc", "unknown placeholder {cb}; placeholders here: {enable}"),
        ("wait_front: cb_wait_front({cb}, {tiles})", "wait_front: cb_wait_front({cb}, {dst})", "cb.wait_front", "unknown placeholder {dst}; placeholders here: {cb}, {tiles}"),
        ("read_barrier: noc_async_read_barrier()", "read_barrier: noc_async_read_barrier({cb})", "dataflow.read_barrier", "unknown placeholder {cb}; placeholders here: none"),
        ("acquire: tile_regs_acquire()", "acquire: tile_regs_acquire(", "kernel.dst.acquire", "must be one C++ call"),
    ],
)
def test_bad_placeholders_and_calls_are_located_errors(spec_copy: Path, tmp_path: Path, old: str, new: str, path: str, expected: str) -> None:
    _edit(spec_copy, old, new)
    error = _build_error(spec_copy, tmp_path)
    assert re.match(rf"specs/ops/tt_metal_spelling\.yaml:\d+:\d+: {re.escape(path)}: ", error), error
    assert expected in error


def test_dataflow_buffer_declaring_a_spelled_name_is_a_located_error(spec_copy: Path, tmp_path: Path) -> None:
    """A DFB 'wait_front' would declare cb_wait_front, the CB wait of the spelling spec."""
    path = spec_copy / "kernels" / "elementwise.yaml"
    text = path.read_text()
    path.write_text(text.replace("      a: {index: 0, dtype: bf16, block: [1, 2]", "      wait_front: {index: 0, dtype: bf16, block: [1, 2]", 1))
    error = _build_error(spec_copy, tmp_path)
    assert "the generated C++ would declare 'cb_wait_front' for 'wait_front', which the kernel API already names" in error


def test_placeholder_an_op_cannot_fill_is_a_located_error(spec_copy: Path, tmp_path: Path) -> None:
    """{kt} is a matmul's: an SFPU unary spelled with it has nothing to put there (in a
    parameter whose type a count fits, exp_tile's scale, so only the value is missing)."""
    _edit(spec_copy, 'call: "exp_tile({dst})"', 'call: "exp_tile({dst}, VectorMode::RC, {kt})"')
    error = _build_error(spec_copy, tmp_path)
    assert re.match(r"specs/ops/tt_metal_spelling\.yaml:\d+:\d+: ops\.tile_exp\.sfpu\.call: ", error), error
    assert "'exp_tile({dst}, VectorMode::RC, {kt})': placeholder {kt} has no value here (operand routes of the sfpu strategy give: " in error
