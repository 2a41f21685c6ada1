"""A build stopped at any step, racing another build, or refused by the disk never leaves a
broken tree: the output path holds the old tree or the new one, and the next command
finishes the job."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import GENERATED, run_cli
from ttlgen import write
from ttlgen.write import existing_files

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill tests fork a child build")

STEPS = ("mkdir", "write", "link", "rename", "exchange")


def small_tree(out: Path) -> None:
    """A few committed files in three directories: every kind of step, few of each."""
    for path in existing_files(GENERATED):
        if path == "MANIFEST" or path.startswith(("include/", "docs/")):
            (out / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(GENERATED / path, out / path)


def tree(root: Path) -> dict[str, bytes]:
    return {path: (root / path).read_bytes() for path in existing_files(root)}


def new_tree(old: dict[str, bytes]) -> dict[str, bytes]:
    """The committed tree with one file changed, one added and one removed."""
    files = dict(old)
    files["MANIFEST"] = old["MANIFEST"] + b"# changed\n"
    files["added/file.txt"] = b"new\n"
    del files[sorted(old)[1]]
    return files


def in_child(action: Callable[[], None]) -> int:
    """Run ``action`` in a forked child; its exit status (a kill ends it with 137)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            action()
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def killed_at(step: int, out: Path, files: dict[str, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    """Patch every file-system step of a build to count, and die without cleaning up at
    number ``step`` (as SIGKILL or a power cut would)."""
    count = [0]
    for name in STEPS:
        real = getattr(write.FS, name)

        def counted(*args: object, _real: Callable[..., object] = real) -> object:
            count[0] += 1
            if count[0] == step:
                os._exit(137)
            return _real(*args)

        monkeypatch.setattr(write.FS, name, counted)
    write.write_tree(out, files)


def count_steps(out: Path, files: dict[str, bytes], tmp_path: Path) -> int:
    probe = tmp_path / "probe" / out.name
    shutil.copytree(out, probe)
    count = [0]
    real = {name: getattr(write.FS, name) for name in STEPS}
    with pytest.MonkeyPatch.context() as patch:
        for name in STEPS:
            def counted(*args: object, _name: str = name) -> object:
                count[0] += 1
                return real[_name](*args)

            patch.setattr(write.FS, name, counted)
        write.write_tree(probe, files)
    return count[0]


@pytest.mark.parametrize("exchange", [True, False], ids=["one-step-swap", "two-rename-swap"])
def test_a_build_killed_at_any_step_leaves_the_old_or_the_new_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    if not exchange:
        monkeypatch.setattr(write.FS, "exchange", lambda a, b: False)
    elif write._EXCHANGE is None:
        pytest.skip("this system cannot exchange two paths in one step")
    out = tmp_path / "generated"
    small_tree(out)
    old = tree(out)
    files = new_tree(old)
    steps = count_steps(out, files, tmp_path)
    assert steps > len(files), "every file is one step at least"
    for step in range(1, steps + 1):
        status = in_child(lambda step=step: killed_at(step, out, files, monkeypatch))
        assert status == 137, f"step {step} of {steps} was not reached"
        if write.interrupted_swap(out) is None:
            assert tree(out) in (old, files), f"a kill at step {step} left a mixed tree"
        else:
            assert not exchange, "with a one-step swap the path is never empty"
            write.recover(out)  # what check, diff and build do first
            assert tree(out) == old
        write.recover(out)
        assert tree(out) in (old, files)
        write.write_tree(out, old)  # back to the old tree for the next kill
        assert [p.name for p in tmp_path.iterdir() if ".ttlgen-" in p.name] == []
    write.write_tree(out, files)
    assert tree(out) == files


def test_two_builds_of_one_tree_run_one_after_the_other(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "generated"
    small_tree(out)
    files = new_tree(tree(out))
    log = tmp_path / "waiting.log"
    ready_read, ready_write = os.pipe()

    def slow_build() -> None:
        with write.tree_lock(out):
            os.write(ready_write, b"x")
            time.sleep(0.5)  # hold the lock while the second build starts
            write.recover(out)
            write.write_tree(out, files)

    def second_build() -> None:
        with open(log, "w", encoding="utf-8") as handle, write.tree_lock(out, waiting=handle):
            write.recover(out)  # must not remove the first build's stage
            write.write_tree(out, files)

    first = os.fork()
    if first == 0:  # pragma: no cover - the child
        try:
            slow_build()
        finally:
            os._exit(0)
    os.read(ready_read, 1)
    assert in_child(second_build) == 0
    _, status = os.waitpid(first, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert tree(out) == files
    assert "another ttlgen is using" in log.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir() if ".ttlgen-" in p.name] == []


@pytest.mark.parametrize(
    "code", [errno.EROFS, errno.ENOSPC, errno.EACCES], ids=["read-only", "full", "no-permission"]
)
def test_a_refused_write_exits_2_with_one_line_and_keeps_the_old_tree(
    spec_copy: Path, generated_copy: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    (generated_copy / "docs" / "komorebi-abi.md").write_text("stale\n")
    before = tree(generated_copy)

    def refuse(path: Path, content: bytes) -> None:
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(write.FS, "write", refuse)
    result = run_cli("build", "--specs", spec_copy, "--out", generated_copy)
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("ttlgen: cannot write ") and os.strerror(code) in line
    assert str(generated_copy.parent) in line
    assert tree(generated_copy) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_output_directory_exits_2_and_keeps_the_old_tree(spec_copy: Path, generated_copy: Path) -> None:
    (generated_copy / "docs" / "komorebi-abi.md").write_text("stale\n")
    before = tree(generated_copy)
    parent = generated_copy.parent
    parent.chmod(0o555)
    try:
        result = run_cli("build", "--specs", spec_copy, "--out", generated_copy)
    finally:
        parent.chmod(0o755)
    assert result.exit_code == 2
    assert "Permission denied" in result.stderr and "Traceback" not in result.stderr
    assert tree(generated_copy) == before


@pytest.mark.parametrize("command", ["build", "check", "validate"])
def test_an_unusable_cache_directory_only_costs_speed(
    spec_copy: Path, generated_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    not_a_directory = tmp_path / "cache-is-a-file"
    not_a_directory.write_text("x")
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(not_a_directory))
    args = ["--specs", spec_copy] + ([] if command == "validate" else ["--out", generated_copy])
    result = run_cli(command, *args)
    assert result.exit_code == 0, result.stderr


def test_rebuilt_files_get_the_same_mode_whichever_changed(spec_copy: Path, generated_copy: Path) -> None:
    (generated_copy / "docs" / "komorebi-abi.md").write_text("stale\n")  # one rewritten file, the rest kept
    previous = os.umask(0o077)
    try:
        assert run_cli("build", "--specs", spec_copy, "--out", generated_copy).exit_code == 0
    finally:
        os.umask(previous)
    modes = {stat.S_IMODE((generated_copy / p).stat().st_mode) for p in existing_files(generated_copy)}
    directories = {stat.S_IMODE(d.stat().st_mode) for d in [generated_copy, *generated_copy.rglob("*")] if d.is_dir()}
    assert modes == {0o600}
    assert directories == {0o700}


def test_the_tree_cache_key_covers_the_spec_directory_name(spec_copy: Path, generated_copy: Path) -> None:
    assert run_cli("build", "--specs", spec_copy, "--out", generated_copy).exit_code == 0
    other = spec_copy.parent / "other"
    shutil.copytree(spec_copy, other)
    # Headers name their sources by the spec directory, so the tree differs.
    result = run_cli("check", "--specs", other, "--out", generated_copy)
    assert result.exit_code == 1


def test_specs_dot_inside_the_spec_directory_names_sources_by_the_directory(
    spec_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(spec_copy)
    out = tmp_path / "out"
    assert run_cli("build", "--specs", ".", "--out", out).exit_code == 0
    header = (out / "include" / "komorebi" / "abi" / "km_abi.h").read_text(encoding="utf-8")
    assert "//   specs/abi/komorebi.yaml\n" in header

