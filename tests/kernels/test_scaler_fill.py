"""The reduce scaler tile is built by the generated reader in L1, as upstream's readers do
(reduce.h@0112bb1e, tt-metal-api.md section 5): the first row of each face holds the pool
type's scaler (SUM 1, AVG 1/N or 1/sqrt(N) for REDUCE_SCALAR, MAX 1), the rest is zero.
The value comes from the kernel's reduce and the spelling spec's `scaler` entry; the float64
reference of `ttlgen run` reduces with the same tile."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from kernel_helpers import all_kernels, reduce_kernel_spec

from ttlgen import pipeline
from ttlgen.emit._base import EmitContext, Templates
from ttlgen.emit._header import finalize
from ttlgen.emit._templates import default_templates_dir
from ttlgen.emit.kernels import emit_kernel
from ttlgen.model.project import Project
from ttlgen.model.spelling import TileLayout
from ttlgen.plan.kernels import LoweredKernel
from ttlgen.plan.scaler_fill import encode
from ttlgen.run import PRIMITIVE_REFERENCES, reference, run_lowered


def _files(lowered: LoweredKernel) -> dict[str, str]:
    return {Path(f.path).name: finalize(f).decode("utf-8") for f in emit_kernel(lowered, EmitContext(Templates(default_templates_dir())))}


def _reduce_kernel_and_project(specs: Path, pool: str, dim: str = "row", dtype: str = "bf16") -> tuple[LoweredKernel, Project]:
    """A reduce kernel added to ``specs``, lowered, and the project it was planned in."""
    name = f"reduce_{dim}_{pool}_{dtype}"
    (specs / "kernels" / "scaler.yaml").write_text(reduce_kernel_spec(name, "blackhole", pool, dim, dtype))
    project, plan = pipeline.plan(specs)
    (lowered,) = [k for k in plan.kernels if k.kernel.name == name]
    return lowered, project


def _reduce_kernel(specs: Path, pool: str, dim: str = "row", dtype: str = "bf16") -> LoweredKernel:
    return _reduce_kernel_and_project(specs, pool, dim, dtype)[0]


def test_reader_fills_the_sum_scaler_into_the_first_row_of_each_face() -> None:
    reader = _files(all_kernels()["reduce_row_bf16"])["reader.cpp"]
    # bf16 1.0 twice per word; a 32x32 tile of 2-byte elements is 512 words, 4 faces of 128,
    # a face row 8.
    assert "fill_face_rows(cb_scaler, 1, 512, 4, 128, 8, 0x3F803F80);" in reader
    assert "volatile uint32_t* words = reinterpret_cast<volatile uint32_t*>(get_write_ptr(cb));" in reader
    zero, rows = reader.index("words[w] = 0;"), reader.index("words[t * tile_words + f * face_words + w] = word;")
    assert zero < rows < reader.index("cb_push_back(cb, tiles);")


def test_program_json_has_no_dram_scaler_input() -> None:
    for name in ("reduce_row_bf16", "reduce_col_bf16", "reduce_scalar_bf16"):
        program = json.loads(_files(all_kernels()[name])["program.json"])
        assert [b["name"] for b in program["buffers"]] == ["x", "out"], name
        assert program["kernels"]["reader"]["runtime_args"] == [{"buffer": "x"}], name
        assert program["kernels"]["reader"]["compile_time_args"] == [{"accessor_args": "x"}], name
        assert 2 in [cb["index"] for cb in program["cbs"]], name  # the scaler's CB stays


def test_avg_scaler_is_one_over_the_reduced_count(spec_copy: Path) -> None:
    reader = _files(_reduce_kernel(spec_copy, "avg"))["reader.cpp"]
    assert "fill_face_rows(cb_scaler, 1, 512, 4, 128, 8, 0x3D003D00);" in reader  # bf16 1/32, twice


def test_avg_scaler_of_an_f32_buffer_is_one_f32_element_per_word(spec_copy: Path) -> None:
    reader = _files(_reduce_kernel(spec_copy, "avg", dtype="f32"))["reader.cpp"]
    (bits,) = struct.unpack("<I", struct.pack("<f", 1 / 32))
    assert f"fill_face_rows(cb_scaler, 1, 1024, 4, 256, 16, 0x{bits:08X});" in reader


def test_max_scaler_is_one(spec_copy: Path) -> None:
    reader = _files(_reduce_kernel(spec_copy, "max", dim="col"))["reader.cpp"]
    assert "fill_face_rows(cb_scaler, 1, 512, 4, 128, 8, 0x3F803F80);" in reader


def test_avg_scaler_is_one_over_n_per_pass_so_one_over_sqrt_n_for_reduce_scalar(project: Project) -> None:
    """On a 16x64 tile N differs by dimension: row 1/64, col 1/16, scalar 1/sqrt(1024)."""
    (spelling,) = [s for s in project.spelling.levels[0].spellings if s.op == "tile_reduce"]
    scaler = spelling.scaler
    assert scaler is not None
    tile = TileLayout(16, 64, 16, 16)
    values = {dim: scaler.value({"pool": "avg", "reduce_dim": dim}, tile) for dim in ("row", "col", "scalar")}
    assert values == {"row": 1 / 64, "col": 1 / 16, "scalar": 1 / 32}
    assert {scaler.value({"pool": pool, "reduce_dim": "scalar"}, tile) for pool in ("sum", "max")} == {1.0}


def test_scaler_value_is_encoded_to_nearest_even_in_the_buffer_format() -> None:
    (f32,) = struct.unpack("<I", struct.pack("<f", 1 / 3))  # 0x3EAAAAAB
    assert encode(1 / 3, 16, 7)[0] == 0x3EAB  # the upper half, rounded up
    assert encode(1 / 3, 32, 23)[0] == f32
    assert encode(1.0, 16, 7) == (0x3F80, 1.0)
    assert encode(-0.75, 16, 7) == (0xBF40, -0.75)


def _face_row_scaler(values: np.ndarray, elsewhere: float) -> np.ndarray:
    """A 32x32 scaler tile: rows 0 and 16 (the first row of each face) hold ``values``."""
    tile = np.full((32, 32), elsewhere)
    tile[::16, :] = values
    return tile


@pytest.mark.parametrize("dim", ["row", "col", "scalar"])
def test_float64_reference_reads_the_scaler_from_the_first_row_of_each_face(dim: str) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((32, 32))
    s = rng.uniform(0.5, 2.0, size=(2, 32))
    out = PRIMITIVE_REFERENCES["reduce"](x, _face_row_scaler(s, 0.0), attrs={"reduce_dim": dim, "pool": "sum"})
    r, c = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    w_row = s[r // 16, c]  # the reduced column within the face: its own column
    w_col = s[r // 16, (c // 16) * 16 + r % 16]  # the reduced row within the face
    if dim == "row":
        np.testing.assert_allclose(out[:, 0], (x * w_row).sum(axis=1))
    elif dim == "col":
        np.testing.assert_allclose(out[0, :], (x * w_col).sum(axis=0))
    else:
        np.testing.assert_allclose(out[0, 0], ((x * w_col).sum(axis=0) * s[0]).sum())
    garbage = PRIMITIVE_REFERENCES["reduce"](x, _face_row_scaler(s, 7.0), attrs={"reduce_dim": dim, "pool": "sum"})
    np.testing.assert_array_equal(garbage, out)


def test_reference_of_an_avg_reduce_is_the_mean(spec_copy: Path) -> None:
    lowered = _reduce_kernel(spec_copy, "avg")
    x = np.random.default_rng(2).standard_normal((32, 64))
    expected = reference(lowered.kernel, {"x": x}, dict(lowered.op_math), lowered.fills)["out"]
    np.testing.assert_allclose(expected[:, 0], x[:, :32].mean(axis=1))
    np.testing.assert_allclose(expected[:, 32], x[:, 32:].mean(axis=1))


@pytest.mark.device
@pytest.mark.parametrize("dim", ["row", "col", "scalar"])
def test_avg_reduce_kernel_runs_on_the_emulator(spec_copy: Path, dim: str) -> None:
    # The API the kernel runs with is the one of the tree it was planned in (adding a kernel
    # to the copy changes no API level): one plan of the copy gives both.
    lowered, project = _reduce_kernel_and_project(spec_copy, "avg", dim)
    report, _, _ = run_lowered(lowered, seed=7, api=project.api)
    assert report.passed, report.error or report.outputs
