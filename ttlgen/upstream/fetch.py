"""The pinned ttnn wheels and the tt-metal header tree extracted from each.

Each API level pins the release it follows (``release:`` in ``specs/tt_metal/<level>.yaml``):
a wheel file name and its sha256. :func:`fetch` downloads that wheel with pip (for CPython
3.12 on manylinux_2_34 x86_64, without installing anything), checks its sha256 and
extracts the device-side source tree a kernel compile and a header parse read (see
:data:`SUBTREES`) into the cache, in a directory named by the sha256:

    <root>/wheels/<sha256>/<wheel>          the verified wheel (the ttnn venv installs it)
    <root>/headers/<sha256>/ttnn/tt_metal/  the extracted tree
    <root>/headers/<sha256>/MANIFEST.json   every extracted file with its size and sha256

``<root>`` is ``upstream/`` under ttlgen's cache root, or ``$TTLGEN_UPSTREAM_CACHE``, which
moves this cache alone (the test suite keeps it across runs that way). An extraction is
made in a temporary directory and renamed into place, with its manifest written last, so a
killed fetch never leaves a tree that looks complete; a tree whose manifest is missing or
disagrees with its files is a miss and is extracted again.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from ttlgen import cache
from ttlgen.errors import UsageError
from ttlgen.model.tt_metal_api import WHEEL_PLATFORM, WHEEL_PYTHON, Release
from ttlgen.release_headers import MANIFEST, extraction_dir

CACHE_ENV = cache.UPSTREAM_ENV
_MANIFEST_VERSION = 1

# What is extracted, under the wheel's ttnn/tt_metal/: the trees a kernel compile reads
# (the JIT's entry translation units, the kernel API, the LLK of every architecture, the
# host/device shared definitions) and nothing else of the wheel's 160 MB (firmware
# binaries, pre-compiled kernels, Python, the LLK's own tests). An explicit list rather
# than "all but binaries": the wheel grows with every release, the compile needs the same
# few trees. Measured with `g++ -H` over every generated kernel and processor: every header
# read lies under these.
SUBTREES = (
    "hw/inc/",  # the kernel API (api/compute, api/dataflow) and the firmware's internals
    "hw/ckernels/",  # per-architecture LLK API and I/O (llk_api/, llk_io/, common/)
    "hw/firmware/src/",  # the JIT's entry translation units (tt-1xx/trisck.cc, brisck.cc, ncrisck.cc)
    "tt-llk/common/",
    "tt-llk/tools/include/",
    "hostdevcommon/",
    "api/",  # tt-metalium/circular_buffer_constants.h
    "tools/profiler/",  # kernel_profiler.hpp, included by older dataflow headers
    "include/",
)
# Each architecture's LLK library, without its tests and documentation.
_LLK = re.compile(r"tt-llk/tt_llk_[a-z0-9_]+/(common|llk_lib)/")
_SOURCES = (".h", ".hpp", ".hh", ".inl", ".def", ".inc", ".c", ".cc", ".cpp")
TREE = "ttnn/tt_metal/"
# The SFPI release the JIT would download (a record of it; SFPI itself is not in the wheel).
_EXTRA_FILES = ("sfpi-version",)


class FetchError(UsageError):
    """The pinned wheel could not be had (offline, pip failed, a wrong hash): exit code 2."""


class DownloadFailed(FetchError):
    """pip could not download the wheel: no network or package index, or no such release.
    (Not a wrong hash: that is the pin's or the index's fault, never the machine's.)"""


def upstream_root() -> Path:
    """Where wheels, extracted trees and the ttnn venvs are kept (see the module docstring).
    With caching off (``TTLGEN_NO_CACHE=1``) or an unwritable root, a temporary directory
    of this process, deleted when it ends."""
    return cache.usable_dir(cache.upstream_dir(), "ttlgen-upstream-")


def wanted(name: str) -> bool:
    """Whether a member of the wheel belongs to the extracted tree."""
    if not name.startswith(TREE) or name.endswith("/"):
        return False
    inner = name[len(TREE):]
    if inner in _EXTRA_FILES:
        return True
    if not name.endswith(_SOURCES):
        return False
    return inner.startswith(SUBTREES) or _LLK.match(inner) is not None


def fetch(release: Release) -> Path:
    """The directory holding ``tt_metal/`` as ``release``'s wheel ships it (the JIT's root),
    downloading and extracting it first unless a complete extraction exists. Raises
    FetchError with one line when the wheel cannot be had or is not the pinned one."""
    known = _complete_tree(release)
    if known is not None:
        return known
    root = upstream_root()
    with locked(root / "locks" / f"{release.sha256}.lock"):
        # Another process may have finished while this one waited for the lock.
        known = _complete_tree(release)
        if known is not None:
            return known
        wheel = _wheel(release, root)
        return _extract(release, wheel, root)


def wheel_path(release: Release) -> Path:
    """The verified wheel of ``release`` in the cache, downloading it first if needed."""
    root = upstream_root()
    with locked(root / "locks" / f"{release.sha256}.lock"):
        return _wheel(release, root)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock: concurrent fetches of one release (pytest-xdist workers,
    two shells) download and extract it once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _where(release: Release) -> str:
    return f"{release.name} ({release.mark})"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _wheel(release: Release, root: Path) -> Path:
    target = root / "wheels" / release.sha256 / release.wheel
    if target.is_file() and sha256_of(target) == release.sha256:
        return target
    staging = _staging(root / "wheels", "download")
    try:
        downloaded = _pip_download(release, staging)
        found = sha256_of(downloaded)
        if found != release.sha256:
            raise FetchError(
                f"{downloaded.name} from the package index has sha256 {found}, not the pinned {release.sha256} "
                f"of {_where(release)}: the pin or the index is wrong; nothing was extracted"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(downloaded, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _staging(parent: Path, role: str) -> Path:
    """A new directory ``.<role>-<pid>-...`` in ``parent`` (made if missing) to stage a
    download or an extraction in, once those of processes that are gone are removed."""
    parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(parent)
    return Path(tempfile.mkdtemp(prefix=f".{role}-{os.getpid()}-", dir=parent))


def pip_download_command(release: Release, into: Path) -> list[str]:
    """pip download of exactly the pinned wheel: no dependencies, no source build, for the
    interpreter and platform the ttnn wheels are built for (not this one's)."""
    return [
        sys.executable, "-m", "pip", "download", f"{release.package}=={release.version}",
        "--no-deps", "--only-binary=:all:", "--python-version", WHEEL_PYTHON, "--platform", WHEEL_PLATFORM,
        "--dest", str(into), "--no-input", "--disable-pip-version-check", "--quiet",
    ]  # fmt: skip


def _pip_download(release: Release, into: Path) -> Path:
    try:
        done = subprocess.run(pip_download_command(release, into), capture_output=True, text=True, check=False)
    except OSError as exc:
        raise DownloadFailed(f"cannot run pip to download {_where(release)}: {exc.strerror}") from None
    if done.returncode != 0:
        raise DownloadFailed(f"pip could not download {_where(release)}: {pip_reason(done.stderr, done.stdout)}")
    files = sorted(into.glob("*.whl"))
    if [f.name for f in files] != [release.wheel]:
        got = ", ".join(f.name for f in files) or "no wheel"
        raise FetchError(f"pip downloaded {got} for {_where(release)}, not the pinned {release.wheel}")
    return files[0]


_CONNECTION = re.compile(r"Failed to establish a new connection: (\[Errno -?\d+\] )?(?P<why>[^'\")]+)")


def pip_reason(stderr: str, stdout: str) -> str:
    """pip's own one-line reason: its ERROR lines (first and last), with the connection
    failure behind them when pip retried one (no network, no index)."""
    lines = [line.strip() for line in (stderr + "\n" + stdout).splitlines() if line.strip()]
    errors = [line.removeprefix("ERROR:").strip() for line in lines if line.startswith("ERROR:")]
    reason = (errors[0] if len(errors) == 1 else f"{errors[0]} ({errors[-1]})") if errors else (lines[-1] if lines else "")
    if not reason:
        return "pip failed without a message"
    connection = next((found for line in lines if (found := _CONNECTION.search(line))), None)
    if connection is not None:
        reason = f"the package index is unreachable ({connection.group('why').strip()}): {reason}"
    return reason


# ------------------------------------------------------------------------------ extraction


def _complete_tree(release: Release) -> Path | None:
    """The extraction of ``release`` when it is complete and undamaged, else None."""
    return _verified(extraction_dir(upstream_root(), release.sha256), release.sha256)


# Trees this process hashed, by the stat of each file: a test session asks for the same
# headers hundreds of times, and a file whose bytes change gets a new mtime.
_VERIFIED: set[tuple[str, str, int]] = set()


def _verified(directory: Path, sha256: str) -> Path | None:
    """``directory/ttnn`` when the tree there matches its manifest (every file present, of
    its size and sha256) and the manifest names this wheel; None otherwise."""
    try:
        record = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        if record.get("version") != _MANIFEST_VERSION or record.get("wheel_sha256") != sha256:
            return None
        files: dict[str, list[object]] = record["files"]
        stamp = hashlib.sha256()
        for name, (size, _) in sorted(files.items()):
            status = (directory / name).stat()
            if status.st_size != size:
                return None
            stamp.update(f"{name}\0{status.st_ino}\0{status.st_mtime_ns}\0".encode())
        key = (str(directory), stamp.hexdigest(), len(files))
        if key not in _VERIFIED:
            for name, (_, digest) in files.items():
                if hashlib.sha256((directory / name).read_bytes()).hexdigest() != digest:
                    return None
            _VERIFIED.add(key)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return directory / "ttnn" if files else None


def _extract(release: Release, wheel: Path, root: Path) -> Path:
    parent = root / "headers"
    staging = _staging(parent, "extract")
    try:
        files: dict[str, list[object]] = {}
        try:
            with zipfile.ZipFile(wheel) as archive:
                for member in archive.infolist():
                    if not wanted(member.filename):
                        continue
                    data = archive.read(member)
                    path = staging / member.filename
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(data)
                    files[member.filename] = [len(data), hashlib.sha256(data).hexdigest()]
        except (zipfile.BadZipFile, OSError) as exc:
            raise FetchError(f"cannot extract {wheel} ({_where(release)}): {exc}") from None
        if not files:
            raise FetchError(f"{release.wheel} ({_where(release)}) holds no {TREE} tree: not a ttnn wheel with tt-metal's sources")
        record = {"version": _MANIFEST_VERSION, "wheel": release.wheel, "wheel_sha256": release.sha256, "files": files}
        # The manifest last: a tree without it is never taken for complete.
        (staging / MANIFEST).write_text(json.dumps(record, indent=0, sort_keys=True), encoding="utf-8")
        target = parent / release.sha256
        _discard(target)  # a partial or damaged tree (the lock keeps a complete one from being replaced)
        os.rename(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    found = _complete_tree(release)
    if found is None:
        raise FetchError(f"the extraction of {release.wheel} ({_where(release)}) under {parent} does not verify; is the disk full?")
    return found


def _discard(path: Path) -> None:
    """Move ``path`` aside, then delete it: a reader never sees it half deleted."""
    if not path.exists():
        return
    trash = path.with_name(f".discard-{os.getpid()}-{path.name}")
    os.rename(path, trash)
    shutil.rmtree(trash, ignore_errors=True)


def _remove_abandoned(parent: Path) -> None:
    """Delete the staging directories (.download-, .extract-, .discard-<pid>-...) of
    processes that are gone (killed before they could clean up)."""
    for entry in parent.glob(".*-*-*"):
        pid = entry.name.split("-")[1]
        if entry.name.startswith((".download-", ".extract-", ".discard-")) and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
