"""Hardware path: the same kernel directory run through ttnn's generic program API.

:func:`program_descriptor` maps program.json one-to-one onto the ttnn descriptors of
tt-metal's ``program_descriptors.hpp`` (``ProgramDescriptor`` with ``KernelDescriptor``s,
``CBDescriptor``s and an empty semaphore list) on a single core (0, 0): per kernel its
source file, compile-time arguments (a buffer's accessor arguments come from
``ttnn.TensorAccessorArgs``), runtime arguments as ``[(CoreCoord, args)]`` and its config
(``ComputeConfigDescriptor`` from the compute config). It takes the ``ttnn`` module as an
argument, so it is tested against a stand-in that enforces the upstream field names and
shapes (tests/device/fake_ttnn.py). :func:`run_program_on_device` needs ``ttnn`` importable
and a Tenstorrent device; neither exists here, so that part runs only on such a machine.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .harness import RunResult
from .program import AccessorArgs, KernelSpec, Program, load_program


def ttnn_device_available() -> tuple[bool, str]:
    """(True, "") if ttnn imports and sees a device, else (False, reason)."""
    try:
        ttnn: Any = importlib.import_module("ttnn")
    except Exception as e:  # any import failure means "no hardware path"
        return False, f"ttnn is not importable ({type(e).__name__}: {e})"
    try:
        n = int(ttnn.GetNumAvailableDevices())
    except Exception as e:
        return False, f"ttnn cannot enumerate devices ({type(e).__name__}: {e})"
    if n == 0:
        return False, "ttnn found no Tenstorrent device"
    return True, ""


def data_types(ttnn: Any) -> dict[str, Any]:
    """The ttnn data type of each program.json format."""
    return {"Float32": ttnn.float32, "Float16_b": ttnn.bfloat16, "Bfp8_b": ttnn.bfloat8_b}


def _compile_time_args(ttnn: Any, kernel: KernelSpec, tensors: Mapping[str, Any]) -> list[int]:
    out: list[int] = []
    for arg in kernel.compile_time_args:
        if isinstance(arg, AccessorArgs):
            out.extend(int(a) for a in ttnn.TensorAccessorArgs(tensors[arg.buffer]).get_compile_time_args())
        else:
            out.append(arg)
    return out


def program_descriptor(ttnn: Any, prog: Program, kernel_dir: Path, tensors: Mapping[str, Any]) -> Any:
    """The ``ttnn.ProgramDescriptor`` of ``prog`` on core (0, 0); ``tensors`` maps each
    buffer name to its device tensor (its address and accessor arguments)."""
    coord = ttnn.CoreCoord(0, 0)
    core = ttnn.CoreRangeSet([ttnn.CoreRange(coord, coord)])
    dtype = data_types(ttnn)
    cc = prog.compute_config
    configs = {
        "reader": ttnn.ReaderConfigDescriptor(),
        "writer": ttnn.WriterConfigDescriptor(),
        "compute": ttnn.ComputeConfigDescriptor(
            math_fidelity=getattr(ttnn.MathFidelity, cc.math_fidelity),
            fp32_dest_acc_en=cc.fp32_dest_acc_en,
            dst_full_sync_en=cc.dst_full_sync_en,
            unpack_to_dest_mode=[getattr(ttnn.UnpackToDestMode, m) for m in cc.unpack_to_dest_mode],
            bfp8_pack_precise=cc.bfp8_pack_precise,
            math_approx_mode=cc.math_approx_mode,
        ),
    }
    kernels = []
    for role, k in prog.kernels.items():
        args = [int(tensors[a].buffer_address()) if isinstance(a, str) else a for a in k.runtime_args]
        kernels.append(
            ttnn.KernelDescriptor(
                kernel_source=str(Path(kernel_dir) / k.source),
                core_ranges=core,
                compile_time_args=_compile_time_args(ttnn, k, tensors),
                runtime_args=[(coord, args)],
                config=configs[role],
            )
        )
    cbs = [
        ttnn.CBDescriptor(
            total_size=c.page_size * c.num_pages,
            core_ranges=core,
            format_descriptors=[
                ttnn.CBFormatDescriptor(buffer_index=c.index, data_format=dtype[c.format], page_size=c.page_size)
            ],
        )
        for c in prog.cbs
    ]
    return ttnn.ProgramDescriptor(kernels=kernels, semaphores=[], cbs=cbs)


def run_program_on_device(kernel_dir: Path, inputs: Mapping[str, npt.ArrayLike]) -> RunResult:
    """Run ``kernel_dir`` on device 0 via ``ttnn.generic_op``; outputs as float32 2-D arrays."""
    ok, reason = ttnn_device_available()
    if not ok:
        raise RuntimeError(f"hardware path unavailable: {reason}")
    ttnn: Any = importlib.import_module("ttnn")
    torch: Any = importlib.import_module("torch")
    prog = load_program(Path(kernel_dir))
    dtype = data_types(ttnn)
    device = ttnn.open_device(device_id=0)
    try:
        tensors: dict[str, Any] = {}
        for b in prog.buffers:
            shape = (b.shape_tiles[0] * 32, b.shape_tiles[1] * 32)
            host = (
                np.asarray(inputs[b.name], dtype=np.float32)
                if b.role == "input"
                else np.full(shape, np.nan, np.float32)
            )
            tensors[b.name] = ttnn.from_torch(
                torch.from_numpy(host),
                dtype=dtype[b.format],
                layout=ttnn.TILE_LAYOUT,
                device=device,
            )
        # The output tensors are preallocated and passed with the inputs.
        ttnn.generic_op(list(tensors.values()), program_descriptor(ttnn, prog, Path(kernel_dir), tensors))
        outputs = {
            b.name: ttnn.to_torch(tensors[b.name]).float().numpy().astype(np.float32)
            for b in prog.buffers
            if b.role == "output"
        }
        return RunResult(outputs)
    finally:
        ttnn.close_device(device)
