"""program.json: the kernel directory's description of CBs, compute config,
DRAM buffers and kernels. Schema in PROGRAM_JSON.md; everything is validated
here so the C++ runtime only sees well-formed input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .formats import FORMATS, tile_bytes

FIDELITY_CODE: dict[str, int] = {"LoFi": 0, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}
UNPACK_MODES = ("Default", "UnpackToDestFp32")
ROLES = ("reader", "compute", "writer")
_MACRO = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ProgramError(ValueError):
    """program.json is malformed; the message names the offending field."""


@dataclass(frozen=True)
class CbSpec:
    index: int
    format: str
    page_size: int
    num_pages: int


@dataclass(frozen=True)
class ComputeConfig:
    math_fidelity: str = "HiFi4"
    fp32_dest_acc_en: bool = False
    dst_full_sync_en: bool = False
    unpack_to_dest_mode: tuple[str, ...] = ()
    math_approx_mode: bool = False
    bfp8_pack_precise: bool = False

    def unpack_to_dest(self, cb: int) -> bool:
        return (
            cb < len(self.unpack_to_dest_mode)
            and self.unpack_to_dest_mode[cb] == "UnpackToDestFp32"
        )


@dataclass(frozen=True)
class BufferSpec:
    name: str
    role: Literal["input", "output"]
    format: str
    shape_tiles: tuple[int, int]

    @property
    def nbytes(self) -> int:
        return self.shape_tiles[0] * self.shape_tiles[1] * tile_bytes(self.format)


@dataclass(frozen=True)
class AccessorArgs:
    """The compile-time accessor arguments of a DRAM buffer (TensorAccessorArgs on the host)."""

    buffer: str


#: What one buffer's accessor arguments are on the emulator: one word (every DRAM tensor is
#: a single interleaved bank; ttlemu::types::TensorAccessorArgs takes one word).
EMULATED_ACCESSOR_ARGS: tuple[int, ...] = (0,)


@dataclass(frozen=True)
class KernelSpec:
    source: str
    compile_time_args: tuple[int | AccessorArgs, ...] = ()
    runtime_args: tuple[int | str, ...] = ()  # str = name of a buffer whose address goes here
    # The defines the host passes to the kernel's build (ttnn's KernelDescriptor.defines): -D flags.
    defines: tuple[tuple[str, str], ...] = ()

    def compile_time_words(self, accessor_args: Callable[[str], Sequence[int]]) -> list[int]:
        """The compile-time arguments with each buffer's accessor arguments the words
        ``accessor_args`` gives for the buffer's name."""
        out: list[int] = []
        for arg in self.compile_time_args:
            out.extend(accessor_args(arg.buffer) if isinstance(arg, AccessorArgs) else (arg,))
        return out

    def emulated_compile_time_args(self) -> tuple[int, ...]:
        """The compile-time arguments with each buffer's accessor arguments as the emulator's."""
        return tuple(self.compile_time_words(lambda _: EMULATED_ACCESSOR_ARGS))


@dataclass(frozen=True)
class Program:
    kernel_api: str  # the tt-metal API level the kernel sources are written against
    cbs: tuple[CbSpec, ...]
    compute_config: ComputeConfig
    buffers: tuple[BufferSpec, ...]
    kernels: dict[str, KernelSpec] = field(default_factory=dict)

    def buffer(self, name: str) -> BufferSpec:
        for b in self.buffers:
            if b.name == name:
                return b
        raise ProgramError(f"no buffer named {name!r}")


def _req(d: dict[str, Any], key: str, where: str) -> Any:
    if key not in d:
        raise ProgramError(f"{where}: missing required key {key!r}")
    return d[key]


