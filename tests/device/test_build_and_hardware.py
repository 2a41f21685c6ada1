"""Compile caching, and the hardware variant (skipped without ttnn and a device)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from device_helpers import FIXTURES, Runner

from ttlgen.device import (
    api_headers,
    build,
    build_executable,
    build_runtime,
    cache_dir,
    run_program_on_device,
    ttnn_device_available,
)
from ttlgen.device.formats import to_bf16


def _kernels(ct: list[int]) -> dict[str, tuple[Path, list[int]]]:
    d = FIXTURES / "copy"
    return {
        "reader": (d.parent / "_shared" / "reader_tiles.cpp", []),
        "compute": (d / "compute.cpp", ct),
        "writer": (d.parent / "_shared" / "writer_tiles.cpp", []),
    }


@pytest.fixture(scope="module")
def one_program_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A compile cache holding the products of one program, built once for the module.

    Its runtime archive, sealed, is copied from the run's own compile cache, where the
    other device tests build it too: it is the same product built from the same inputs, and
    building it again here (the costliest compile) is what the damage test does once."""
    directory = tmp_path_factory.mktemp("built")
    archive = build_runtime()
    for product in archive.parent.glob(f"{archive.name}*"):  # the archive and its seal
        shutil.copy2(product, directory / product.name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TTLGEN_DEVICE_CACHE", str(directory))
        build_executable(_kernels([2, 0]), api_headers("current"))
    return directory


@pytest.fixture
def program_cache(one_program_built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of that cache of this test's own, as the compile cache."""
    directory = tmp_path / "device"
    shutil.copytree(one_program_built, directory)
    monkeypatch.setenv("TTLGEN_DEVICE_CACHE", str(directory))
    return directory


@pytest.mark.device
def test_executable_is_cached_by_content(program_cache: Path) -> None:
    first = build_executable(_kernels([2, 0]), api_headers("current"))
    mtime = first.stat().st_mtime_ns
    assert build_executable(_kernels([2, 0]), api_headers("current")) == first
    assert first.stat().st_mtime_ns == mtime
    assert build_executable(_kernels([2, 1]), api_headers("current")) != first


def _damage(product: Path, how: str, seals: list[Path]) -> None:
    data = product.read_bytes()
    seal = product.with_name(product.name + ".seal")
    if how == "flip":
        product.write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])
    elif how == "truncate":
        product.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        product.write_bytes(b"")
    elif how == "unsealed":
        seal.unlink()
    else:  # the seal of another product
        seal.write_bytes(next(s for s in seals if s != seal).read_bytes())


def _products(directory: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in directory.iterdir() if p.is_file()}


@pytest.mark.device
def test_a_damaged_compile_product_is_built_again_to_the_same_bytes(program_cache: Path) -> None:
    first = build_executable(_kernels([2, 0]), api_headers("current"))
    good = _products(program_cache)
    seals = sorted(p for p in good if p.name.endswith(".seal"))
    assert len(seals) == 5, "the runtime, three kernel objects and the program, each sealed"
    # Every kind of damage, each to a product a rebuild makes in a second or two (a kernel
    # object, the program); the runtime archive once, by the costliest rebuild.
    kernel_objects = sorted(p for p in good if p.suffix == ".o")
    archive = next(p for p in good if p.suffix == ".a")
    for how, product in [(h, kernel_objects[i % len(kernel_objects)]) for i, h in enumerate(("flip", "truncate", "empty", "unsealed", "seal-of-another"))] + [
        ("flip", first),
        ("seal-of-another", first),
        ("truncate", archive),
    ]:
        _damage(product, how, seals)
        assert build_executable(_kernels([2, 0]), api_headers("current")) == first
        assert _products(program_cache) == good, f"{product.name} {how}: built again, to the same bytes"


def test_the_compile_cache_lives_under_the_cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TTLGEN_DEVICE_CACHE", raising=False)
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "root"))
    assert cache_dir() == tmp_path / "root" / "device"


def test_ttlgen_device_cache_moves_the_compile_cache_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "root"))
    monkeypatch.setenv("TTLGEN_DEVICE_CACHE", str(tmp_path / "device"))
    assert cache_dir() == tmp_path / "device"


@pytest.mark.parametrize("explicit", [False, True], ids=["under-the-root", "TTLGEN_DEVICE_CACHE"])
def test_with_caching_off_the_compile_cache_is_a_directory_of_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explicit: bool
) -> None:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "root"))
    if explicit:
        monkeypatch.setenv("TTLGEN_DEVICE_CACHE", str(tmp_path / "device"))
    else:
        monkeypatch.delenv("TTLGEN_DEVICE_CACHE", raising=False)
    monkeypatch.setenv("TTLGEN_NO_CACHE", "1")
    directory = cache_dir()
    assert directory.parent == Path(tempfile.gettempdir()) and directory.is_dir()
    assert not (tmp_path / "root").exists() and not (tmp_path / "device").exists()


@pytest.mark.parametrize("explicit", [False, True], ids=["under-the-root", "TTLGEN_DEVICE_CACHE"])
def test_an_unwritable_compile_cache_builds_in_a_directory_of_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explicit: bool
) -> None:
    not_a_directory = tmp_path / "a-file"
    not_a_directory.write_text("x")
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(not_a_directory))
    if explicit:
        monkeypatch.setenv("TTLGEN_DEVICE_CACHE", str(not_a_directory / "device"))
    else:
        monkeypatch.delenv("TTLGEN_DEVICE_CACHE", raising=False)
    directory = cache_dir()
    assert directory.parent == Path(tempfile.gettempdir())
    tempfile.NamedTemporaryFile(dir=directory).close()  # writable


@pytest.mark.device
def test_same_helper_name_in_reader_and_writer_links(run: Runner) -> None:
    x = to_bf16(np.random.default_rng(8).standard_normal((32, 64)))  # exact through SrcA
    out = run("same_helper_names", {"x": x}).outputs["out"]
    np.testing.assert_array_equal(out, x)


@pytest.fixture
def toolchain_without_gold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The compiler as a toolchain without the gold linker gives it (newer binutils build
    none): every link that asks for gold fails, everything else is the real compiler."""
    compiler = tmp_path / "g++"
    compiler.write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do [ "$arg" = -fuse-ld=gold ] && { echo "collect2: fatal error: cannot find ld" >&2; exit 1; }; done\n'
        f'exec {shutil.which(build.CXX)} "$@"\n',
        encoding="utf-8",
    )
    compiler.chmod(0o755)
    monkeypatch.setattr(build, "CXX", str(compiler))
    build._linker.cache_clear()
    yield
    build._linker.cache_clear()


@pytest.mark.device
@pytest.mark.usefixtures("program_cache", "toolchain_without_gold")  # a program linked anew
def test_a_toolchain_without_gold_links_programs_that_run(run: Runner) -> None:
    x = to_bf16(np.random.default_rng(8).standard_normal((32, 64)))
    np.testing.assert_array_equal(run("same_helper_names", {"x": x}).outputs["out"], x)


@pytest.mark.device
def test_hardware_run_matches_emulator(run: Runner) -> None:
    ok, reason = ttnn_device_available()
    if not ok:
        pytest.skip(reason)
    rng = np.random.default_rng(7)
    inputs = {"a": rng.standard_normal((64, 64)), "b": rng.standard_normal((64, 64))}
    hw = run_program_on_device(FIXTURES / "eltwise_add", inputs).outputs["out"]
    emu = run("eltwise_add", inputs).outputs["out"]
    np.testing.assert_allclose(hw, emu, rtol=2**-7)
