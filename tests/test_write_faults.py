"""A build stopped at any step, racing another build, or refused by the disk never leaves a
broken tree: the output path holds the old tree or the new one, and the next command
finishes the job.

What the tree holds is not the point: the commands run on the real specs without their
kernels and start from the tree those build (tests/tree_support.py)."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import re
import resource
import shutil
import signal
import stat
import sys
import time
from collections.abc import Callable, Iterator
from multiprocessing.process import BaseProcess
from pathlib import Path

import pytest

from tests.conftest import GENERATED, SPECS, run_cli
from tests.tree_support import forked_ttlgen, small_render
from ttlgen import fs_steps, write
from ttlgen.errors import UsageError
from ttlgen.tree import existing_entries
from ttlgen.tree_lock import tree_lock

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill tests fork a child build")


STEPS = ("mkdir", "write", "link", "copy", "chmod", "rename", "exchange", "unlink", "remove_tree")


def small_tree(out: Path) -> None:
    """A few committed files in three directories: every kind of step, few of each."""
    for path in existing_entries(GENERATED):
        if path == "MANIFEST" or path.startswith(("include/", "docs/")):
            (out / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(GENERATED / path, out / path)


def tree(root: Path) -> dict[str, bytes]:
    return {path: (root / path).read_bytes() for path in existing_entries(root)}


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
    elif fs_steps._EXCHANGE is None:
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


def test_an_update_in_place_killed_at_any_step_leaves_the_old_or_the_new_tree_or_an_incomplete_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where the tree cannot be swapped whole (a mount point, the current directory's tree)
    # it is updated in place: every state a kill leaves is the old tree, the new tree, or a
    # tree holding the INCOMPLETE marker, which `check` reports (an orphan) until a build.
    monkeypatch.setattr(write, "_swap_refused", lambda out_dir: "forced by the test")
    out = tmp_path / "generated"
    small_tree(out)
    old = tree(out)
    files = new_tree(old)
    steps = count_steps(out, files, tmp_path)
    for step in range(1, steps + 1):
        status = in_child(lambda step=step: killed_at(step, out, files, monkeypatch))
        assert status == 137, f"step {step} of {steps} was not reached"
        now = tree(out)
        assert now in (old, files) or write.INCOMPLETE in now, f"a kill at step {step} left a mixed tree unmarked"
        write.write_tree(out, old)  # back to the old tree for the next kill
        assert tree(out) == old
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
        with tree_lock(out):
            os.write(ready_write, b"x")
            # Hold the lock until the second build says it waits for it.
            wait_for(lambda: log.exists() and "another ttlgen" in log.read_text(encoding="utf-8"), "the second build waits")
            write.recover(out)
            write.write_tree(out, files)

    def second_build() -> None:
        with open(log, "w", encoding="utf-8") as handle, tree_lock(out, waiting=handle):
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
    spec_tree: Path, built: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    (built / "docs" / "komorebi-abi.md").write_text("stale\n")
    before = tree(built)

    def refuse(path: Path, content: bytes) -> None:
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(write.FS, "write", refuse)
    result = run_cli("build", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("ttlgen: cannot write ") and os.strerror(code) in line
    assert str(built.parent) in line
    assert tree(built) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_output_directory_exits_2_and_keeps_the_old_tree(spec_tree: Path, built: Path) -> None:
    (built / "docs" / "komorebi-abi.md").write_text("stale\n")
    before = tree(built)
    parent = built.parent
    parent.chmod(0o555)
    try:
        result = run_cli("build", "--specs", spec_tree, "--out", built)
    finally:
        parent.chmod(0o755)
    assert result.exit_code == 2
    assert "Permission denied" in result.stderr and "Traceback" not in result.stderr
    assert tree(built) == before


# A kernel of the real specs, for the commands that take one: those run on the real specs
# whole (the small tree has no kernel), the others on the small tree.
KERNEL = "eltwise_add_bf16"
CACHED_COMMANDS = {
    "build": ["build", "--out", "generated"],
    "check": ["check", "--out", "generated"],
    "diff": ["diff", "--out", "generated"],
    "validate": ["validate"],
    "resolve": ["resolve", KERNEL],
    "run": ["run", KERNEL, "--seed", "1"],
}


@pytest.mark.parametrize(
    "command", [pytest.param(c, marks=[pytest.mark.device] if c == "run" else []) for c in CACHED_COMMANDS]
)
def test_an_unusable_cache_directory_only_costs_speed(
    spec_tree: Path, built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    arguments = CACHED_COMMANDS[command]
    specs = SPECS if KERNEL in arguments else spec_tree  # read only: nothing is written beside the specs
    not_a_directory = tmp_path / "cache-is-a-file"
    not_a_directory.write_text("x")
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(not_a_directory))
    # The emulator's compile cache stays the run's: rebuilding the emulator's runtime costs
    # ten seconds, and that an unusable compile cache falls back to a directory of the
    # process is tests/device/test_build_and_hardware.py's.
    result = run_cli(*arguments, "--specs", specs)
    assert result.exit_code == 0, result.stderr
    assert not_a_directory.read_text() == "x"


def modes(root: Path) -> dict[str, int]:
    """The mode of every file and directory of a tree, by path ("." for the tree)."""
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in [*root.rglob("*")]:
        found[path.relative_to(root).as_posix()] = stat.S_IMODE(path.lstat().st_mode)
    return found


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def test_a_build_that_fails_at_the_swap_leaves_the_old_tree_modes_unchanged(
    spec_tree: Path, built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (built / "docs" / "komorebi-abi.md").write_text("stale\n")  # one rewritten file, the rest kept
    before, modes_before = tree(built), modes(built)

    def refuse(*paths: Path) -> bool:
        raise OSError(errno.EIO, os.strerror(errno.EIO), str(paths[0]))

    monkeypatch.setattr(write.FS, "exchange", refuse)
    monkeypatch.setattr(write.FS, "rename", refuse)
    with umask(0o077):  # the new tree's modes differ from the old one's
        result = run_cli("build", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 2
    assert "the previous tree is unchanged" in result.stderr
    assert tree(built) == before
    assert modes(built) == modes_before


def test_a_build_under_another_umask_gives_every_file_its_mode_though_no_content_changed(
    spec_tree: Path, built: Path
) -> None:
    before = {p: (built / p).stat().st_mtime_ns for p in existing_entries(built)}
    with umask(0o077):
        result = run_cli("build", "--specs", spec_tree, "--out", built)
    assert result.exit_code == 0, result.stderr
    assert "0 written, 0 removed" in result.stdout
    files = set(existing_entries(built))
    assert {mode for path, mode in modes(built).items() if path in files} == {0o600}
    assert {mode for path, mode in modes(built).items() if path not in files} == {0o700}
    assert {p: (built / p).stat().st_mtime_ns for p in existing_entries(built)} == before


def test_a_rebuild_under_the_same_umask_keeps_each_unchanged_file_itself(spec_tree: Path, built: Path) -> None:
    rewritten = "docs/komorebi-abi.md"
    (built / rewritten).write_text("stale\n")
    inodes = {p: (built / p).stat().st_ino for p in existing_entries(built) if p != rewritten}
    assert run_cli("build", "--specs", spec_tree, "--out", built).exit_code == 0
    assert {p: (built / p).stat().st_ino for p in existing_entries(built) if p != rewritten} == inodes


def stage_leftovers(*directories: Path) -> list[str]:
    return sorted(p.name for d in directories for p in d.iterdir() if ".ttlgen-" in p.name)


def test_a_build_through_a_symlinked_out_replaces_the_tree_where_it_points(
    spec_tree: Path, built: Path, tmp_path: Path
) -> None:
    expected = tree(built)
    real = tmp_path / "elsewhere" / "generated"
    real.parent.mkdir()
    built.rename(real)
    (real / "docs" / "komorebi-abi.md").write_text("stale\n")
    link = tmp_path / "generated"
    link.symlink_to(real, target_is_directory=True)
    for _ in range(2):  # the second build must not trip over anything the first left
        result = run_cli("build", "--specs", spec_tree, "--out", link)
        assert result.exit_code == 0, result.stderr
        assert os.readlink(link) == str(real)
        assert tree(real) == expected
        assert stage_leftovers(tmp_path, real.parent) == []
    assert run_cli("check", "--specs", spec_tree, "--out", link, "--no-cache").exit_code == 0


def test_recovery_removes_a_leftover_link_without_following_it(built: Path, tmp_path: Path) -> None:
    before = tree(built)
    leftover = tmp_path / ".generated.ttlgen-stage-12345"
    leftover.symlink_to(built, target_is_directory=True)
    write.recover(built)
    assert not os.path.lexists(leftover)
    assert tree(built) == before


def finish(process: BaseProcess, stderr: Path) -> str:
    process.join(timeout=300)
    if process.exitcode is None:
        process.kill()
    assert process.exitcode == 0, stderr.read_text(encoding="utf-8")
    return stderr.read_text(encoding="utf-8")


def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.05)


def test_two_cli_builds_of_one_tree_wait_for_each_other(spec_tree: Path, built: Path, tmp_path: Path) -> None:
    expected = tree(built)
    (built / "docs" / "komorebi-abi.md").write_text("stale\n")  # so both have something to write
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    # Real ttlgen processes (the CLI with its own locks, not a call into write.py), forked
    # before the lock below is taken (a child would share it) and started once it is.
    go_read, go_write = os.pipe()

    def wait_for_go() -> None:  # in a child; it starts at a byte, or when this test gives up
        os.close(go_write)
        os.read(go_read, 1)

    builds = [
        forked_ttlgen("build", "--specs", "specs", "--out", "generated", cwd=tmp_path, stderr=log, first=wait_for_go)
        for log in logs
    ]
    # Hold the tree's lock (README: an advisory lock on the directory that holds the tree)
    # until both builds are waiting for it, so they meet whatever the machine's speed.
    holder = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        os.write(go_write, b"go")

        def both_wait() -> bool:
            for build, log in zip(builds, logs, strict=True):
                assert build.is_alive(), f"a build did not wait for the lock: {log.read_text(encoding='utf-8')}"
            return all("waiting" in log.read_text(encoding="utf-8") for log in logs)

        wait_for(both_wait, "both builds wait")
    finally:
        os.close(holder)
        os.close(go_read)
        os.close(go_write)
    for build, log in zip(builds, logs, strict=True):
        assert finish(build, log) == "ttlgen: another ttlgen is using generated; waiting for it to finish\n"
    assert tree(built) == expected
    assert stage_leftovers(tmp_path) == []


def test_a_build_locks_a_tree_whose_directory_does_not_exist_yet(tmp_path: Path) -> None:
    out = tmp_path / "new" / "dir" / "generated"

    def lock_from_another_process() -> None:
        descriptor = os.open(out.parent, os.O_RDONLY)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return
        raise AssertionError("the lock is free")

    with tree_lock(out):
        assert in_child(lock_from_another_process) == 0


def limit_file_size() -> None:
    """In the child: files may not grow beyond 4 KiB, and passing the limit fails the write
    with EFBIG instead of killing the process (what a full disk does, as far as a writer sees)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_a_write_the_system_refuses_exits_2_with_one_line_and_keeps_the_old_tree(
    spec_tree: Path, built: Path, tmp_path: Path
) -> None:
    doc = built / "docs" / "komorebi-abi.md"
    assert len(small_render()["docs/komorebi-abi.md"]) > 4096, "the rewrite must pass the limit"
    doc.write_text("stale\n")
    before, modes_before = tree(built), modes(built)
    # An empty cache on the same "full" disk: every cache write is refused too. The
    # messages are one line, which the limit does not stop.
    log = tmp_path / "build.log"
    build = forked_ttlgen(
        "build", "--specs", "specs", "--out", "generated",
        cwd=tmp_path, stderr=log, env={"TTLGEN_CACHE_DIR": str(tmp_path / "cache")}, first=limit_file_size,
    )
    build.join(timeout=300)
    stderr = log.read_text(encoding="utf-8")
    log.unlink()
    assert build.exitcode == 2, stderr
    (line,) = stderr.splitlines()
    assert line.startswith("ttlgen: cannot write ") and line.endswith(f"{os.strerror(errno.EFBIG)}; the previous tree is unchanged")
    assert tree(built) == before
    assert modes(built) == modes_before
    assert stage_leftovers(tmp_path) == []


