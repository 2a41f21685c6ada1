"""Helpers for the emulator tests: fixture kernels, program edits, reference metrics.

A uniquely named module (not conftest) so test files can import it without
clashing with other conftest.py files of the suite."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ttlgen.device import Numerics, RunResult, run_program
from ttlgen.device.formats import to_bf16

FIXTURES = Path(__file__).resolve().parent / "fixtures"

Runner = Callable[..., RunResult]


def load_fixture_program(name: str) -> dict[str, Any]:
    """A fresh, mutable copy of a fixture's program.json."""
    data: dict[str, Any] = json.loads((FIXTURES / name / "program.json").read_text())
    return copy.deepcopy(data)


def set_ct_args(
    prog: dict[str, Any], args: list[int], roles: tuple[str, ...] = ("reader", "compute", "writer")
) -> None:
    for role in roles:
        prog["kernels"][role]["compile_time_args"] = list(args)


def matmul_program(
    mt: int,
    nt: int,
    kt: int,
    sub: tuple[int, int],
    *,
    out_format: str = "Float16_b",
    negate: bool = False,
    **config: Any,
) -> dict[str, Any]:
    """The matmul fixture resized to (mt x kt) @ (kt x nt) tiles with sub = (sub_h, sub_w);
    with ``negate`` it computes -(A @ B)."""
    prog = load_fixture_program("matmul")
    set_ct_args(prog, [mt, nt, kt, sub[0], sub[1], int(negate)])
    shapes = {"a": [mt, kt], "b": [kt, nt], "c": [mt, nt]}
    for b in prog["buffers"]:
        b["shape_tiles"] = shapes[b["name"]]
        if b["name"] == "c":
            b["format"] = out_format
    for cb in prog["cbs"]:
        cb["num_pages"] = {0: 2 * sub[0], 1: 2 * sub[1], 16: 2 * sub[0] * sub[1]}[cb["index"]]
        if cb["index"] == 16:
            cb["format"] = out_format
            cb["page_size"] = 4096 if out_format == "Float32" else 2048
    prog["compute_config"].update(config)
    return prog


def matmul_inputs(mt: int, nt: int, kt: int, seed: int) -> dict[str, npt.NDArray[np.float32]]:
    """Random bf16 operands a (mt x kt tiles) and b (kt x nt tiles) for the matmul fixture."""
    rng = np.random.default_rng(seed)
    return {
        "a": to_bf16(rng.standard_normal((mt * 32, kt * 32))),
        "b": to_bf16(rng.standard_normal((kt * 32, nt * 32))),
    }


def make_runner() -> Runner:
    """run(fixture_name, inputs, program=None, numerics=None, timeout_s=10.0) -> RunResult."""

    def _run(
        name: str,
        inputs: Mapping[str, npt.ArrayLike],
        program: Mapping[str, Any] | None = None,
        numerics: Numerics | None = None,
        timeout_s: float = 10.0,
    ) -> RunResult:
        return run_program(
            FIXTURES / name, inputs, program=program, numerics=numerics, timeout_s=timeout_s
        )

    return _run


def pcc(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    x = np.asarray(a, dtype=np.float64).ravel()
    y = np.asarray(b, dtype=np.float64).ravel()
    return float(np.corrcoef(x, y)[0, 1])
