"""What tt-metal's JIT does to compile one kernel for one processor, on the host.

tt-metal compiles kernels when a program first runs (``tt_metal/jit_build/build.cpp``,
``genfiles.cpp``, the HAL's ``llrt/hal/tt-1xx``): it writes a few files per kernel beside
it and compiles its own entry translation unit from the wheel, which includes them:

- a compute kernel runs on the three TRISCs: ``chlkc_{unpack,math,pack}.cpp`` (``#define
  TRISC_<X>``, ``#include "defines_generated.h"``, the kernel), ``defines_generated.h`` (the
  defines the host passes to the kernel: program.json's ``kernels.compute.defines``) and ``chlkc_descriptors.h`` (the data formats and tile shapes of every
  CB, math fidelity and approximation, ``DST_ACCUM_MODE`` and ``DST_SYNC_MODE``), entered
  through ``hw/firmware/src/tt-1xx/trisck.cc``;
- a data-movement kernel runs on BRISC or NCRISC: ``kernel_includes.hpp`` (the kernel) and
  the same ``chlkc_descriptors.h`` (``dataflow_api.h`` takes tile sizes from it), entered
  through ``brisck.cc`` / ``ncrisck.cc``, with the kernel's compile-time arguments in
  ``KERNEL_COMPILE_TIME_ARGS``.

This module writes those files from a generated kernel directory (its sources and
program.json) and gives the compiler's command line. The compiler is the host's g++ in
32-bit mode (``-m32``) with newlib's integer model (``include/newlib/``: the device's
``int32_t`` is ``long``, which overloads and static asserts see), ``-fsyntax-only`` (inline
assembly is never assembled), and the SFPI stand-in (``include/sfpi/``) for the SFPU
compiler's headers that the wheel does not ship.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ttlgen.model.tt_metal_api import KernelKind

CXX_ENV = "TTLGEN_CXX"
INCLUDE = Path(__file__).resolve().parent / "include"
# The device's C library: newlib's integer model on 32-bit RISC-V, and the empty stub a
# -m32 compile of glibc's headers asks for.
NEWLIB = INCLUDE / "newlib"
# Declarations standing in for SFPI, the SFPU compiler's headers (not in the wheel).
SFPI = INCLUDE / "sfpi"


@dataclass(frozen=True)
class Architecture:
    """An architecture's place in the wheel's tt-1xx tree and the device constants the
    JIT defines for it (from the device it builds for; any plausible values compile)."""

    name: str  # as the specs and tt-metal's ckernels/ and tt-llk/ directories spell it
    define: str  # ARCH_WORMHOLE / ARCH_BLACKHOLE
    family: str  # its directory under hw/inc/internal/tt-1xx/
    circular_buffers: int  # NUM_CIRCULAR_BUFFERS (api/tt-metalium/circular_buffer_constants.h)
    device: tuple[tuple[str, str], ...]


# The architectures whose kernels the wheel's tt-1xx JIT builds. Both DRAM bank counts are
# taken so one architecture compiles the power-of-two path of the address generators
# (LOG_BASE_2_OF_...) and the other the division path (IS_NOT_POW2_...).
ARCHITECTURES = {
    "wormhole_b0": Architecture(
        "wormhole_b0", "ARCH_WORMHOLE", "wormhole", 32,
        (("NUM_DRAM_BANKS", "12"), ("IS_NOT_POW2_NUM_DRAM_BANKS", "1"), ("NUM_L1_BANKS", "64"),
         ("LOG_BASE_2_OF_NUM_L1_BANKS", "6"), ("PCIE_NOC_X", "0"), ("PCIE_NOC_Y", "3")),
    ),
    "blackhole": Architecture(
        "blackhole", "ARCH_BLACKHOLE", "blackhole", 64,
        (("NUM_DRAM_BANKS", "8"), ("LOG_BASE_2_OF_NUM_DRAM_BANKS", "3"), ("NUM_L1_BANKS", "110"),
         ("IS_NOT_POW2_NUM_L1_BANKS", "1"), ("PCIE_NOC_X", "19"), ("PCIE_NOC_Y", "24")),
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Processor:
    """One of a Tensix core's RISC-V processors, as the JIT builds a kernel for it."""

    name: str  # TRISC0 ... BRISC, NCRISC
    role: str  # unpack, math, pack (the TRISC's part of a compute kernel), or the processor's name
    kind: KernelKind
    entry: str  # the JIT's entry translation unit under hw/firmware/src/tt-1xx/
    defines: tuple[tuple[str, str], ...]
    optimize: str

    @property
    def label(self) -> str:
        """``TRISC0 (unpack)``, ``BRISC (NoC 0)``: how messages name the processor."""
        if self.kind is KernelKind.COMPUTE:
            return f"{self.name} ({self.role})"
        noc = dict(self.defines)["NOC_INDEX"]
        return f"{self.name} (NoC {noc})"


