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
from kernel_helpers import REPO, SPECS

from tests.conftest import run_cli
from ttlgen.emit._base import EmitContext
from ttlgen.emit._header import finalize
from ttlgen.emit._templates import default_templates_dir
from ttlgen.emit.kernels import kernel_files
from ttlgen.pipeline import load_project, plan_specs

SPELLING = Path("ops") / "tt_metal_spelling.yaml"


def _api_names() -> frozenset[str]:
    spelling = load_project(SPECS).spelling
    names = spelling.api_names
    # The set covers every spelled call and the entry points (else this test proves nothing).
    assert {form.function for form in spelling.forms()} <= names
    assert spelling.kernel is not None and set(spelling.kernel.entry.names()) <= names
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
    implements the API the kernels call and maps their entry points, like a runtime)."""
    emulator = REPO / "ttlgen" / "device"
    modules = sorted(p for p in (REPO / "ttlgen").rglob("*.py") if emulator not in p.parents)
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
    _, plan = plan_specs(specs)
    (lowered,) = [k for k in plan.kernels if k.kernel.name == kernel]
    return {Path(f.path).name: finalize(f).decode() for f in kernel_files(lowered, EmitContext(default_templates_dir()))}


def test_entry_points_and_dataflow_calls_are_spec_data(spec_copy: Path) -> None:
    """An API level's other entry point and paging call are a spelling edit, not a code change."""
    _edit(spec_copy, 'begin: ["namespace NAMESPACE {", "void MAIN {"]\n    end: ["}", "} // namespace NAMESPACE"]', 'begin: ["void kernel_main() {"]\n    end: ["}"]')
    _edit(spec_copy, "read_page: noc_async_read_tile(", "read_page: noc_async_read_page(")
    files = _files(spec_copy, "eltwise_add_bf16")
    assert "namespace" not in files["compute.cpp"]
    assert "\nvoid kernel_main() {\n    constexpr uint32_t cb_a = 0;\n" in files["compute.cpp"]
    assert "noc_async_read_page((row0 + r) * tensor_cols + col0 + c, gen, l1);" in files["reader.cpp"]
    assert "noc_async_read_tile" not in files["reader.cpp"]


def test_address_generator_is_spec_data(spec_copy: Path) -> None:
    _edit(spec_copy, "type: InterleavedAddrGenFast<true>", "type: OtherGen")
    _edit(spec_copy, "fields: [address, page_size, data_format]", "fields: [data_format, address, page_size]")
    _edit(spec_copy, "page_size: page_size", "page_size: bytes_per_page")
    reader = _files(spec_copy, "eltwise_add_bf16")["reader.cpp"]
    assert "inline OtherGen dram_tensor(uint32_t arg, uint32_t cb) {" in reader
    assert "return {get_dataformat(cb), get_arg_val<uint32_t>(arg), get_tile_size(cb)};" in reader
    assert "l1 += gen.bytes_per_page;" in reader
    assert "const OtherGen a = dram_tensor(0, cb_a);" in reader


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
    """{kt} is a matmul's: an SFPU unary spelled with it has nothing to put there."""
    _edit(spec_copy, 'call: "exp_tile({dst})"', 'call: "exp_tile({dst}, {kt})"')
    error = _build_error(spec_copy, tmp_path)
    assert re.match(r"specs/ops/tt_metal_spelling\.yaml:\d+:\d+: ops\.tile_exp\.sfpu\.call: ", error), error
    assert "'exp_tile({dst}, {kt})': placeholder {kt} has no value here (operand routes of the sfpu strategy give: " in error
