"""Hardware path: the same kernel directory run through ttnn's generic program API.

Only usable with ``ttnn`` importable and a Tenstorrent device attached; neither
exists in this environment, so this code is untested here. It maps program.json
one-to-one onto ttnn descriptors on a single core (0, 0).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .harness import RunResult
from .program import load_program


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


def run_program_on_device(kernel_dir: Path, inputs: Mapping[str, npt.ArrayLike]) -> RunResult:
    """Run ``kernel_dir`` on device 0 via ``ttnn.generic_op``; outputs as float32 2-D arrays."""
    ok, reason = ttnn_device_available()
    if not ok:
        raise RuntimeError(f"hardware path unavailable: {reason}")
    ttnn: Any = importlib.import_module("ttnn")
    torch: Any = importlib.import_module("torch")
    prog = load_program(Path(kernel_dir))
    dtype = {"Float32": ttnn.float32, "Float16_b": ttnn.bfloat16}
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
        core = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(0, 0))])
        cc = prog.compute_config
        configs = {
            "reader": ttnn.ReaderConfigDescriptor(),
            "writer": ttnn.WriterConfigDescriptor(),
            "compute": ttnn.ComputeConfigDescriptor(
                math_fidelity=getattr(ttnn.MathFidelity, cc.math_fidelity),
                fp32_dest_acc_en=cc.fp32_dest_acc_en,
                dst_full_sync_en=cc.dst_full_sync_en,
                unpack_to_dest_mode=[
                    getattr(ttnn.UnpackToDestMode, m) for m in cc.unpack_to_dest_mode
                ],
                math_approx_mode=cc.math_approx_mode,
                bfp8_pack_precise=cc.bfp8_pack_precise,
            ),
        }
        kernels = []
        for role, k in prog.kernels.items():
            args = [
                tensors[a].buffer_address() if isinstance(a, str) else a for a in k.runtime_args
            ]
            kernels.append(
                ttnn.KernelDescriptor(
                    kernel_source=str(Path(kernel_dir) / k.source),
                    core_ranges=core,
                    compile_time_args=list(k.compile_time_args),
                    runtime_args=[[args]],
                    config=configs[role],
                )
            )
        cbs = [
            ttnn.CBDescriptor(
                total_size=c.page_size * c.num_pages,
                core_ranges=core,
                format_descriptors=[
                    ttnn.CBFormatDescriptor(
                        buffer_index=c.index, data_format=dtype[c.format], page_size=c.page_size
                    )
                ],
            )
            for c in prog.cbs
        ]
        descriptor = ttnn.ProgramDescriptor(kernels=kernels, semaphores=[], cbs=cbs)
        ttnn.generic_op(list(tensors.values()), descriptor)
        outputs = {
            b.name: ttnn.to_torch(tensors[b.name]).float().numpy().astype(np.float32)
            for b in prog.buffers
            if b.role == "output"
        }
        return RunResult(outputs)
    finally:
        ttnn.close_device(device)
