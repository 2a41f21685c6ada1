"""A Python 3.12 environment with a pinned ttnn, to run code against its real host classes.

The ttnn wheels are built for CPython 3.12 only, and ttlgen runs on 3.11 and later, so the
environment is a virtual environment of its own, made from a 3.12 interpreter
(``$TTLGEN_PYTHON312``, else pyenv's newest 3.12, else ``python3.12`` on the PATH). It holds
the pinned wheel installed without its dependencies (torch and the rest are not needed to
build descriptors) and the three modules ``import ttnn`` needs: NumPy below 2, loguru and
graphviz. ``import ttnn`` needs no device.

It lives in the upstream cache (:func:`ttlgen.upstream.fetch.upstream_root`), in a
directory named by the wheel's sha256 and the requirements, and is made once: under a
lock, then marked complete only after ``import ttnn`` succeeded in it, so a killed setup is
redone rather than trusted.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ttlgen.errors import UsageError
from ttlgen.model.tt_metal_api import WHEEL_PYTHON, Release
from ttlgen.upstream import fetch

PYTHON_ENV = "TTLGEN_PYTHON312"
# What `import ttnn` needs besides the wheel (its own requirements include torch).
REQUIREMENTS = ("numpy<2", "loguru", "graphviz")
_COMPLETE = "ttlgen-complete"


class EnvironmentUnavailable(UsageError):
    """No Python 3.12, or pip could not make the environment (no network, no index)."""


class TtnnImportFailed(UsageError):
    """The environment was made but ``import ttnn`` fails in it: the wheel's fault, not
    the machine's."""


def python312() -> str | None:
    """A CPython 3.12 interpreter, or None."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    versions = sorted(pyenv.glob(f"{WHEEL_PYTHON}.*"), key=lambda p: _version_key(p.name), reverse=True)
    candidates = [
        os.environ.get(PYTHON_ENV),
        *(str(p / "bin" / "python") for p in versions),
        shutil.which(f"python{WHEEL_PYTHON}"),
    ]
    # Unset or not found, a candidate is None or empty.
    return next((c for c in candidates if c and _is_python312(c)), None)


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", name))


def _is_python312(path: str) -> bool:
    try:
        done = subprocess.run(
            [path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip() == WHEEL_PYTHON


def environment_dir(release: Release) -> Path:
    key = hashlib.sha256("\0".join((release.sha256, *REQUIREMENTS)).encode()).hexdigest()[:16]
    return fetch.upstream_root() / "venvs" / f"{release.package}-{release.version}-py{WHEEL_PYTHON}-{key}"


def ttnn_python(release: Release) -> Path:
    """The interpreter of the environment with ``release`` installed, made if needed.
    Raises EnvironmentUnavailable (no 3.12, pip failed) or FetchError (no wheel)."""
    directory = environment_dir(release)
    python = directory / "bin" / "python"
    if (directory / _COMPLETE).is_file() and python.exists():
        return python
    interpreter = python312()
    if interpreter is None:
        raise EnvironmentUnavailable(
            f"no Python {WHEEL_PYTHON} to install {release.name} into (the ttnn wheels are cp312 only): "
            f"install one (e.g. `pyenv install {WHEEL_PYTHON}`) or set ${PYTHON_ENV}"
        )
    wheel = fetch.wheel_path(release)
    with fetch.locked(fetch.upstream_root() / "locks" / f"{directory.name}.lock"):
        if (directory / _COMPLETE).is_file() and python.exists():
            return python  # made by another process while this one waited
        shutil.rmtree(directory, ignore_errors=True)  # an unfinished one: never trusted
        directory.parent.mkdir(parents=True, exist_ok=True)
        _run([interpreter, "-m", "venv", str(directory)], f"make a Python {WHEEL_PYTHON} environment for {release.name}")
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input"]
        _run([*pip, *REQUIREMENTS], f"install {', '.join(REQUIREMENTS)} for {release.name}")
        _run([*pip, "--no-deps", str(wheel)], f"install {release.wheel}")
        _run([str(python), "-c", "import ttnn"], f"import ttnn from {release.wheel}", TtnnImportFailed)
        (directory / _COMPLETE).write_text(f"{release.wheel} {release.sha256}\n", encoding="utf-8")
    return python


def _run(args: Sequence[str], what: str, error: type[UsageError] = EnvironmentUnavailable) -> None:
    try:
        done = subprocess.run(list(args), capture_output=True, text=True, check=False)
    except OSError as exc:
        raise error(f"cannot {what}: {exc.strerror}") from None
    if done.returncode != 0:
        raise error(f"cannot {what}: {fetch.pip_reason(done.stderr, done.stdout)}")


def run_python(release: Release, args: Sequence[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the environment's interpreter with ``args``. ttlgen's own package is importable
    there (alone: a directory holding a link to it goes on ``PYTHONPATH``, not the
    site-packages of the interpreter running ttlgen, whose compiled modules are not 3.12's),
    so code run there can use ``ttlgen.device``."""
    python = ttnn_python(release)
    with tempfile.TemporaryDirectory(prefix="ttlgen-ttnn-path-") as path:
        os.symlink(Path(__file__).resolve().parents[1], Path(path) / "ttlgen")
        variables = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        variables["PYTHONPATH"] = path
        return subprocess.run([str(python), *args], input=stdin, capture_output=True, text=True, check=False, env=variables)
