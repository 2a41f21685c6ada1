"""Run in the Python 3.12 environment with the pinned ttnn (ttlgen.upstream.ttnn_env):
builds the ttnn.ProgramDescriptor of each kernel directory given through
ttlgen.device.hw.program_descriptor, with ttnn's real classes, and prints what the
descriptors hold as JSON, read back from ttnn's objects.

stdin: a JSON list of {"kernel_dir": path, "buffers": {name: {"address": int,
"accessor_args": [int]}}}. stdout: a JSON list, per kernel, of its kernels (source, config
class, compile-time arguments, runtime arguments of core (0, 0)), its compute config and
its CBs. A descriptor ttnn rejects is a Python exception: the script exits non-zero with
its traceback on stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import ttnn

from ttlgen.device.hw import DeviceBuffer, program_descriptor
from ttlgen.device.program import load_program


def _config(config: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"class": type(config).__name__}
    if isinstance(config, ttnn.ComputeConfigDescriptor):
        found.update(
            math_fidelity=config.math_fidelity.name,
            math_approx_mode=config.math_approx_mode,
            fp32_dest_acc_en=config.fp32_dest_acc_en,
            dst_full_sync_en=config.dst_full_sync_en,
            bfp8_pack_precise=config.bfp8_pack_precise,
            unpack_to_dest_mode=[m.name for m in config.unpack_to_dest_mode],
        )
    return found


def describe(item: dict[str, Any]) -> dict[str, Any]:
    kernel_dir = Path(item["kernel_dir"])
    buffers = {name: DeviceBuffer(b["address"], tuple(b["accessor_args"])) for name, b in item["buffers"].items()}
    descriptor = program_descriptor(ttnn, load_program(kernel_dir), kernel_dir, buffers)
    assert isinstance(descriptor, ttnn.ProgramDescriptor)
    return {
        "kernels": [
            {
                "source": k.kernel_source,
                "config": _config(k.config),
                "compile_time_args": list(k.compile_time_args),
                "runtime_args": list(k.runtime_args[0][0]),
            }
            for k in descriptor.kernels
        ],
        "cbs": [
            {
                "total_size": c.total_size,
                "formats": [{"buffer_index": f.buffer_index, "page_size": f.page_size} for f in c.format_descriptors],
            }
            for c in descriptor.cbs
        ],
        "semaphores": len(descriptor.semaphores),
    }


if __name__ == "__main__":
    json.dump([describe(item) for item in json.load(sys.stdin)], sys.stdout)