def _trisc(index: int, role: str) -> Processor:
    upper = role.upper()
    return Processor(
        f"TRISC{index}", role, KernelKind.COMPUTE, "trisck.cc",
        ((f"UCK_CHLKC_{upper}", "1"), ("NAMESPACE", f"chlkc_{role}"), ("COMPILE_FOR_TRISC", str(index)),
         ("PROCESSOR_INDEX", str(2 + index))),
        "-O3",
    )  # fmt: skip


def _data_movement(name: str, index: int, entry: str) -> Processor:
    # The JIT's default NoC of each processor (BRISC: 0, NCRISC: 1); dedicated NoC mode.
    return Processor(
        name, name.lower(), KernelKind.DATAFLOW, entry,
        ((f"COMPILE_FOR_{name}", "1"), ("PROCESSOR_INDEX", str(index)), ("NOC_INDEX", str(index)), ("NOC_MODE", "0")),
        "-Os",
    )  # fmt: skip


UNPACK, MATH, PACK = _trisc(0, "unpack"), _trisc(1, "math"), _trisc(2, "pack")
BRISC, NCRISC = _data_movement("BRISC", 0, "brisck.cc"), _data_movement("NCRISC", 1, "ncrisck.cc")
PROCESSORS = (UNPACK, MATH, PACK, BRISC, NCRISC)

# Defines of every kernel build (build.cpp's JitBuildEnv and the HAL): a Tensix worker core
# (ProgrammableCoreType::TENSIX), a kernel rather than firmware.
_COMMON_DEFINES = (
    ("TENSIX_FIRMWARE", "1"), ("LOCAL_MEM_EN", "0"), ("KERNEL_BUILD", "1"),
    ("PROGRAMMABLE_CORE_TYPE", "0"), ("DISPATCH_MESSAGE_ADDR", "0"),
)  # fmt: skip
_FLAGS = (
    "-std=c++17", "-m32", "-fsyntax-only", "-ffast-math", "-fno-exceptions", "-fno-use-cxa-atexit",
    # Only errors matter here: upstream's headers warn on a host compiler (RISC-V attributes,
    # 32-bit x86 quirks), and the JIT's -Werror is its own build's policy.
    "-w", "-fdiagnostics-color=never", "-fno-diagnostics-show-caret", "-fmax-errors=10",
)  # fmt: skip


# --------------------------------------------------------------------- program.json facts

# tt::DataFormat (tensix_types.h) and the bytes of one 32x32 tile, for the formats
# program.json uses; Invalid marks a CB the kernel does not bind.
_FORMATS = {"Float32": (0, 4096), "Float16_b": (5, 2048), "Bfp8_b": (6, 1088)}
_FLOAT32, _FLOAT16_B, _TF32, _INVALID = 0, 5, 4, 255
_FIDELITY = {"LoFi": 0, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}
# ArgConfig::IsDram (hostdevcommon/tensor_accessor/arg_config.hpp): an interleaved DRAM
# tensor's accessor arguments are this word and its page size.
_ACCESSOR_IS_DRAM = 2


class ProgramError(ValueError):
    """A program.json this module cannot read (a stale or hand-edited kernel directory)."""


@dataclass(frozen=True)
class Cb:
    index: int
    format: str
    page_size: int


@dataclass(frozen=True)
class Scalars:
    """The compute configuration chlkc_descriptors.h states as constants and macros: the
    values templates and `if constexpr` see (format arrays only feed run-time code)."""

    math_fidelity: str
    math_approx_mode: bool
    fp32_dest_acc_en: bool
    dst_full_sync_en: bool