def test_rebuilt_files_get_the_same_mode_whichever_changed(spec_tree: Path, built: Path) -> None:
    (built / "docs" / "komorebi-abi.md").write_text("stale\n")  # one rewritten file, the rest kept
    previous = os.umask(0o077)
    try:
        assert run_cli("build", "--specs", spec_tree, "--out", built).exit_code == 0
    finally:
        os.umask(previous)
    modes = {stat.S_IMODE((built / p).stat().st_mode) for p in existing_entries(built)}
    directories = {stat.S_IMODE(d.stat().st_mode) for d in [built, *built.rglob("*")] if d.is_dir()}
    assert modes == {0o600}
    assert directories == {0o700}


def test_sources_are_named_by_the_spec_directory(spec_tree: Path, built: Path) -> None:
    assert run_cli("check", "--specs", spec_tree, "--out", built).exit_code == 0
    other = spec_tree.parent / "other"
    shutil.copytree(spec_tree, other)
    # Headers name their sources by the spec directory, so the tree differs.
    result = run_cli("check", "--specs", other, "--out", built)
    assert result.exit_code == 1


def test_specs_dot_inside_the_spec_directory_names_sources_by_the_directory(
    spec_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(spec_tree)
    out = tmp_path / "out"
    assert run_cli("build", "--specs", ".", "--out", out).exit_code == 0
    header = (out / "include" / "komorebi" / "abi" / "km_abi.h").read_text(encoding="utf-8")
    assert "//   specs/abi/komorebi.yaml\n" in header



@pytest.mark.parametrize("name", ["gen[1]", "gen?", "a**b", "my-old-tree"])
def test_a_swap_interrupted_between_its_renames_is_put_back_whatever_the_tree_is_called(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    write.write_tree(out, small_render())
    left = tmp_path / f".{name}.ttlgen-old-12345"
    os.rename(out, left)
    assert write.interrupted_swap(out) == left
    write.recover(out)
    assert tree(out) == small_render()
    assert sorted(os.listdir(tmp_path)) == [name]


def test_recovery_leaves_the_leftovers_of_a_tree_whose_name_only_matches_as_a_pattern(tmp_path: Path) -> None:
    other = tmp_path / ".genx.ttlgen-old-777"  # what a build of genx killed mid-swap leaves
    write.write_tree(other, small_render())
    out = tmp_path / "gen[x]"
    assert write.interrupted_swap(out) is None
    write.recover(out)
    assert not out.exists()
    assert tree(other) == small_render()


def test_a_killed_builds_stage_is_removed_not_taken_for_the_tree_when_the_name_holds_old(tmp_path: Path) -> None:
    out = tmp_path / "my-old-tree"
    stage = tmp_path / ".my-old-tree.ttlgen-stage-12345"
    (stage / "include").mkdir(parents=True)  # a stage killed after its directories were made
    write.recover(out)
    assert not os.path.lexists(stage)
    assert not os.path.lexists(out)


def test_a_recovery_the_disk_refuses_exits_2_with_one_line(
    spec_tree: Path, built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    left = built.parent / f".{built.name}.ttlgen-old-12345"
    os.rename(built, left)

    def refuse(old: Path, new: Path) -> None:
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM), str(old), None, str(new))

    monkeypatch.setattr(write.FS, "rename", refuse)
    for command in ("check", "diff", "build"):
        result = run_cli(command, "--specs", spec_tree, "--out", built)
        assert result.exit_code == 2, command
        (line,) = result.stderr.splitlines()
        assert str(left) in line and os.strerror(errno.EPERM) in line, line
    assert left.is_dir()


def test_a_refused_exchange_names_the_tree_not_its_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if fs_steps._EXCHANGE is None:
        pytest.skip("this system has no renameat2 exchange")
    out = tmp_path / "generated"
    write.write_tree(out, small_render())

    def refuse(a: bytes, b: bytes) -> int:
        ctypes.set_errno(errno.EPERM)
        return -1

    monkeypatch.setattr(fs_steps, "_EXCHANGE", refuse)
    with pytest.raises(write.OutputError) as refused:
        write.write_tree(out, {**small_render(), "added.txt": b"new\n"})
    assert refused.value.path == out
    assert tree(out) == small_render()


@pytest.mark.parametrize("where", [".git", "python/.git"])
def test_a_build_refuses_to_delete_a_git_repository_inside_the_tree(tmp_path: Path, where: str) -> None:
    out = tmp_path / "generated"
    write.write_tree(out, small_render())
    (out / where).mkdir()
    (out / where / "HEAD").write_text("ref: refs/heads/main\n")
    with pytest.raises(UsageError, match=rf"holds {re.escape(str(out / where))}, a Git repository"):
        write.write_tree(out, small_render())
    assert (out / where / "HEAD").is_file()


def test_a_build_removes_an_old_tree_nested_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    write.write_tree(out, small_render())
    # Made a level at a time (os.makedirs recurses), and removed so too if the build did
    # not: pytest's own removal of a failed test's directory recurses.
    levels = [out / "d"]
    for _ in range(sys.getrecursionlimit() + 100):
        levels.append(levels[-1] / "d")
    for level in levels:
        level.mkdir()
    try:
        write.write_tree(out, small_render())
        assert tree(out) == small_render()
        assert not (out / "d").exists()
        assert sorted(os.listdir(tmp_path)) == ["generated"]
    finally:
        for directory in [*sorted(tmp_path.glob(".generated.ttlgen-*")), out]:
            nested = [directory / "d"]
            while nested[-1].is_dir():
                nested.append(nested[-1] / "d")
            for level in reversed(nested[:-1]):
                level.rmdir()