def _u32(v: Any, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**32:
        raise ProgramError(f"{where}: expected an unsigned 32-bit integer, got {v!r}")
    return v


def _bool(v: Any, where: str) -> bool:
    if not isinstance(v, bool):
        raise ProgramError(f"{where}: expected true/false, got {v!r}")
    return v


def parse_program(data: dict[str, Any]) -> Program:
    """Validate a program.json document.

    Top-level keys starting with ``_`` or ``$`` are annotations and are ignored: ttlgen
    writes its "generated" notice as ``$comment`` and the resolved plan as ``_plan``.
    """
    if not isinstance(data, dict):
        raise ProgramError("program.json: top level must be an object")
    known = {"kernel_api", "cbs", "compute_config", "buffers", "kernels"}
    for key in data:
        if not key.startswith(("_", "$")) and key not in known:
            raise ProgramError(f"program.json: unknown key {key!r}")
    level = _req(data, "kernel_api", "program.json")
    if not isinstance(level, str) or not level.isidentifier():
        raise ProgramError(f"program.json.kernel_api: expected an API level name such as 'current', got {level!r}")
    cbs: list[CbSpec] = []
    seen: set[int] = set()
    for i, c in enumerate(_req(data, "cbs", "program.json")):
        w = f"cbs[{i}]"
        idx = _u32(_req(c, "index", w), f"{w}.index")
        if idx >= 64 or idx in seen:
            raise ProgramError(f"{w}.index: {idx} is out of range 0..63 or repeated")
        seen.add(idx)
        fmt = _req(c, "format", w)
        if fmt not in FORMATS:
            raise ProgramError(
                f"{w}.format: {fmt!r} is not supported (supported: {', '.join(FORMATS)})"
            )
        page = _u32(_req(c, "page_size", w), f"{w}.page_size")
        if page != tile_bytes(fmt):
            raise ProgramError(
                f"{w}.page_size: {page} is not one {fmt} tile ({tile_bytes(fmt)} bytes)"
            )
        pages = _u32(_req(c, "num_pages", w), f"{w}.num_pages")
        if pages == 0:
            raise ProgramError(f"{w}.num_pages: must be at least 1")
        cbs.append(CbSpec(idx, fmt, page, pages))
    cc = _req(data, "compute_config", "program.json")
    w = "compute_config"
    fid = cc.get("math_fidelity", "HiFi4")
    if fid not in FIDELITY_CODE:
        raise ProgramError(f"{w}.math_fidelity: {fid!r} is not one of {sorted(FIDELITY_CODE)}")
    modes = cc.get("unpack_to_dest_mode", [])
    for j, m in enumerate(modes):
        if m not in UNPACK_MODES:
            raise ProgramError(f"{w}.unpack_to_dest_mode[{j}]: {m!r} is not one of {UNPACK_MODES}")
    config = ComputeConfig(
        math_fidelity=fid,
        fp32_dest_acc_en=_bool(cc.get("fp32_dest_acc_en", False), f"{w}.fp32_dest_acc_en"),
        dst_full_sync_en=_bool(cc.get("dst_full_sync_en", False), f"{w}.dst_full_sync_en"),
        unpack_to_dest_mode=tuple(modes),
        math_approx_mode=_bool(cc.get("math_approx_mode", False), f"{w}.math_approx_mode"),
        bfp8_pack_precise=_bool(cc.get("bfp8_pack_precise", False), f"{w}.bfp8_pack_precise"),
    )
    buffers: list[BufferSpec] = []
    for i, b in enumerate(_req(data, "buffers", "program.json")):
        w = f"buffers[{i}]"
        role = _req(b, "role", w)
        if role not in ("input", "output"):
            raise ProgramError(f"{w}.role: {role!r} must be 'input' or 'output'")
        fmt = _req(b, "format", w)
        if fmt not in FORMATS:
            raise ProgramError(
                f"{w}.format: {fmt!r} is not supported (supported: {', '.join(FORMATS)})"
            )
        shape = _req(b, "shape_tiles", w)
        if not (isinstance(shape, list) and len(shape) == 2 and all(_u32(s, w) > 0 for s in shape)):
            raise ProgramError(
                f"{w}.shape_tiles: expected [rows, cols] of positive tile counts, got {shape!r}"
            )
        name = _req(b, "name", w)
        if any(x.name == name for x in buffers):
            raise ProgramError(f"{w}.name: {name!r} repeated")
        buffers.append(BufferSpec(name, role, fmt, (shape[0], shape[1])))
    names = {b.name for b in buffers}
    kernels: dict[str, KernelSpec] = {}
    kd = _req(data, "kernels", "program.json")
    for role in ROLES:
        k = _req(kd, role, "kernels")
        w = f"kernels.{role}"
        ct: list[int | AccessorArgs] = []
        for j, v in enumerate(k.get("compile_time_args", [])):
            if isinstance(v, dict):
                ref = _req(v, "accessor_args", f"{w}.compile_time_args[{j}]")
                if ref not in names:
                    raise ProgramError(f"{w}.compile_time_args[{j}]: no buffer named {ref!r}")
                ct.append(AccessorArgs(str(ref)))
            else:
                ct.append(_u32(v, f"{w}.compile_time_args[{j}]"))
        rt: list[int | str] = []
        for j, v in enumerate(k.get("runtime_args", [])):
            if isinstance(v, dict):
                ref = _req(v, "buffer", f"{w}.runtime_args[{j}]")
                if ref not in names:
                    raise ProgramError(f"{w}.runtime_args[{j}]: no buffer named {ref!r}")
                rt.append(str(ref))
            else:
                rt.append(_u32(v, f"{w}.runtime_args[{j}]"))
        defines = k.get("defines", {})
        if not isinstance(defines, dict):
            raise ProgramError(f"{w}.defines: expected an object of macro names to values, got {defines!r}")
        for name, value in defines.items():
            if not _MACRO.fullmatch(name):
                raise ProgramError(f"{w}.defines: {name!r} is not a macro name (a C identifier)")
            if not isinstance(value, str) or not value.strip() or "\n" in value:
                raise ProgramError(f"{w}.defines.{name}: expected the macro's value on one line, got {value!r}")
        kernels[role] = KernelSpec(
            str(k.get("source", f"{role}.cpp")), tuple(ct), tuple(rt), tuple((n, v) for n, v in sorted(defines.items()))
        )
    for extra in kd:
        if extra not in ROLES:
            raise ProgramError(f"kernels: unknown kernel role {extra!r}")
    return Program(level, tuple(cbs), config, tuple(buffers), kernels)


def load_program(kernel_dir: Path) -> Program:
    """Read and validate ``kernel_dir/program.json``."""
    path = Path(kernel_dir) / "program.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ProgramError(f"{path}: {e}") from e
    return parse_program(data)
