"""Compile kernel sources and the emulator runtime with g++, cached by content.

Kernels compile against the kernel-API headers of their API level (generated from the API
specs into ``generated/emulator/<level>/``, see :func:`api_headers`) and the emulator's
glue (``include/``). Each kernel object exports only its entry point, which the level's
``ttlemu_level.json`` names and the build renames to the role the runtime calls (three
``kernel_main`` functions live in one executable), so kernels compile unchanged.

Every compile and link is cached, keyed by every input that can change the output:
sources, all emulator headers and runtime files, flags, defines and the compiler version.
The inputs are read once: their bytes are hashed for the key, and on a miss the compiler
reads those same bytes from a private copy, so a file edited during a build can never be
recorded under another content's key. A product is written to a temporary name, renamed
into place, then sealed (a ``.seal`` file beside it with its sha256); a product whose seal
is missing or disagrees (damaged, truncated, half-written) is a miss and built again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ttlgen import cache

PACKAGE_DIR = Path(__file__).resolve().parent
INCLUDE_DIR = PACKAGE_DIR / "include"
RUNTIME_DIR = PACKAGE_DIR / "runtime"
CXX = os.environ.get("TTLGEN_CXX", "g++")
# -pipe: the assembler reads the compiler's output from a pipe, not a temporary file (a
# kernel object's compile is mostly starting processes; this is 5 % of it, measured).
CXXFLAGS: tuple[str, ...] = ("-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-pipe")
#: Bind every shared-library symbol at process start: resolved lazily, the first
#: call of each (mutex, condition variable, memcpy, clock, ...) would land inside
#: the kernels' run, which the harness times.
LDFLAGS: tuple[str, ...] = ("-Wl,-z,now",)

#: The symbol the runtime (runtime/main.cpp) calls for each role; each kernel object's
#: entry point is renamed to it, and every other strong global it defines is made local,
#: so helpers with the same name in two kernels do not clash.
ENTRY_SYMBOLS: dict[str, str] = {
    "reader": "_Z18ttlemu_reader_mainv",
    "writer": "_Z18ttlemu_writer_mainv",
    "compute": "_ZN14ttlemu_compute12compute_mainEv",
}
#: The kind of kernel (as the API level's descriptor names it) of each role.
ROLE_KINDS = {"reader": "dataflow", "writer": "dataflow", "compute": "compute"}
LEVEL_DESCRIPTOR = "ttlemu_level.json"


def api_headers(level: str) -> Path:
    """The generated kernel-API headers of ``level``: ``$TTLGEN_API_HEADERS/<level>``, else
    the wheel's copy, else ``generated/emulator/<level>`` of the checkout ttlgen runs from."""
    env = os.environ.get("TTLGEN_API_HEADERS")
    installed = PACKAGE_DIR / "_emulator"
    root = Path(env) if env else installed if installed.is_dir() else PACKAGE_DIR.parents[1] / "generated" / "emulator"
    return root / level


def entry_symbol(api_dir: Path, role: str) -> str:
    """The symbol a kernel of ``role`` compiled against ``api_dir`` defines as its entry point."""
    path = api_dir / LEVEL_DESCRIPTOR
    try:
        descriptor = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CompileError(f"no kernel-API headers at {api_dir} ({path.name}: {exc.strerror}); run `ttlgen build`") from None
    symbol: str = descriptor["entry_symbols"][ROLE_KINDS[role]]
    return symbol


class CompileError(RuntimeError):
    """g++ rejected a source; the message carries the compiler output."""


class ToolchainError(RuntimeError):
    """A tool the build runs (the compiler, readelf, objcopy, ar) cannot be started, or the
    compiler cannot build even an empty program (its assembler or linker is missing): the
    environment's problem, not the kernel's, so no verdict on the kernel is made."""


def _how_to_choose(tool: str) -> str:
    return "install g++, or set TTLGEN_CXX to a C++17 compiler" if tool == CXX else "install binutils, which provides it"


