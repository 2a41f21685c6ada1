"""Run a kernel directory (compute.cpp, reader.cpp, writer.cpp, program.json) on
the host emulator and return its output buffers.

Failures of the program are typed exceptions carrying the runtime's message:
:class:`ProtocolError`, :class:`DeadlockError`, :class:`DeviceTimeoutError`,
:class:`MemoryAccessError`, :class:`ConfigError` (all :class:`DeviceError`),
:class:`~ttlgen.device.build.CompileError` and
:class:`~ttlgen.device.program.ProgramError`.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import formats
from .build import CbTables, api_headers, build_executable
from .formats import Rounding
from .program import FIDELITY_CODE, Program, load_program, parse_program

#: Emulated DRAM is mapped at this host address; buffer addresses given to
#: kernels as runtime args are ``DRAM_BASE + offset`` (32-bit, as on device).
DRAM_BASE = 0x40000000
DRAM_ALIGN = 64


@dataclass(frozen=True)
class Numerics:
    """Emulator numerics parameters that hardware does not expose as configuration.

    Defaults and their reasons are in NUMERICS.md.
    """

    pack_rounding: Rounding = "nearest_even"
    unpack_tf32_rounding: Rounding = "truncate"
    dst16_rounding: Rounding = "ties_away"
    sfpu_dst16_rounding: Rounding = "truncate"
    poison_reserve: bool = True


@dataclass
class RunResult:
    outputs: dict[str, npt.NDArray[np.float32]]
    warnings: list[str] = field(default_factory=list)
    kernel_seconds: float = (
        0.0  # wall time of the three kernel threads, excluding process start and I/O
    )


class DeviceError(RuntimeError):
    """The emulated program failed; ``kind`` is the runtime's category."""

    kind = "runtime"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ProtocolError(DeviceError):
    kind = "protocol"


class DeadlockError(DeviceError):
    kind = "deadlock"


class DeviceTimeoutError(DeviceError):
    kind = "timeout"


class MemoryAccessError(DeviceError):
    kind = "memory"


class ConfigError(DeviceError):
    kind = "config"


_ERRORS: dict[str, type[DeviceError]] = {
    c.kind: c
    for c in (ProtocolError, DeadlockError, DeviceTimeoutError, MemoryAccessError, ConfigError)
}


def _layout(program: Program) -> tuple[dict[str, int], int]:
    offsets: dict[str, int] = {}
    off = 0
    for b in program.buffers:
        offsets[b.name] = off
        off += (b.nbytes + DRAM_ALIGN - 1) // DRAM_ALIGN * DRAM_ALIGN
    return offsets, max(off, DRAM_ALIGN)


# tt::DataFormat's value of each format a program may give a CB (tensix_types.h, as the
# glue's ttlemu::types::DataFormat).
DATA_FORMAT_VALUE = {"Float32": 0, "Float16_b": 5, "Bfp8_b": 6}
UNBOUND_FORMAT = 0xFF


def cb_tables(program: Program) -> CbTables:
    """The program's CBs as the compile-time tables its kernels read (entry i: CB i)."""
    count = max((cb.index for cb in program.cbs), default=-1) + 1
    bound = {cb.index: cb for cb in program.cbs}
    return CbTables(
        tuple(bound[i].page_size if i in bound else 0 for i in range(count)),
        tuple(DATA_FORMAT_VALUE[bound[i].format] if i in bound else UNBOUND_FORMAT for i in range(count)),
    )


def _run_file(
    program: Program,
    numerics: Numerics,
    offsets: dict[str, int],
    size: int,
    d: Path,
    timeout_s: float,
) -> str:
    cc = program.compute_config
    lines = [
        f"result {d / 'result.txt'}",
        f"dram {DRAM_BASE:x} {size} {d / 'dram_in.bin'} {d / 'dram_out.bin'}",
        f"compute {FIDELITY_CODE[cc.math_fidelity]} {int(cc.fp32_dest_acc_en)} {int(cc.dst_full_sync_en)} "
        f"{int(cc.math_approx_mode)} {int(cc.bfp8_pack_precise)}",
        f"numerics {numerics.pack_rounding} {numerics.unpack_tf32_rounding} {numerics.dst16_rounding} "
        f"{numerics.sfpu_dst16_rounding} {int(numerics.poison_reserve)}",
        f"timeout {timeout_s}",
    ]
    for cb in program.cbs:
        lines.append(
            f"cb {cb.index} {cb.format} {cb.page_size} {cb.num_pages} {int(cc.unpack_to_dest(cb.index))}"
        )
    for role, k in program.kernels.items():
        words = [DRAM_BASE + offsets[a] if isinstance(a, str) else a for a in k.runtime_args]
        lines.append(f"args {role} {len(words)} " + " ".join(str(w) for w in words))
    lines.append("end")
    return "\n".join(lines) + "\n"


