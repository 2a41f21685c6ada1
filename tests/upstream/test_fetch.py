"""`ttlgen upstream fetch`: the pinned wheel downloaded, its sha256 checked, its tt-metal
sources extracted whole or not at all, a complete extraction reused, and every failure
(offline, a wrong hash) one line and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from upstream_helpers import project, unavailable

from tests.conftest import SPECS, run_cli
from ttlgen.model.tt_metal_api import Release
from ttlgen.upstream import fetch, headers
from ttlgen.upstream.fetch import DownloadFailed


def _releases() -> list[Release]:
    found = [level.release for level in project().api.levels]
    assert all(r is not None for r in found)
    return [r for r in found if r is not None]


def _fetched(release: Release) -> Path:
    try:
        return fetch.fetch(release)
    except DownloadFailed as exc:
        unavailable(f"the pinned wheel cannot be downloaded: {exc}")


# The user's upstream cache (conftest.py points the suite at it), before a test moves it.
USER_CACHE = os.environ[fetch.CACHE_ENV]


def _cached_wheel(release: Release) -> Path:
    """The verified wheel of ``release`` in the user's upstream cache (downloaded if needed)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(fetch.CACHE_ENV, USER_CACHE)
        try:
            return fetch.wheel_path(release)
        except DownloadFailed as exc:
            unavailable(f"the pinned wheel cannot be downloaded: {exc}")


@pytest.fixture
def private_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty upstream cache of the test's own."""
    root = tmp_path / "upstream-cache"
    monkeypatch.setenv(fetch.CACHE_ENV, str(root))
    return root


def _with_wheel(root: Path, release: Release) -> None:
    """Seed a private cache with the pinned wheel (a link to the user's copy): its tests
    are about extraction, not about downloading it again."""
    wheel = _cached_wheel(release)
    target = root / "wheels" / release.sha256 / release.wheel
    target.parent.mkdir(parents=True)
    target.symlink_to(wheel)


def test_fetch_extracts_the_device_sources_a_kernel_compile_reads() -> None:
    for release in _releases():
        root = _fetched(release)
        metal = root / "tt_metal"
        for entry in ("trisck.cc", "brisck.cc", "ncrisck.cc"):
            assert (metal / "hw" / "firmware" / "src" / "tt-1xx" / entry).is_file()
        assert (metal / "hw" / "inc" / "api" / "dataflow" / "dataflow_api.h").is_file()
        assert sorted((metal / "hw" / "inc" / "api" / "compute").glob("*.h"))
        files = [p for p in root.rglob("*") if p.is_file()]
        # Only sources of the listed trees: no firmware binaries, no Python, no LLK tests.
        assert all(fetch.wanted(p.relative_to(root.parent).as_posix()) for p in files)


def test_the_library_gives_a_levels_headers_by_name() -> None:
    level = project().api.levels[0]
    assert level.release is not None
    _fetched(level.release)
    assert headers(level.level, SPECS) == fetch.fetch(level.release)


def test_a_complete_extraction_is_reused_without_pip_or_unzipping(monkeypatch: pytest.MonkeyPatch) -> None:
    release = _releases()[0]
    root = _fetched(release)
    manifest = (root.parent / fetch.MANIFEST).stat()

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a reused extraction ran pip or opened the wheel")

    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(zipfile, "ZipFile", refuse)
    assert fetch.fetch(release) == root
    again = (root.parent / fetch.MANIFEST).stat()
    assert (again.st_ino, again.st_mtime_ns) == (manifest.st_ino, manifest.st_mtime_ns)


def test_a_killed_extraction_leaves_nothing_that_looks_complete(private_root: Path) -> None:
    release = _releases()[0]
    _with_wheel(private_root, release)
    # A fetch killed (SIGKILL: no clean-up runs) in the middle of writing the tree.
    script = f"""
import os, signal, zipfile
from ttlgen.errors import Mark
from ttlgen.model.tt_metal_api import Release
from ttlgen.upstream import fetch
read, count = zipfile.ZipFile.read, [0]
def killing_read(self, *args, **kwargs):
    count[0] += 1
    if count[0] == 200:
        os.kill(os.getpid(), signal.SIGKILL)
    return read(self, *args, **kwargs)
zipfile.ZipFile.read = killing_read
fetch.fetch(Release({release.package!r}, {release.version!r}, {release.wheel!r}, {release.sha256!r}, Mark("x")))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == -9, done.stderr
    trees = private_root / "headers"
    assert not (trees / release.sha256).exists()
    (staging,) = trees.glob(".extract-*")
    assert any(p.is_file() for p in staging.rglob("*"))

    root = fetch.fetch(release)
    assert root == trees / release.sha256 / "ttnn"
    assert (root / "tt_metal" / "hw" / "firmware" / "src" / "tt-1xx" / "trisck.cc").is_file()
    assert not list(trees.glob(".extract-*"))  # the dead process's staging is cleaned up


def test_a_partial_or_damaged_tree_is_a_miss(private_root: Path) -> None:
    release = _releases()[0]
    _with_wheel(private_root, release)
    root = fetch.fetch(release)
    entry = root / "tt_metal" / "hw" / "firmware" / "src" / "tt-1xx" / "trisck.cc"
    original = entry.read_bytes()

    entry.write_bytes(original + b"\n// damaged\n")
    assert fetch.fetch(release) == root
    assert entry.read_bytes() == original

    (root.parent / fetch.MANIFEST).unlink()  # as left by an extraction that never finished
    entry.unlink()
    assert fetch.fetch(release) == root
    assert entry.read_bytes() == original


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("ttlgen: "), stderr
    return lines[0]


def test_a_wrong_pinned_hash_is_one_line_and_extracts_nothing(spec_copy: Path, private_root: Path) -> None:
    level = project().api.levels[-1]
    assert level.release is not None
    spec = spec_copy / Path(level.source).relative_to("specs")
    wrong = "0123456789abcdef" * 4
    spec.write_text(spec.read_text(encoding="utf-8").replace(level.release.sha256, wrong), encoding="utf-8")
    result = run_cli("upstream", "fetch", "--level", level.level)
    if result.exit_code == 2 and "pip could not download" in result.stderr:
        unavailable(f"the pinned wheel cannot be downloaded: {result.stderr.strip()}")
    assert result.exit_code == 2
    line = _one_line(result.stderr)
    assert f"{level.release.wheel} from the package index has sha256 {level.release.sha256}, not the pinned {wrong}" in line
    assert f"{spec.relative_to(spec_copy.parent).as_posix()}:" in line  # where the pin is
    assert not (private_root / "headers" / wrong).exists()
    assert not list((private_root / "wheels").rglob("*.whl"))


def test_offline_is_one_line_naming_the_release(private_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pip pointed at an index nothing answers, with no configuration, links or cache to fall back on.
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_CONSTRAINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.setenv("PIP_RETRIES", "1")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    level = project().api.levels[0]
    assert level.release is not None
    result = run_cli("upstream", "fetch", "--level", level.level, "--specs", str(SPECS))
    assert result.exit_code == 2
    line = _one_line(result.stderr)
    assert line.startswith(f"ttlgen: pip could not download {level.release.name} (")
    assert "the package index is unreachable (Connection refused)" in line
    assert not (private_root / "headers").exists() or not list((private_root / "headers").iterdir())


def test_an_unknown_level_is_one_line() -> None:
    result = run_cli("upstream", "fetch", "--level", "no_such_level", "--specs", str(SPECS))
    assert result.exit_code == 2
    assert _one_line(result.stderr).startswith("ttlgen: no API level 'no_such_level'")