def _started(cmd: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(cmd)``, or a ToolchainError naming the tool when it cannot be started."""
    try:
        return subprocess.run(list(cmd), **kwargs)
    except OSError as exc:
        raise ToolchainError(f"cannot run {cmd[0]!r} ({exc.strerror}): {_how_to_choose(cmd[0])}") from None


def cache_dir() -> Path:
    """Where compiled objects, runtime libraries and programs are kept: ``device/`` under
    ttlgen's cache root (``ttlgen.cache.cache_root()``: ``$TTLGEN_CACHE_DIR`` or
    ``~/.cache/ttlgen``), or ``$TTLGEN_DEVICE_CACHE``, which moves this cache alone.

    With caching off (``TTLGEN_NO_CACHE=1``), or when that directory cannot be written,
    this process builds in a temporary directory of its own instead: the cache only ever
    costs or saves time.
    """
    explicit = os.environ.get("TTLGEN_DEVICE_CACHE")
    return cache.usable_dir(Path(explicit) if explicit else cache.cache_root() / "device", "ttlgen-device-")


@functools.cache
def _linker() -> tuple[str, ...]:
    """gold where the toolchain has it: it links a kernel's program in 20 ms, GNU ld in 55
    (measured; a cold test run links about 250). Else the compiler's default linker."""
    probe = _started([CXX, "-fuse-ld=gold", "-Wl,--version"], capture_output=True, check=False)
    return ("-fuse-ld=gold",) if probe.returncode == 0 else ()


@functools.lru_cache(maxsize=1)
def compiler_version() -> str:
    out = _started([CXX, "--version"], capture_output=True, text=True, check=False)
    lines = out.stdout.splitlines()
    if out.returncode != 0 or not lines:
        raise ToolchainError(f"{CXX} --version failed (exit {out.returncode}), so {CXX!r} is no usable compiler: {_how_to_choose(CXX)}")
    return str(lines[0])


def _digest(parts: Sequence[bytes | str]) -> str:
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()[:24]


class _Snapshot:
    """The files of some directories, read once: what a key hashes and what the compiler
    reads (`materialize` writes these bytes, not the files as they are now)."""

    def __init__(self, roots: Mapping[str, tuple[Path, Sequence[str]]]) -> None:
        self.files: dict[str, bytes] = {}
        for name, (root, patterns) in roots.items():
            for pattern in patterns:
                for f in sorted(root.rglob(pattern)):
                    self.files[f"{name}/{f.relative_to(root).as_posix()}"] = f.read_bytes()
        self.files = dict(sorted(self.files.items()))

    def parts(self) -> list[bytes | str]:
        return [part for path, data in self.files.items() for part in (path, data)]

    def materialize(self, directory: Path) -> Path:
        for path, data in self.files.items():
            target = directory / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return directory


# The emulator's glue headers, which every compile reads (see _Snapshot).
_EMULATOR_HEADERS = {"include": (INCLUDE_DIR, ("*.h", "*.hpp"))}


# gcc's "cannot execute 'as'" and collect2's "cannot find 'ld'", quoted as the locale quotes.
_MISSING_PROGRAM = re.compile("cannot (?:execute|find) [\u2018'`\"]([^\u2019'\"]+)[\u2019'\"]")


_PROBE_LOCK = threading.Lock()


@functools.cache
def _toolchain_fault(cxx: str) -> str | None:
    """What ``cxx`` says when it cannot compile and link an empty program, or None when it can.
    g++ starts the assembler and the linker itself, so their absence surfaces only as a failed
    compile, which would be blamed on the source (and found only after the runtime's seconds
    of compiling)."""
    with tempfile.TemporaryDirectory(prefix="ttlgen-probe-") as scratch:
        probe = [cxx, *LDFLAGS, *_linker(), "-x", "c++", "-", "-o", str(Path(scratch) / "probe")]
        proc = _started(probe, capture_output=True, input=b"int main() { return 0; }\n")
    return None if proc.returncode == 0 else proc.stderr.decode(errors="replace").strip()