def _parse_result(text: str) -> tuple[str, str, str, list[str], float]:
    head, _, message = text.partition("message\n")
    status, kind, warnings, elapsed = "error", "runtime", [], 0.0
    for line in head.splitlines():
        key, _, value = line.partition(" ")
        if key == "status":
            status = value
        elif key == "kind":
            kind = value
        elif key == "warning":
            warnings.append(value)
        elif key == "elapsed_ns":
            elapsed = int(value) * 1e-9
    return status, kind, message.strip(), warnings, elapsed


def run_program(
    kernel_dir: Path,
    inputs: Mapping[str, npt.ArrayLike],
    *,
    program: Mapping[str, Any] | None = None,
    numerics: Numerics | None = None,
    timeout_s: float = 10.0,
    input_rounding: Rounding = "nearest_even",
    api_dir: Path | None = None,
) -> RunResult:
    """Compile (cached) and run the kernels of ``kernel_dir`` on ``inputs``.

    The sources compile against the kernel-API headers of program.json's ``kernel_api``
    level: ``api_dir`` when given (headers generated from other specs), else
    :func:`~ttlgen.device.build.api_headers`.

    ``inputs`` maps each input buffer name to a 2-D array of shape
    ``(rows*32, cols*32)``; it is converted to the buffer's format on the host
    with ``input_rounding``. ``program`` replaces ``kernel_dir/program.json``
    (kernel sources are still read from ``kernel_dir``). Output buffers are
    poisoned with NaN before the run and returned as float32 2-D arrays.
    Raises :class:`DeviceError` subclasses when the program misbehaves.
    """
    kernel_dir = Path(kernel_dir)
    prog = parse_program(dict(program)) if program is not None else load_program(kernel_dir)
    numerics = numerics or Numerics()
    exe = build_executable(
        {role: (kernel_dir / k.source, k.emulated_compile_time_args()) for role, k in prog.kernels.items()},
        api_dir or api_headers(prog.kernel_api),
        cb_tables(prog),
        {role: k.defines for role, k in prog.kernels.items()},
    )
    offsets, size = _layout(prog)
    image = bytearray(formats.POISON_BYTES * (size // 2))
    expected = {b.name for b in prog.buffers if b.role == "input"}
    unknown = set(inputs) - expected
    missing = expected - set(inputs)
    if unknown or missing:
        raise ValueError(f"inputs: missing {sorted(missing)}, unknown {sorted(unknown)}")
    for b in prog.buffers:
        if b.role != "input":
            continue
        arr = np.asarray(inputs[b.name], dtype=np.float32)
        want = (b.shape_tiles[0] * formats.TILE, b.shape_tiles[1] * formats.TILE)
        if arr.shape != want:
            raise ValueError(f"input {b.name!r}: shape {arr.shape}, buffer holds {want}")
        image[offsets[b.name] : offsets[b.name] + b.nbytes] = formats.encode(
            arr, b.format, input_rounding
        )
    with tempfile.TemporaryDirectory(prefix="ttlemu-") as tmp:
        d = Path(tmp)
        (d / "dram_in.bin").write_bytes(bytes(image))
        (d / "run.txt").write_text(_run_file(prog, numerics, offsets, size, d, timeout_s))
        try:
            proc = subprocess.run(
                [str(exe), str(d / "run.txt")],
                capture_output=True,
                text=True,
                timeout=timeout_s + 10,
            )
        except subprocess.TimeoutExpired as e:
            raise DeviceTimeoutError(
                f"emulator process did not finish within {timeout_s + 10:.0f} s"
            ) from e
        result = d / "result.txt"
        if not result.exists():
            raise DeviceError(f"emulator crashed (exit {proc.returncode}): {proc.stderr.strip()}")
        status, kind, message, warnings, elapsed = _parse_result(result.read_text())
        if status != "ok":
            raise _ERRORS.get(kind, DeviceError)(message)
        out_image = (d / "dram_out.bin").read_bytes()
    outputs = {
        b.name: formats.decode(
            out_image[offsets[b.name] : offsets[b.name] + b.nbytes],
            b.format,
            b.shape_tiles[0],
            b.shape_tiles[1],
        )
        for b in prog.buffers
        if b.role == "output"
    }
    return RunResult(outputs, warnings, elapsed)
