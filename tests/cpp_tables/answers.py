"""The Python resolver's answer to every query the generated C++ answers, as the JSON
records the C++ programs print.

Standard library only, and written against the resolver's public API alone (``Catalog``,
``TargetEnvironment``, ``Route``, ``TargetError``), so the same functions run over the
``ttlgen.resolver`` library with the plan stage's tables and, in a fresh interpreter, over
the generated ``ttl_kernel_config`` package (``python answers.py <generated/python>``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any, NamedTuple

Record = dict[str, Any]


class MlirType(NamedTuple):
    """What MLIR says of a type: the declared element type a vocabulary predicate
    recognizes it as (None: none does) and, for an integer or float type, its bit width
    (None: neither) and whether it is a float."""

    element: str | None
    bits: int | None
    is_float: bool


def _configurations(env: Any, primitive: str, element: str, route: Any) -> list[list[Any]]:
    return sorted([width.value, mode.value] for width, mode in env.dfb_configurations(primitive, element, route))


def _answers(env: Any, tables: Any, m: ModuleType) -> Iterator[Record]:
    for primitive in tables.primitives:
        for element in tables.elements:
            widths = sorted(w.value for w in env.dest_widths(primitive, element.name))
            yield {"query": "dest_width", "target": env.name, "primitive": str(primitive), "element": str(element.name), "widths": widths}
            for route in m.Route:
                yield {
                    "query": "dfb_unpack", "target": env.name, "primitive": str(primitive), "element": str(element.name),
                    "route": route.value, "configurations": _configurations(env, primitive, element.name, route),
                }
    for kind in tables.full_fp32_kinds:
        support = env.full_fp32(kind.name)
        yield {"query": "full_fp32", "target": env.name, "kind": str(kind.name), "supported": support.supported, "warning": support.warning}


def _capacity(m: ModuleType, catalog: Any, architecture: str | None) -> int | None:
    """TargetInfo.h's DFB capacity of an architecture; None where the resolver knows none."""
    try:
        capacity: int = catalog.dfb_capacity(architecture)
    except m.TargetError:
        return None
    return capacity


def table_answers(m: ModuleType, catalog: Any) -> list[Record]:
    """What tests/ttl_kernel_config_tables_dump.cpp prints, from the Python resolver."""
    tables = catalog.tables
    out: list[Record] = []
    for target in tables.targets:
        env = catalog.get_target(target.name)
        out.append({
            "query": "target", "target": target.name, "architecture": str(target.architecture or "none"),
            "runtime_api": target.runtime_api.name if target.runtime_api is not None else "none",
            "default_for_architecture": target.default_for_architecture, "dfb_capacity": env.dfb_capacity,
            "generation": target.generation.name, "dst_sync_by_capacity": target.generation.auto_sync.value == "by_capacity",
            "typed_policy_values": target.generation.policy_values.value == "typed",
            "dfb_capacity_description": target.dfb_capacity_description,
            "dest_width": target.dest_width.origin, "dfb_unpack": target.dfb_unpack.origin,
            "unpack_effective_for": [str(e.name) for e in tables.elements if e.name in target.unpack_effective_for],
            "unpack_other_entries_need_32bit_dest": target.unpack_other_entries_need_32bit_dest,
            "unpack_unbound_entries_rejected": target.unpack_unbound_entries_rejected, "rejection": None,
        })
        out.extend(_answers(env, tables, m))
    for rejected in tables.rejected:
        try:
            catalog.get_target(rejected.name)
        except m.TargetError as error:
            assert error.message.endswith(rejected.reason), error.message
        else:
            raise AssertionError(f"rejected target {rejected.name} was selected")
        # A rejected target's C++ record: no runtime or tables, its architecture's capacity and its reason.
        out.append({
            "query": "target", "target": rejected.name, "architecture": str(rejected.architecture or "none"),
            "runtime_api": "none", "default_for_architecture": rejected.default_for_architecture,
            "dfb_capacity": rejected.dfb_capacity,
            "generation": "", "dst_sync_by_capacity": False, "typed_policy_values": False, "dfb_capacity_description": None,
            "dest_width": None, "dfb_unpack": None, "unpack_effective_for": [],
            "unpack_other_entries_need_32bit_dest": False, "unpack_unbound_entries_rejected": False,
            "rejection": rejected.reason,
        })
    dst = tables.dst_capacity
    for width in m.DestWidth:
        for sync in (m.SyncMode.DOUBLE_BUFFERED, m.SyncMode.FULL):
            out.append({
                "query": "dst_capacity", "dest_width": int(width), "full_sync": sync is m.SyncMode.FULL,
                "tiles": dst.tiles(width, sync) if dst is not None else 0,
            })
    no_target = catalog.get_target(None) if tables.no_target is not None else None
    out.append({
        "query": "default_target", "architecture": "none", "target": no_target.name if no_target else None,
        "dfb_capacity": _capacity(m, catalog, None),
    })
    for arch in tables.architectures:
        try:
            target = catalog.select_target(None, str(arch.name)).name
        except m.TargetError:
            found = [r.name for r in tables.rejected if r.architecture == arch.name and r.default_for_architecture]
            target = found[0] if found else None
        out.append({"query": "default_target", "architecture": str(arch.name), "target": target, "dfb_capacity": _capacity(m, catalog, str(arch.name))})
        out.append({
            "query": "architecture", "architecture": str(arch.name), "runtime_name": arch.runtime_name,
            "named": catalog.parse_architecture(str(arch.name)) == arch.name,
            "from_runtime_name": catalog.architecture_from_runtime_name(arch.runtime_name) == arch.name,
        })
    out.append({"query": "runtime_api", "runtime_api": "none", "default_math_fidelity": None, "pinned_runtime_version": None, "num_circular_buffers": None})
    for api in tables.runtime_apis:
        out.append({
            "query": "runtime_api", "runtime_api": api.name, "default_math_fidelity": api.default_math_fidelity,
            "pinned_runtime_version": api.pinned_version, "num_circular_buffers": api.num_circular_buffers(),
        })
    for fidelity in tables.runtime_enums.math_fidelity:
        out.append({"query": "math_fidelity", "name": fidelity.name, "value": int(fidelity)})
    for mode in tables.runtime_enums.unpack_to_dest_mode:
        out.append({"query": "unpack_to_dest_mode", "name": mode.name, "value": int(mode)})
    return out


