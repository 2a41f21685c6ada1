"""Hardware path: the same kernel directory run through ttnn's generic program API.

:func:`program_descriptor` maps program.json one-to-one onto the ttnn descriptors of
tt-metal's ``program_descriptors.hpp`` (``ProgramDescriptor`` with ``KernelDescriptor``s,
``CBDescriptor``s and an empty semaphore list) on a single core (0, 0): per kernel its
source file, compile-time arguments (a buffer's accessor arguments, which
``ttnn.TensorAccessorArgs`` gives for its device tensor), runtime arguments as
``[(CoreCoord, args)]``, its defines as ``[(name, value)]`` (KernelDescriptor.defines)
and its config (``ComputeConfigDescriptor`` from the compute config). It takes the ``ttnn`` module and each buffer's :class:`DeviceBuffer` as
arguments, so it builds the descriptors without a device: tests/upstream builds them for
every generated kernel with the real classes of the pinned ttnn, in a Python 3.12
environment (ttlgen.upstream.ttnn_env). :func:`run_program_on_device` needs ``ttnn``
importable and a Tenstorrent device.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .harness import RunResult
from .program import Program, load_program


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


# How many entries a non-empty unpack_to_dest_mode of ComputeConfigDescriptor must have: one
# per buffer format tt-metal tracks (its 64 circular buffers); entries past the program's
# are Default.
UNPACK_TO_DEST_ENTRIES = 64


@dataclass(frozen=True)
class DeviceBuffer:
    """Where a program.json buffer lives on the device: its DRAM address (a runtime
    argument) and the compile-time words of its ``ttnn.TensorAccessorArgs``."""

    address: int
    accessor_args: tuple[int, ...]


def device_buffer(ttnn: Any, tensor: Any) -> DeviceBuffer:
    """The :class:`DeviceBuffer` of a tensor allocated on a device."""
    words = ttnn.TensorAccessorArgs(tensor).get_compile_time_args()
    return DeviceBuffer(int(tensor.buffer_address()), tuple(int(w) for w in words))


def data_types(ttnn: Any) -> dict[str, Any]:
    """The ttnn data type of each program.json format."""
    return {"Float32": ttnn.float32, "Float16_b": ttnn.bfloat16, "Bfp8_b": ttnn.bfloat8_b}


def unpack_to_dest_modes(modes: Sequence[str]) -> list[str]:
    """program.json's unpack_to_dest_mode as ComputeConfigDescriptor takes it: empty, or
    :data:`UNPACK_TO_DEST_ENTRIES` entries (tt-metal rejects a shorter list at launch)."""
    if not modes:
        return []
    if len(modes) > UNPACK_TO_DEST_ENTRIES:
        raise ValueError(f"unpack_to_dest_mode has {len(modes)} entries; tt-metal takes at most {UNPACK_TO_DEST_ENTRIES}")
    return [*modes, *["Default"] * (UNPACK_TO_DEST_ENTRIES - len(modes))]


def compute_config(ttnn: Any, prog: Program) -> Any:
    """The ``ttnn.ComputeConfigDescriptor`` of the program's compute config. Its
    constructor takes no unpack_to_dest_mode: that is a property, set after."""
    cc = prog.compute_config
    config = ttnn.ComputeConfigDescriptor(
        math_fidelity=getattr(ttnn.MathFidelity, cc.math_fidelity),
        math_approx_mode=cc.math_approx_mode,
        fp32_dest_acc_en=cc.fp32_dest_acc_en,
        dst_full_sync_en=cc.dst_full_sync_en,
        bfp8_pack_precise=cc.bfp8_pack_precise,
    )
    modes = unpack_to_dest_modes(cc.unpack_to_dest_mode)
    if modes:
        config.unpack_to_dest_mode = [getattr(ttnn.UnpackToDestMode, m) for m in modes]
    return config


def program_descriptor(ttnn: Any, prog: Program, kernel_dir: Path, buffers: Mapping[str, DeviceBuffer]) -> Any:
    """The ``ttnn.ProgramDescriptor`` of ``prog`` on core (0, 0); ``buffers`` gives each
    buffer's address and accessor arguments (:func:`device_buffer` of its device tensor)."""
    coord = ttnn.CoreCoord(0, 0)
    core = ttnn.CoreRangeSet([ttnn.CoreRange(coord, coord)])
    dtype = data_types(ttnn)
    configs = {
        "reader": ttnn.ReaderConfigDescriptor(),
        "writer": ttnn.WriterConfigDescriptor(),
        "compute": compute_config(ttnn, prog),
    }
    kernels = []
    for role, k in prog.kernels.items():
        args = [buffers[a].address if isinstance(a, str) else a for a in k.runtime_args]
        kernels.append(
            ttnn.KernelDescriptor(
                kernel_source=str(Path(kernel_dir) / k.source),
                core_ranges=core,
                compile_time_args=k.compile_time_words(lambda name: buffers[name].accessor_args),
                runtime_args=[(coord, args)],
                defines=list(k.defines),
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
        buffers = {name: device_buffer(ttnn, tensor) for name, tensor in tensors.items()}
        ttnn.generic_op(list(tensors.values()), program_descriptor(ttnn, prog, Path(kernel_dir), buffers))
        outputs = {
            b.name: ttnn.to_torch(tensors[b.name]).float().numpy().astype(np.float32)
            for b in prog.buffers
            if b.role == "output"
        }
        return RunResult(outputs)
    finally:
        ttnn.close_device(device)
