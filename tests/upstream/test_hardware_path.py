"""The hardware path builds every generated kernel's ttnn.ProgramDescriptor with the real
classes of the ttnn release its level pins (ttlgen/device/hw.py), in a Python 3.12
environment with that wheel: ``import ttnn`` needs no device. The descriptors are read back
from ttnn's objects and compared with program.json.

Running a program needs a device and ttnn's device tensors (run_program_on_device, in
tests/device/test_build_and_hardware.py, skipped without them); here each buffer's DRAM
address and accessor arguments, which ttnn.TensorAccessorArgs would give for its device
tensor, are given directly: an interleaved DRAM tensor's are [ArgConfig::IsDram, page size].
"""

from __future__ import annotations

import json
import resource
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from upstream_helpers import project, unavailable

from tests.conftest import GENERATED
from ttlgen.device.formats import tile_bytes
from ttlgen.device.hw import UNPACK_TO_DEST_ENTRIES
from ttlgen.device.program import AccessorArgs, Program, load_program
from ttlgen.model.tt_metal_api import Release
from ttlgen.upstream import ttnn_env
from ttlgen.upstream.fetch import DownloadFailed

SCRIPT = Path(__file__).resolve().parent / "ttnn_descriptors.py"
DRAM_BASE = 0x40000000
IS_DRAM = 2  # tensor_accessor::ArgConfig::IsDram (hostdevcommon/tensor_accessor/arg_config.hpp)
CONFIGS = {"reader": "ReaderConfigDescriptor", "writer": "WriterConfigDescriptor", "compute": "ComputeConfigDescriptor"}


def _kernels_by_release() -> dict[Release, list[Path]]:
    """Each generated kernel directory, by the release its target's API level pins."""
    model = project()
    levels = {t.name: t.kernel_api for t in model.targets.targets}
    found: dict[Release, list[Path]] = defaultdict(list)
    for kernel in model.kernels.kernels:
        level_name = levels[kernel.target]
        if level_name is None:
            continue
        level = model.api.level(level_name)
        assert level is not None and level.release is not None
        found[level.release].append(GENERATED / "kernels" / kernel.name)
    assert found
    return found


def _buffers(program: Program) -> dict[str, dict[str, Any]]:
    return {
        b.name: {"address": DRAM_BASE + index * 0x100000, "accessor_args": [IS_DRAM, tile_bytes(b.format)]}
        for index, b in enumerate(program.buffers)
    }


def _expected(kernel_dir: Path, program: Program, buffers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    kernels = []
    for role, kernel in program.kernels.items():
        compile_time: list[int] = []
        for arg in kernel.compile_time_args:
            compile_time += buffers[arg.buffer]["accessor_args"] if isinstance(arg, AccessorArgs) else [arg]
        runtime = [buffers[a]["address"] if isinstance(a, str) else a for a in kernel.runtime_args]
        config: dict[str, Any] = {"class": CONFIGS[role]}
        if role == "compute":
            cc = program.compute_config
            modes = list(cc.unpack_to_dest_mode)
            config.update(
                math_fidelity=cc.math_fidelity,
                math_approx_mode=cc.math_approx_mode,
                fp32_dest_acc_en=cc.fp32_dest_acc_en,
                dst_full_sync_en=cc.dst_full_sync_en,
                bfp8_pack_precise=cc.bfp8_pack_precise,
                # Empty, or one entry per buffer format tt-metal tracks, the program's first.
                unpack_to_dest_mode=[*modes, *["Default"] * (UNPACK_TO_DEST_ENTRIES - len(modes))] if modes else [],
            )
        kernels.append({"source": str(kernel_dir / kernel.source), "config": config, "compile_time_args": compile_time, "runtime_args": runtime})
    cbs = [{"total_size": c.page_size * c.num_pages, "formats": [{"buffer_index": c.index, "page_size": c.page_size}]} for c in program.cbs]
    return {"kernels": kernels, "cbs": cbs, "semaphores": 0}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_every_generated_kernel_gets_a_real_ttnn_program_descriptor() -> None:
    if ttnn_env.python312() is None:
        unavailable(f"no Python {ttnn_env.WHEEL_PYTHON} to install the pinned ttnn into (set ${ttnn_env.PYTHON_ENV})")
    for release, kernel_dirs in _kernels_by_release().items():
        try:
            ttnn_env.ttnn_python(release)
        except (DownloadFailed, ttnn_env.EnvironmentUnavailable) as exc:
            unavailable(f"no environment with {release.name}: {exc}")
        programs = {d: load_program(d) for d in kernel_dirs}
        request = [{"kernel_dir": str(d), "buffers": _buffers(p)} for d, p in programs.items()]
        before = _children_cpu()
        done = ttnn_env.run_python(release, [str(SCRIPT)], stdin=json.dumps(request))
        spent = _children_cpu() - before
        assert done.returncode == 0, f"ttnn {release.version} rejects a descriptor:\n{done.stderr[-3000:]}"
        found = json.loads(done.stdout)
        assert len(found) == len(request)
        for item, descriptor in zip(request, found, strict=True):
            kernel_dir = Path(item["kernel_dir"])
            assert descriptor == _expected(kernel_dir, programs[kernel_dir], item["buffers"]), kernel_dir.name
        # Importing ttnn and building the descriptors, in an environment made once.
        assert spent < 30, f"{spent:.1f} s of CPU"


def test_a_non_empty_unpack_to_dest_mode_is_padded_to_ttnns_count() -> None:
    from ttlgen.device.hw import unpack_to_dest_modes

    assert unpack_to_dest_modes([]) == []
    padded = unpack_to_dest_modes(["UnpackToDestFp32", "Default", "UnpackToDestFp32"])
    assert len(padded) == UNPACK_TO_DEST_ENTRIES
    assert padded[:3] == ["UnpackToDestFp32", "Default", "UnpackToDestFp32"]
    assert set(padded[3:]) == {"Default"}
    with pytest.raises(ValueError, match="at most 64"):
        unpack_to_dest_modes(["Default"] * (UNPACK_TO_DEST_ENTRIES + 1))
