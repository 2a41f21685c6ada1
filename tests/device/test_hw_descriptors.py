"""The hardware path builds tt-metal's current program descriptors from program.json.

Without ttnn the descriptors are built against tests/device/fake_ttnn.py, a stand-in that
takes only upstream's field names (program_descriptors.hpp@002fa1c1) and checks each
field's shape, so a descriptor the real bindings would reject fails here too. The run on a
device is test_build_and_hardware.py's, skipped without ttnn and a device.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fake_ttnn
import pytest

from tests.conftest import GENERATED
from ttlgen.device.hw import program_descriptor
from ttlgen.device.program import load_program

KERNEL = GENERATED / "kernels" / "eltwise_add_bf16"


class _Tensor:
    def __init__(self, address: int) -> None:
        self.address = address

    def buffer_address(self) -> int:
        return self.address


ADDRESSES = {"a": 0x1000, "b": 0x2000, "out": 0x3000}


def _descriptor() -> Any:
    tensors = {name: _Tensor(address) for name, address in ADDRESSES.items()}
    return program_descriptor(fake_ttnn, load_program(KERNEL), KERNEL, tensors)


def test_kernels_take_runtime_args_per_core_as_pairs() -> None:
    reader, compute, writer = _descriptor().kernels
    core = fake_ttnn.CoreCoord(0, 0)
    assert reader.runtime_args == [(core, [0x1000, 0x2000])]
    assert compute.runtime_args == [(core, [])]
    assert writer.runtime_args == [(core, [0x3000])]


def test_accessor_arguments_come_from_the_hosts_tensor_accessor_args() -> None:
    reader, compute, writer = _descriptor().kernels
    assert reader.compile_time_args == [0xACC, 0x1000, 0xACC, 0x2000]
    assert compute.compile_time_args == []
    assert writer.compile_time_args == [0xACC, 0x3000]


def test_each_kernel_is_its_source_file_with_its_config() -> None:
    reader, compute, writer = _descriptor().kernels
    assert [Path(k.kernel_source).name for k in (reader, compute, writer)] == ["reader.cpp", "compute.cpp", "writer.cpp"]
    assert reader.source_type is fake_ttnn.SourceType.FILE_PATH
    assert isinstance(reader.config, fake_ttnn.ReaderConfigDescriptor)
    assert isinstance(writer.config, fake_ttnn.WriterConfigDescriptor)
    config = compute.config
    assert isinstance(config, fake_ttnn.ComputeConfigDescriptor)
    assert config.math_fidelity is fake_ttnn.MathFidelity.HiFi4
    assert (config.fp32_dest_acc_en, config.dst_full_sync_en, config.unpack_to_dest_mode) == (False, False, [])


def test_circular_buffers_are_one_format_descriptor_each() -> None:
    cbs = _descriptor().cbs
    assert [(c.total_size, [(f.buffer_index, f.data_format, f.page_size) for f in c.format_descriptors]) for c in cbs] == [
        (4 * 2048, [(0, fake_ttnn.bfloat16, 2048)]),
        (4 * 2048, [(1, fake_ttnn.bfloat16, 2048)]),
        (4 * 2048, [(16, fake_ttnn.bfloat16, 2048)]),
    ]


def test_the_stand_in_rejects_the_runtime_args_shape_before_pr_33911() -> None:
    core = fake_ttnn.CoreRangeSet([fake_ttnn.CoreRange(fake_ttnn.CoreCoord(0, 0), fake_ttnn.CoreCoord(0, 0))])
    with pytest.raises(TypeError, match=r"KernelDescriptor\.runtime_args: expected a list of <class 'tuple'>"):
        fake_ttnn.KernelDescriptor(kernel_source="k.cpp", core_ranges=core, runtime_args=[[1, 2]], config=fake_ttnn.ReaderConfigDescriptor())


def test_the_stand_in_rejects_a_field_upstream_does_not_have() -> None:
    with pytest.raises(TypeError, match=r"unknown field\(s\) \['approx_mode'\]"):
        fake_ttnn.ComputeConfigDescriptor(approx_mode=True)