def _broken_toolchain(fault: str) -> ToolchainError:
    missing = _MISSING_PROGRAM.search(fault)
    if missing is not None:
        return ToolchainError(
            f"{CXX} cannot build even an empty program: it cannot run {missing.group(1)!r}, which it needs to "
            f"assemble or link; install binutils, which provides it, or set TTLGEN_CXX to a C++17 compiler "
            "with a complete toolchain"
        )
    detail = fault.splitlines()[0] if fault else "no message"
    return ToolchainError(f"{CXX} cannot build even an empty program ({detail}): {_how_to_choose(CXX)}")


def _run(cmd: Sequence[str], what: str, stdin: bytes | None = None) -> None:
    if cmd[0] == CXX:
        # Once per process, before its first compile: a cache hit pays nothing, a miss 0.1 s.
        with _PROBE_LOCK:
            fault = _toolchain_fault(CXX)
        if fault is not None:
            raise _broken_toolchain(fault)
    proc = _started(cmd, capture_output=True, input=stdin)
    if proc.returncode != 0:
        raise CompileError(f"{what} failed ({' '.join(cmd)}):\n{proc.stderr.decode(errors='replace')}")


def _seal_of(path: Path) -> Path:
    return path.with_name(path.name + ".seal")


def _sealed(path: Path) -> bool:
    """Whether ``path`` holds the product its seal was written for."""
    try:
        return _seal_of(path).read_text() == hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return False


def _publish(tmp: Path, dest: Path) -> Path:
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    os.replace(tmp, dest)
    cache.write_atomically(_seal_of(dest), digest.encode())
    return dest


def build_runtime() -> Path:
    """The runtime as a static library, built once per content hash."""
    inputs = _Snapshot({**_EMULATOR_HEADERS, "runtime": (RUNTIME_DIR, ("*.cpp", "*.hpp"))})
    key = _digest([compiler_version(), *CXXFLAGS, *inputs.parts()])
    lib = cache_dir() / f"libttlemu-{key}.a"
    if _sealed(lib):
        return lib
    with tempfile.TemporaryDirectory(dir=cache_dir()) as scratch:
        tree = inputs.materialize(Path(scratch))
        sources = sorted((tree / "runtime").glob("*.cpp"))
        objs = [source.with_suffix(".o") for source in sources]
        include = [f"-I{tree / 'include'}", f"-I{tree / 'runtime'}"]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            futures = [
                pool.submit(_run, [CXX, *CXXFLAGS, *include, "-c", str(s), "-o", str(o)], f"compiling runtime {s.name}")
                for s, o in zip(sources, objs, strict=True)
            ]
            for f in futures:
                f.result()
        tmp = tree / "runtime.a"
        # D: no timestamps or owners, so equal inputs give equal bytes.
        _run(["ar", "rcsD", str(tmp), *map(str, objs)], "archiving runtime")
        return _publish(tmp, lib)


def _defined_globals(obj: Path) -> dict[str, str]:
    """Each symbol ``obj`` defines and exports, with its binding: GLOBAL (strong), WEAK or
    UNIQUE. Read with readelf rather than nm, which loads the LTO plugin for every file (20
    ms, ten times the listing, for each of a program's objects)."""
    listing = _started(["readelf", "--syms", "--wide", str(obj)], capture_output=True, text=True, check=True).stdout
    defined = {}
    for line in listing.splitlines():
        # Num: Value Size Type Bind Vis Ndx Name; Ndx is a section number where the symbol is
        # defined in one (UND: undefined, ABS and COM: no section, as nm's letters tell).
        fields = line.split()
        if len(fields) == 8 and fields[4] in ("GLOBAL", "WEAK", "UNIQUE") and fields[6].isdigit() and fields[3] != "IFUNC":
            defined[fields[7]] = fields[4]
    return defined


def _export_entry(obj: Path, entry: str, role: str) -> None:
    """Make every strong global but ``entry`` local, then rename ``entry`` to the role's."""
    # Weak and COMDAT symbols (inline functions, templates) stay global: making
    # them local breaks the linker's de-duplication of their sections.
    defined = _defined_globals(obj)
    if entry not in defined:
        raise CompileError(f"{obj.name}: the {role} kernel defines no entry point {entry} (is it written for this API level?)")
    strong = [f"--localize-symbol={name}" for name, bind in defined.items() if bind == "GLOBAL" and name != entry]
    if strong:
        _run(["objcopy", *strong, str(obj)], f"localizing helper symbols of {obj.name}")
    if entry != ENTRY_SYMBOLS[role]:
        _run(["objcopy", f"--redefine-sym={entry}={ENTRY_SYMBOLS[role]}", str(obj)], f"renaming the entry point of {obj.name}")


