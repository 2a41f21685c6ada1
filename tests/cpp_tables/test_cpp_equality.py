"""The generated C++ answers every query exactly as the Python resolver does: every target x
primitive x element type (x operand route), every full-fp32 kind, capacities, default
targets, rejection texts and the runtime's values. Exhaustive, not sampled."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import GENERATED, SPECS
from tests.cpp_tables.support import (
    MLIR_TYPES,
    STANDARDS,
    canonical,
    differences,
    library_adapter_answers,
    library_table_answers,
    package_table_answers,
)
from tests.resolver.kit import catalog, tables


def _queries(records: list[dict[str, object]]) -> Counter[object]:
    return Counter(r["query"] for r in records)


def test_table_header_answers_every_query_as_the_resolver_library_does(committed_answers: list[dict[str, Any]]) -> None:
    cpp = committed_answers
    python = library_table_answers(SPECS)
    assert canonical(cpp) == canonical(python), differences(cpp, python)


def test_equality_domain_is_every_target_primitive_element_route_and_kind(committed_answers: list[dict[str, Any]]) -> None:
    t = tables().tables
    compilable, primitives, elements = len(t.targets), len(t.primitives), len(t.elements)
    cpp = committed_answers
    counts = _queries(cpp)
    assert counts["dest_width"] == compilable * primitives * elements
    assert counts["dfb_unpack"] == compilable * primitives * elements * 3  # none, dfb, dst
    assert counts["full_fp32"] == compilable * len(t.full_fp32_kinds)
    assert counts["target"] == compilable + len(t.rejected)
    assert counts["default_target"] == len(t.architectures) + 1  # and the environment without one
    # Each query is answered once.
    assert max(canonical(cpp).values()) == 1


def test_generated_package_answers_every_query_as_the_resolver_library_does() -> None:
    package = package_table_answers(GENERATED)
    library = library_table_answers(SPECS)
    assert canonical(package) == canonical(library), differences(package, library)


@pytest.mark.parametrize("std", STANDARDS)
def test_adapter_answers_every_query_as_the_resolver_does(std: str, committed_adapter_answers: Callable[[str], list[dict[str, Any]]]) -> None:
    # The adapter compiled against the stand-in for TT-Lang's headers, driven through its two
    # factories: each target by name, and each architecture (none, every declared one, one
    # no spec declares) through KernelTargetEnvironment::get's switch.
    cpp = committed_adapter_answers(std)
    python = library_adapter_answers(SPECS)
    assert canonical(cpp) == canonical(python), differences(cpp, python)
    t = tables().tables
    created = sum(1 for r in cpp if r["query"] == "environment" and r["created"])
    tt_lang_primitives = len(t.primitives) + 1  # and TT-Lang's unknown one
    counts = _queries(cpp)
    assert counts["supports"] == created * tt_lang_primitives * len(MLIR_TYPES) * 2  # 16- and 32-bit
    assert counts["configurations"] == created * tt_lang_primitives * len(MLIR_TYPES) * 3
    assert counts["full_fp32"] == created * len(t.full_fp32_kinds)
    assert max(canonical(cpp).values()) == 1


CONSTANTS = """\
import json, sys
sys.path.insert(0, sys.argv[1])
from ttl_kernel_config import runtime_constants as rc
print(json.dumps({name: (dict(value) if hasattr(value, "items") else value) for name, value in vars(rc).items() if name.isupper()}))
"""


def test_runtime_constants_replace_tt_langs_copies_and_match_the_cpp_tables(committed_answers: list[dict[str, Any]]) -> None:
    run = subprocess.run([sys.executable, "-I", "-S", "-B", "-c", CONSTANTS, str(GENERATED / "python")], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    constants = json.loads(run.stdout)
    # What TT-Lang writes by hand today (ttl_api.py, constants.py) is kept; an architecture
    # added by spec is one more entry.
    assert {"blackhole": "blackhole", "wormhole_b0": "wormhole_b0"}.items() <= constants["ARCHITECTURE_BY_DEVICE_NAME"].items()
    assert constants["NUM_CIRCULAR_BUFFERS"]["ComputeConfigDescriptor"] == 64
    assert constants["SUPPORTED_MATH_FIDELITIES"] == ["LoFi", "HiFi2", "HiFi3", "HiFi4"]
    # The same values as the C++ tables.
    cpp = committed_answers
    defaults = {r["architecture"]: r["target"] for r in cpp if r["query"] == "default_target"}
    runtime_names = {r["architecture"]: r["runtime_name"].lower() for r in cpp if r["query"] == "architecture"}
    rejected = {r["target"] for r in cpp if r["query"] == "target" and r["rejection"] is not None}
    assert constants["TARGET_BY_DEVICE_NAME"] == {
        runtime_names[arch]: target for arch, target in defaults.items() if arch in runtime_names and target not in rejected
    }
    assert constants["ARCHITECTURE_BY_DEVICE_NAME"] == {
        runtime_names[arch]: arch for arch, target in defaults.items() if arch in runtime_names and target not in rejected
    }
    assert constants["NUM_CIRCULAR_BUFFERS"] == {
        r["runtime_api"]: r["num_circular_buffers"] for r in cpp if r["query"] == "runtime_api" and r["runtime_api"] != "none"
    }
    assert constants["SUPPORTED_MATH_FIDELITIES"] == [r["name"] for r in cpp if r["query"] == "math_fidelity"]


# TT-Lang's TargetInfo.h DFB index capacities, as upstream writes them (a test of the specs
# against upstream): TargetInfo.h runs before the kernel-config pass, so a rejected
# architecture has one too.
TARGET_INFO_DFB_CAPACITY = {"none": 32, "wormhole_b0": 32, "blackhole": 64, "quasar": 32}


def test_both_languages_give_each_architecture_target_infos_dfb_capacity(committed_answers: list[dict[str, Any]]) -> None:
    cpp = {r["architecture"]: r["dfb_capacity"] for r in committed_answers if r["query"] == "default_target"}
    python = {arch: catalog().dfb_capacity(None if arch == "none" else arch) for arch in cpp}
    assert cpp == python
    # Upstream's architectures have upstream's capacities; one added by spec has its own.
    assert TARGET_INFO_DFB_CAPACITY.items() <= cpp.items()
