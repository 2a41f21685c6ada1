"""Host emulator of the tt-metal kernel APIs (Tensix compute + dataflow).

Public API::

    run_program(kernel_dir, inputs, *, program=None, numerics=None, timeout_s=10.0,
                input_rounding="nearest_even", api_dir=None) -> RunResult
    api_headers(level) -> Path              the generated kernel-API headers of a level
    load_program(kernel_dir) -> Program;  parse_program(dict) -> Program
    Numerics(pack_rounding=..., ...)       emulator numerics parameters
    ttnn_device_available() -> (bool, reason);  run_program_on_device(kernel_dir, inputs)
    formats: encode / decode / tilize / untilize / to_bf16 / to_tf32 / round_mantissa

See PROGRAM_JSON.md for the kernel-directory contract and NUMERICS.md for the model.
"""

from .build import (
    CompileError,
    ToolchainError,
    api_headers,
    build_executable,
    build_runtime,
    cache_dir,
)
from .harness import (
    DRAM_BASE,
    ConfigError,
    DeadlockError,
    DeviceError,
    DeviceTimeoutError,
    MemoryAccessError,
    Numerics,
    ProtocolError,
    RunResult,
    run_program,
)
from .hw import run_program_on_device, ttnn_device_available
from .program import Program, ProgramError, load_program, parse_program

__all__ = [
    "DRAM_BASE",
    "CompileError",
    "ConfigError",
    "DeadlockError",
    "DeviceError",
    "DeviceTimeoutError",
    "MemoryAccessError",
    "Numerics",
    "Program",
    "ProgramError",
    "ProtocolError",
    "RunResult",
    "ToolchainError",
    "api_headers",
    "build_executable",
    "build_runtime",
    "cache_dir",
    "load_program",
    "parse_program",
    "run_program",
    "run_program_on_device",
    "ttnn_device_available",
]