def compile_kernel(
    source: Path,
    role: str,
    compile_time_args: Sequence[int],
    api_dir: Path,
    cb_tables: CbTables | None = None,
    kernel_defines: Sequence[tuple[str, str]] = (),
) -> Path:
    """Object file of one kernel source for ``role`` (reader / compute / writer), compiled
    against the kernel-API headers in ``api_dir``, with the program's CB tables and the
    defines the host passes to the kernel (``-DNAME=VALUE``, as the JIT's defines_generated.h)."""
    defines = [f"-D{name}={value}" for name, value in kernel_defines]
    if compile_time_args:
        defines.append(
            "-DKERNEL_COMPILE_TIME_ARGS=" + ",".join(f"{int(a)}u" for a in compile_time_args)
        )
    if cb_tables is not None:
        defines += cb_tables.defines()
    flags = [*CXXFLAGS, *defines]
    headers = _Snapshot({**_EMULATOR_HEADERS, "api": (api_dir, ("*.h", "*.json"))})
    code = source.read_bytes()
    # "exported" versions the post-processing below, which the key must cover.
    key = _digest([compiler_version(), *flags, *headers.parts(), "exported", role, code])
    obj = cache_dir() / f"{role}-{key}.o"
    if _sealed(obj):
        return obj
    with tempfile.TemporaryDirectory(dir=cache_dir()) as scratch:
        tree = headers.materialize(Path(scratch))
        entry = entry_symbol(tree / "api", role)
        tmp = tree / "kernel.o"
        _run(
            [CXX, *flags, f"-I{tree / 'api'}", f"-I{tree / 'include'}", "-x", "c++", "-c", "-", "-o", str(tmp)],
            f"compiling {source}",
            stdin=code,
        )
        _export_entry(tmp, entry, role)
        return _publish(tmp, obj)


@dataclass(frozen=True)
class CbTables:
    """Each CB's page size and tt::DataFormat value, indexed by CB (0 / 0xff: unbound): the
    compile-time tables a kernel's constexpr get_tile_size / get_dataformat read."""

    page_sizes: tuple[int, ...]
    formats: tuple[int, ...]

    def defines(self) -> list[str]:
        return [
            "-DTTLEMU_CB_PAGE_SIZES=" + ",".join(f"{p}u" for p in self.page_sizes),
            "-DTTLEMU_CB_FORMATS=" + ",".join(str(f) for f in self.formats),
        ]


def build_executable(
    kernels: Mapping[str, tuple[Path, Sequence[int]]],
    api_dir: Path,
    cb_tables: CbTables | None = None,
    defines: Mapping[str, Sequence[tuple[str, str]]] | None = None,
) -> Path:
    """Link reader, compute and writer (source, compile-time args) with the runtime; the
    kernels compile against the kernel-API headers in ``api_dir`` with ``cb_tables`` and
    each role's ``defines`` (the host's, from program.json)."""
    lib = build_runtime()
    roles = ("reader", "compute", "writer")
    given = defines or {}
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(compile_kernel, kernels[r][0], r, kernels[r][1], api_dir, cb_tables, given.get(r, ())) for r in roles]
        objs = [f.result() for f in futures]
    flags = (*LDFLAGS, *_linker())
    key = _digest([lib.name, *(o.name for o in objs), *flags])
    exe = cache_dir() / f"prog-{key}"
    if _sealed(exe):
        return exe
    with tempfile.TemporaryDirectory(dir=cache_dir()) as scratch:
        tmp = Path(scratch) / "prog"
        _run([CXX, "-pthread", *flags, "-o", str(tmp), *map(str, objs), str(lib)], "linking emulator program")
        return _publish(tmp, exe)