def _element(m: ModuleType, tables: Any, mlir: MlirType) -> Any:
    """The element the resolver answers for an MLIR type: the declared one, else one known by
    its bit width (the resolver's classification), else None."""
    if mlir.element is not None:
        return next(e for e in tables.elements if e.name == mlir.element)
    if mlir.bits is None:
        return None
    return m.undeclared_element(mlir.bits, mlir.is_float)


def _adapter_answers(label: str, env: Any, tables: Any, m: ModuleType, primitives: list[str], types: Mapping[str, MlirType]) -> Iterator[Record]:
    # TT-Lang's primitives include its unknown one (""), which the Python tables never name.
    known = set(tables.primitives)
    for primitive in primitives:
        for type_name, mlir in types.items():
            element = _element(m, tables, mlir)
            usable = primitive in known and element is not None
            widths = {w.value for w in env.dest_widths_of(primitive, element)} if usable else set()
            for width in (16, 32):
                yield {"query": "supports", "env": label, "primitive": primitive, "type": type_name, "width": width, "supported": width in widths}
            for route in m.Route:
                found = env.dfb_configurations_of(primitive, element, route) if usable else frozenset()
                configurations = sorted([width.value, mode.value] for width, mode in found)
                yield {"query": "configurations", "env": label, "primitive": primitive, "type": type_name, "route": route.value, "configurations": configurations}
    for kind in tables.full_fp32_kinds:
        support = env.full_fp32(kind.name)
        yield {"query": "full_fp32", "env": label, "kind": str(kind.name), "supported": support.supported, "warning": support.warning}


def adapter_answers(
    m: ModuleType, catalog: Any, primitives: list[str], types: Mapping[str, MlirType], architectures: list[str]
) -> list[Record]:
    """What tests/cpp_tables/adapter_driver.cpp prints, from the Python resolver:
    ``primitives`` are TT-Lang's (its unknown one as ""), ``types`` say what MLIR says of
    each type the driver passes, ``architectures`` are the names the driver selects an
    architecture by (besides none), known or not."""
    tables = catalog.tables
    out: list[Record] = []
    names = [*(t.name for t in tables.targets), *(r.name for r in tables.rejected)]
    for name in [*sorted(names), "no_such_target"]:
        try:
            env = catalog.get_target(name)
        except m.TargetError:
            env = None
        out.append({"query": "environment", "env": f"target:{name}", "created": env is not None})
        if env is not None:
            out.extend(_adapter_answers(f"target:{name}", env, tables, m, primitives, types))
    for arch in [None, *architectures]:
        label = f"architecture:{arch or ''}"
        error = None
        try:
            env = catalog.get_target(None) if arch is None else catalog.select_target(None, arch)
        except m.TargetError as exc:
            env, error = None, exc.message
        out.append({
            "query": "environment", "env": label, "created": env is not None, "error": error,
            "dfb_capacity": _capacity(m, catalog, arch),
        })
        if env is not None:
            out.extend(_adapter_answers(label, env, tables, m, primitives, types))
    return out


if __name__ == "__main__":
    # python answers.py <generated/python>: the generated package's table answers, as JSON.
    sys.path.insert(0, sys.argv[1])
    import ttl_kernel_config

    assert "ttlgen" not in sys.modules
    json.dump(table_answers(ttl_kernel_config, ttl_kernel_config.CATALOG), sys.stdout)