@dataclass(frozen=True)
class KernelDir:
    """A generated kernel directory: its sources and the facts of program.json the JIT uses."""

    name: str
    path: Path
    kernel_api: str
    cbs: tuple[Cb, ...]
    scalars: Scalars
    unpack_to_dest_fp32: frozenset[int]
    sources: tuple[tuple[str, str], ...]  # (role, file) for reader, compute, writer
    compile_time_args: tuple[tuple[str, tuple[int, ...]], ...]  # per role
    # The defines the host passes to the compute kernel (program.json's
    # kernels.compute.defines), which the JIT writes into defines_generated.h.
    defines: tuple[tuple[str, str], ...] = ()

    def source(self, role: str) -> Path:
        return self.path / dict(self.sources)[role]

    def args(self, role: str) -> tuple[int, ...]:
        return dict(self.compile_time_args).get(role, ())


def read_kernel_dir(path: Path) -> KernelDir:
    try:
        data = json.loads((path / "program.json").read_text(encoding="utf-8"))
        buffers = {b["name"]: b["format"] for b in data["buffers"]}
        cbs = tuple(Cb(int(c["index"]), str(c["format"]), int(c["page_size"])) for c in data["cbs"])
        config = data["compute_config"]
        modes = config.get("unpack_to_dest_mode", [])
        sources, args = [], []
        for role, kernel in data["kernels"].items():
            sources.append((role, str(kernel["source"])))
            words: list[int] = []
            for arg in kernel.get("compile_time_args", []):
                if isinstance(arg, dict):
                    words += [_ACCESSOR_IS_DRAM, _FORMATS[buffers[arg["accessor_args"]]][1]]
                else:
                    words.append(int(arg))
            args.append((role, tuple(words)))
        return KernelDir(
            name=path.name, path=path.resolve(), kernel_api=str(data["kernel_api"]), cbs=cbs,
            scalars=Scalars(
                math_fidelity=str(config.get("math_fidelity", "HiFi4")),
                math_approx_mode=bool(config.get("math_approx_mode", False)),
                fp32_dest_acc_en=bool(config.get("fp32_dest_acc_en", False)),
                dst_full_sync_en=bool(config.get("dst_full_sync_en", False)),
            ),
            unpack_to_dest_fp32=frozenset(i for i, m in enumerate(modes) if m == "UnpackToDestFp32"),
            sources=tuple(sources), compile_time_args=tuple(args),
            defines=tuple((str(n), str(v)) for n, v in data["kernels"]["compute"].get("defines", {}).items()),
        )  # fmt: skip
    except OSError as exc:
        raise ProgramError(f"{path / 'program.json'}: {exc.strerror}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ProgramError(f"{path / 'program.json'}: not a program.json ttlgen writes ({type(exc).__name__}: {exc})") from None


# ------------------------------------------------------------------- the generated files


def _array(kind: str, name: str, values: Sequence[int]) -> str:
    return f"{kind} {name}[{len(values)}] = {{\n    {','.join(str(v) for v in values)}\n}};\n"


def _tile_arrays(prefix: str, sizes: Sequence[int]) -> str:
    count = len(sizes)
    # Every CB holds 32x32 tiles of four 16x16 faces (the JIT's default tile).
    shape = (("tile_num_faces", 4), ("partial_face", 0), ("tile_face_r_dim", 16), ("narrow_tile", 0),
             ("tile_r_dim", 32), ("tile_c_dim", 32))  # fmt: skip
    text = "".join(_array("constexpr uint8_t", f"{prefix}_{name}", [value] * count) for name, value in shape)
    text += _array("constexpr uint16_t", f"{prefix}_tile_size", sizes)
    text += _array("constexpr uint8_t", f"{prefix}_num_faces_r_dim", [2] * count)
    return text + _array("constexpr uint8_t", f"{prefix}_num_faces_c_dim", [2] * count)


def descriptors(kernels: Sequence[KernelDir], scalars: Scalars, arch: Architecture) -> str:
    """chlkc_descriptors.h as genfiles.cpp writes it, for a kernel or for several kernels
    that share their scalars (each CB takes the format the first kernel binding it gives)."""
    bound: dict[int, Cb] = {}
    unpack_to_dest: set[int] = set()
    for kernel in kernels:
        for cb in kernel.cbs:
            bound.setdefault(cb.index, cb)
        unpack_to_dest |= kernel.unpack_to_dest_fp32
    count = arch.circular_buffers
    fp32 = scalars.fp32_dest_acc_en
    source = [_FORMATS[bound[i].format][0] if i in bound else _INVALID for i in range(count)]

    def unpack_dst(i: int) -> int:
        # The JIT's rules for the formats ttlgen uses: f32 stays f32 when unpacked to DST,
        # becomes TF32 in SrcA/SrcB with a 32-bit DST and bf16 otherwise; bf16 and bfp8 unpack to bf16.
        if i not in bound:
            return _INVALID
        if bound[i].format != "Float32":
            return _FLOAT16_B
        return _FLOAT32 if i in unpack_to_dest else _TF32 if fp32 else _FLOAT16_B

    pack_src = [(_FLOAT32 if fp32 else _FLOAT16_B) if i in bound else _INVALID for i in range(count)]
    size = [bound[i].page_size if i in bound else 0 for i in range(count)]
    # The math scalars for math and pack (the packer's SFPU calls take APPROX too).
    text = "#pragma once\n\n#if defined(UCK_CHLKC_MATH) || defined(UCK_CHLKC_PACK)\n#include \"llk_defs.h\"\n"
    text += f"constexpr ckernel::MathFidelity MATH_FIDELITY = static_cast<ckernel::MathFidelity>({_FIDELITY[scalars.math_fidelity]});\n"
    text += f"constexpr bool APPROX = {_bool(scalars.math_approx_mode)};\n#endif\n\n"
    text += "#if !defined(UCK_CHLKC_PACK)\n"
    text += _array("constexpr std::int32_t", "unpack_src_format", source)
    text += _array("constexpr std::int32_t", "unpack_dst_format", [unpack_dst(i) for i in range(count)])
    text += _tile_arrays("unpack", size) + "#endif\n\n"
    text += "#if !defined(UCK_CHLKC_MATH) && !defined(UCK_CHLKC_UNPACK)\n"
    text += _array("constexpr unsigned char", "pack_src_format", pack_src)
    text += _array("constexpr unsigned char", "pack_dst_format", source)
    text += _tile_arrays("pack", size)
    text += "#if defined(UCK_CHLKC_PACK)\n" + _array("constexpr std::int32_t", "unpack_src_format", source) + "#endif\n#endif\n\n"
    text += "#if defined(UCK_CHLKC_MATH) || defined(UCK_CHLKC_PACK) || defined(UCK_CHLKC_UNPACK) || defined(UCK_CHLKC_ISOLATE_SFPU)\n"
    text += f"constexpr bool DST_ACCUM_MODE = {_bool(fp32)};\n"
    text += f"#define DST_SYNC_MODE DstSync::Sync{'Full' if scalars.dst_full_sync_en else 'Half'}\n#endif\n"
    return text


def _bool(value: bool) -> str:
    return "true" if value else "false"


# The ``<...>`` / ``"..."`` target of each ``#include`` of a source.
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"][^>"\n]+[>"])', re.MULTILINE)


def kernel_text(sources: Sequence[Path], entry: str | None) -> str:
    """What the generated file includes the kernel through: one kernel's ``#include`` as the
    JIT writes it, or several kernels in one translation unit. Each of several is included
    in a namespace of its own, after every header the kernels include (so the kernel's own
    includes find them included), and ``entry`` (the level's entry function) calls them all."""
    if len(sources) == 1:
        return f'#include "{sources[0]}"\n'
    assert entry is not None
    seen: dict[str, None] = {}
    for source in sources:
        for target in _INCLUDE.findall(source.read_text(encoding="utf-8")):
            seen.setdefault(target, None)
    text = "".join(f"#include {target}\n" for target in seen)
    for index, source in enumerate(sources):
        text += f'namespace ttlgen_kernel_{index} {{\n#include "{source}"\n}}  // namespace ttlgen_kernel_{index}\n'
    calls = "".join(f"    ttlgen_kernel_{index}::{entry}();\n" for index in range(len(sources)))
    return text + f"void {entry}() {{\n{calls}}}\n"


def defines_generated(defines: Sequence[tuple[str, str]]) -> str:
    """defines_generated.h as genfiles.cpp writes it: one ``#define NAME VALUE`` per define
    the host passes to the compute kernel (the kernel descriptor's defines)."""
    return "".join(f"#define {name} {value}\n" for name, value in defines)


def write_files(
    directory: Path,
    processor: Processor,
    kernels: Sequence[KernelDir],
    sources: Sequence[Path],
    arch: Architecture,
    entry: str | None,
    scalars: Scalars | None = None,
) -> None:
    """Write the JIT's per-kernel files for ``processor`` into ``directory`` (the compute
    scalars are the first kernel's unless given)."""
    directory.mkdir(parents=True, exist_ok=True)
    chosen = scalars if scalars is not None else kernels[0].scalars
    (directory / "chlkc_descriptors.h").write_text(descriptors(kernels, chosen, arch), encoding="utf-8")
    body = kernel_text(sources, entry)
    if processor.kind is KernelKind.COMPUTE:
        # The kernels of one translation unit share their defines (compile.py batches by them).
        defines = kernels[0].defines if kernels else ()
        (directory / "defines_generated.h").write_text(defines_generated(defines), encoding="utf-8")
        prolog = f'#define TRISC_{processor.role.upper()}\n#include "defines_generated.h"\n'
        (directory / f"chlkc_{processor.role}.cpp").write_text(prolog + body, encoding="utf-8")
    else:
        (directory / "kernel_includes.hpp").write_text(body, encoding="utf-8")


def include_roots(root: Path, arch: Architecture) -> list[Path]:
    """build.cpp's include directories for ``arch``, under the wheel's ``ttnn/`` (``root``)."""
    metal = root / "tt_metal"
    ckernels = metal / "hw" / "ckernels" / arch.name / "metal"
    internal = metal / "hw" / "inc" / "internal" / "tt-1xx"
    llk = metal / "tt-llk" / f"tt_llk_{arch.name}"
    return [
        root, metal, metal / "include", metal / "hw" / "inc", metal / "hostdevcommon" / "api",
        metal / "hw" / "inc" / "debug", metal / "api",
        ckernels / "common", ckernels / "llk_io", ckernels / "llk_api", ckernels / "llk_api" / "llk_sfpu",
        internal, internal / arch.family, internal / arch.family / f"{arch.name}_defines", internal / arch.family / "noc",
        llk / "common" / "inc", llk / "llk_lib", metal / "hw" / "firmware" / "src" / "tt-1xx",
        metal / "tt-llk" / "common", metal / "tt-llk" / "tools" / "include",
    ]  # fmt: skip


def compiler() -> str:
    return os.environ.get(CXX_ENV, "g++")


@functools.cache
def system_dirs(cxx: str, m32: bool) -> tuple[str, ...]:
    """The compiler's own include directories, as ``cxx -E -v`` lists them."""
    flags = ["-m32"] if m32 else []
    done = subprocess.run([cxx, *flags, "-xc++", "-E", "-v", os.devnull], capture_output=True, text=True, check=False)
    listed, inside = [], False
    for line in done.stderr.splitlines():
        if line.startswith("#include <...> search starts here"):
            inside = True
        elif line.startswith("End of search list"):
            break
        elif inside:
            listed.append(line.strip())
    return tuple(listed)


def host_dirs(cxx: str) -> list[str]:
    """The native directories a 32-bit compile lacks on a machine without the 32-bit
    multilib (the target's bits/c++config.h, bits/wordsize.h): searched after everything,
    so the 32-bit ones win where they exist."""
    native = system_dirs(cxx, False)
    multilib = set(system_dirs(cxx, True))
    return [d for d in native if d not in multilib]


def command(
    cxx: str,
    root: Path,
    directory: Path,
    processor: Processor,
    arch: Architecture,
    compile_time_args: Sequence[int],
) -> list[str]:
    """The compile of ``processor``'s entry translation unit with the files in ``directory``."""
    defines = [*_COMMON_DEFINES, (arch.define, "1"), *arch.device, *processor.defines]
    if compile_time_args:
        defines.append(("KERNEL_COMPILE_TIME_ARGS", ",".join(str(a) for a in compile_time_args)))
    args = [cxx, *_FLAGS, processor.optimize, f"-I{directory}", f"-I{NEWLIB}", f"-I{SFPI}"]
    args += [f"-I{path}" for path in include_roots(root, arch)]
    args += [f"-idirafter{path}" for path in host_dirs(cxx)]
    args += [f"-D{name}={value}" for name, value in defines]
    return [*args, str(root / "tt_metal" / "hw" / "firmware" / "src" / "tt-1xx" / processor.entry)]
