"""Compile kernel sources and the emulator runtime with g++, cached by content.

Cache keys hash every input that can change the output: sources, all emulator
headers and runtime files, flags, defines and the compiler version. Files are
written to a temporary name and renamed into place, so concurrent builds (e.g.
pytest-xdist workers) never see a partial file.
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
INCLUDE_DIR = PACKAGE_DIR / "include"
RUNTIME_DIR = PACKAGE_DIR / "runtime"
CXX = os.environ.get("TTLGEN_CXX", "g++")
CXXFLAGS: tuple[str, ...] = ("-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread")

#: -D renames that let three tt-metal entry points live in one executable.
ENTRY_DEFINES: dict[str, tuple[str, ...]] = {
    "reader": ("-Dkernel_main=ttlemu_reader_main",),
    "writer": ("-Dkernel_main=ttlemu_writer_main",),
    "compute": ("-DNAMESPACE=ttlemu_compute", "-DMAIN=compute_main()"),
}


#: The one symbol each kernel object exports; every other strong global it defines
#: is made local, so helpers with the same name in two kernels do not clash.
ENTRY_SYMBOLS: dict[str, str] = {
    "reader": "_Z18ttlemu_reader_mainv",
    "writer": "_Z18ttlemu_writer_mainv",
    "compute": "_ZN14ttlemu_compute12compute_mainEv",
}


class CompileError(RuntimeError):
    """g++ rejected a source; the message carries the compiler output."""


def cache_dir() -> Path:
    """``$TTLGEN_DEVICE_CACHE`` or ``~/.cache/ttlgen/device``."""
    env = os.environ.get("TTLGEN_DEVICE_CACHE")
    path = Path(env) if env else Path.home() / ".cache" / "ttlgen" / "device"
    path.mkdir(parents=True, exist_ok=True)
    return path


@functools.lru_cache(maxsize=1)
def compiler_version() -> str:
    out = subprocess.run([CXX, "--version"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()[0]


def _digest(parts: Sequence[bytes | str]) -> str:
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()[:24]


def _tree_digest(root: Path, patterns: Sequence[str]) -> list[bytes | str]:
    parts: list[bytes | str] = []
    for pattern in patterns:
        for f in sorted(root.rglob(pattern)):
            parts += [str(f.relative_to(root)), f.read_bytes()]
    return parts


def headers_digest() -> str:
    return _digest(_tree_digest(INCLUDE_DIR, ("*.h", "*.hpp")))


def _run(cmd: Sequence[str], what: str) -> None:
    proc = subprocess.run(list(cmd), capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(f"{what} failed ({' '.join(cmd)}):\n{proc.stderr}")


def _publish(tmp: Path, dest: Path) -> Path:
    os.replace(tmp, dest)
    return dest


def _tmp_in(directory: Path, suffix: str) -> Path:
    fd, name = tempfile.mkstemp(dir=directory, suffix=suffix)
    os.close(fd)
    return Path(name)


def build_runtime() -> Path:
    """The runtime as a static library, built once per content hash."""
    key = _digest(
        [
            compiler_version(),
            *CXXFLAGS,
            *_tree_digest(RUNTIME_DIR, ("*.cpp", "*.hpp")),
            headers_digest(),
        ]
    )
    lib = cache_dir() / f"libttlemu-{key}.a"
    if lib.exists():
        return lib
    sources = sorted(RUNTIME_DIR.glob("*.cpp"))
    objs = [_tmp_in(cache_dir(), ".o") for _ in sources]
    try:
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            futures = [
                pool.submit(
                    _run,
                    [
                        CXX,
                        *CXXFLAGS,
                        f"-I{INCLUDE_DIR}",
                        f"-I{RUNTIME_DIR}",
                        "-c",
                        str(s),
                        "-o",
                        str(o),
                    ],
                    f"compiling runtime {s.name}",
                )
                for s, o in zip(sources, objs, strict=True)
            ]
            for f in futures:
                f.result()
        tmp = _tmp_in(cache_dir(), ".a")
        tmp.unlink()
        _run(["ar", "rcs", str(tmp), *map(str, objs)], "archiving runtime")
        return _publish(tmp, lib)
    finally:
        for o in objs:
            o.unlink(missing_ok=True)


def _localize_helpers(obj: Path, entry: str) -> None:
    # Weak and COMDAT symbols (inline functions, templates) stay global: making
    # them local breaks the linker's de-duplication of their sections.
    listing = subprocess.run(
        ["nm", "-g", "--defined-only", "-P", str(obj)], capture_output=True, text=True, check=True
    ).stdout
    strong = [
        f"--localize-symbol={fields[0]}"
        for fields in (line.split() for line in listing.splitlines())
        if len(fields) >= 2 and fields[1] in ("T", "D", "B", "R", "G", "S") and fields[0] != entry
    ]
    if strong:
        _run(["objcopy", *strong, str(obj)], f"localizing helper symbols of {obj.name}")


def compile_kernel(source: Path, role: str, compile_time_args: Sequence[int]) -> Path:
    """Object file of one kernel source for ``role`` (reader / compute / writer)."""
    defines = list(ENTRY_DEFINES[role])
    if compile_time_args:
        defines.append(
            "-DKERNEL_COMPILE_TIME_ARGS=" + ",".join(f"{int(a)}u" for a in compile_time_args)
        )
    flags = [*CXXFLAGS, *defines]
    # "localized" versions the post-processing below, which the key must cover.
    key = _digest([compiler_version(), *flags, headers_digest(), "localized", source.read_bytes()])
    obj = cache_dir() / f"{role}-{key}.o"
    if obj.exists():
        return obj
    tmp = _tmp_in(cache_dir(), ".o")
    try:
        _run(
            [CXX, *flags, f"-I{INCLUDE_DIR}", "-x", "c++", "-c", str(source), "-o", str(tmp)],
            f"compiling {source}",
        )
        _localize_helpers(tmp, ENTRY_SYMBOLS[role])
        return _publish(tmp, obj)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def build_executable(kernels: Mapping[str, tuple[Path, Sequence[int]]]) -> Path:
    """Link reader, compute and writer (source, compile-time args) with the runtime."""
    lib = build_runtime()
    roles = ("reader", "compute", "writer")
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(compile_kernel, kernels[r][0], r, kernels[r][1]) for r in roles]
        objs = [f.result() for f in futures]
    key = _digest([lib.name, *(o.name for o in objs)])
    exe = cache_dir() / f"prog-{key}"
    if exe.exists():
        return exe
    tmp = _tmp_in(cache_dir(), ".exe")
    try:
        _run(
            [CXX, "-pthread", "-o", str(tmp), *map(str, objs), str(lib)], "linking emulator program"
        )
        return _publish(tmp, exe)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
