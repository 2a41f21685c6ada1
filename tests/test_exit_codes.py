"""One exit-code convention for every command (README "Exit codes"): 0 success, 1 the
command's answer is "no", 2 nothing was decided (bad input, usage or environment), 3 a bug."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SPECS, run_cli
from tests.tree_support import small_specs, write_built
from ttlgen import cli
from ttlgen.errors import ExitCode

KERNELS = REPO / "tests" / "fixtures" / "kernels"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """tmp_path/specs, the real specs without their kernels, and tmp_path/generated, the tree
    they build (tests/tree_support.py; tests run in tmp_path): what the tree holds is not the point."""
    write_built(tmp_path / "generated")
    small_specs(tmp_path / "specs")
    return tmp_path


@pytest.fixture
def whole_specs(tmp_path: Path) -> Path:
    """tmp_path/specs: a copy of the real specs, kernels included."""
    shutil.copytree(SPECS, tmp_path / "specs")
    return tmp_path


def break_a_spec(tree: Path) -> None:
    path = tree / "specs" / "ops" / "elementwise.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("strategy: sfpu", "strategy: sfp", 1), encoding="utf-8")


def make_stale(tree: Path) -> None:
    path = tree / "generated" / "docs" / "komorebi-abi.md"
    path.write_text(path.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")


@pytest.mark.parametrize("command", [["build"], ["check"], ["diff"], ["validate"]])
def test_a_tree_command_on_good_specs_exits_0(tree: Path, command: list[str]) -> None:
    assert run_cli(*command).exit_code == ExitCode.OK


@pytest.mark.parametrize("command", [["check"], ["diff"]])
def test_a_stale_tree_is_the_answer_no(tree: Path, command: list[str]) -> None:
    make_stale(tree)
    assert run_cli(*command).exit_code == ExitCode.FAILED


@pytest.mark.parametrize("command", [["build"], ["check"], ["diff"], ["validate"]])
def test_a_spec_error_decides_nothing(tree: Path, command: list[str]) -> None:
    break_a_spec(tree)
    make_stale(tree)  # check and diff must not answer "stale" when they cannot know
    assert run_cli(*command).exit_code == ExitCode.BAD_INPUT


@pytest.mark.parametrize("command", [["build"], ["check"], ["diff"], ["validate"], ["run", "eltwise_add_bf16"]])
def test_a_missing_spec_directory_decides_nothing(command: list[str]) -> None:
    assert run_cli(*command, "--specs", "no-such-dir").exit_code == ExitCode.BAD_INPUT


@pytest.mark.parametrize(
    "command",
    [
        ["build", "--frobnicate"],
        ["run"],
        ["run", "eltwise_add_bf16", "--seed", "-1"],
        ["accuracy", "--k", "1,,2"],
        ["resolve"],
    ],
)
def test_a_usage_error_decides_nothing(command: list[str]) -> None:
    assert run_cli(*command).exit_code == ExitCode.BAD_INPUT


def test_an_unknown_kernel_decides_nothing_and_suggests_the_closest(whole_specs: Path) -> None:
    result = run_cli("run", "eltwise_ad_bf16")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "did you mean 'eltwise_add_bf16'?" in result.stderr


def test_resolve_answers_yes_no_or_cannot_tell(tree: Path) -> None:
    assert run_cli("resolve", KERNELS / "bf16_add.yaml").exit_code == ExitCode.OK
    assert run_cli("resolve", KERNELS / "bcast_conflict.yaml").exit_code == ExitCode.FAILED
    assert run_cli("resolve", "no-such-kernel.yaml").exit_code == ExitCode.BAD_INPUT


def test_a_bug_exits_3_with_its_traceback_not_1(
    tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("an emitter bug")

    monkeypatch.setattr("ttlgen.pipeline.render", broken)
    monkeypatch.setattr(sys, "argv", ["ttlgen", "build", "--no-cache"])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == ExitCode.INTERNAL
    stderr = capsys.readouterr().err
    assert "Traceback" in stderr and "RuntimeError: an emitter bug" in stderr
    assert "internal error: this is a bug in ttlgen" in stderr


@pytest.mark.parametrize("buffered", [False, True], ids=["written-at-once", "flushed-at-exit"])
def test_output_whose_reader_went_away_exits_141_and_says_nothing(buffered: bool) -> None:
    # As a shell reports a tool SIGPIPE ended (`ttlgen explain ... | head -1`); never 1,
    # which would read as the command's "no". Buffered, the output first fails at exit.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ttlgen", "validate", "--specs", str(SPECS)],
            stdout=write, stderr=subprocess.PIPE, env=env, check=False,
        )  # fmt: skip
    finally:
        os.close(write)
    assert (done.returncode, done.stderr.decode()) == (ExitCode.READER_GONE, "")


@pytest.mark.parametrize("stream", ["1", "2"], ids=["stdout", "stderr"])
def test_a_closed_standard_stream_decides_nothing(stream: str) -> None:
    done = subprocess.run(
        ["bash", "-c", f'exec "$0" -m ttlgen validate --specs "$1" {stream}>&-', sys.executable, str(SPECS)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == ExitCode.BAD_INPUT
    assert done.stdout == ""
    assert done.stderr == ("ttlgen: standard output is closed; send it somewhere, e.g. >/dev/null\n" if stream == "1" else "")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full, a device every write to fails")
@pytest.mark.parametrize("buffered", [False, True], ids=["written-at-once", "flushed-at-exit"])
def test_output_a_full_disk_refuses_decides_nothing_and_says_why_in_one_line(buffered: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "ttlgen", "validate", "--specs", str(SPECS)],
            stdout=full, stderr=subprocess.PIPE, env=env, check=False,
        )  # fmt: skip
    assert (done.returncode, done.stderr.decode()) == (
        ExitCode.BAD_INPUT, f"ttlgen: cannot write standard output: {os.strerror(errno.ENOSPC)}\n"
    )  # fmt: skip


@pytest.mark.parametrize("buffered", [False, True], ids=["unbuffered", "buffered"])
def test_a_long_output_whose_reader_leaves_mid_write_exits_141(tmp_path: Path, buffered: bool) -> None:
    # The reader leaves while one long write is under way: the write ends part done, and
    # the rest must still fail as a closed pipe. Unbuffered (PYTHONUNBUFFERED), Python's
    # text layer dropped that rest and the command ended as if it had written it all.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    (tmp_path / "empty").mkdir()
    reading = subprocess.Popen(
        [sys.executable, "-m", "ttlgen", "diff", "--specs", str(SPECS), "--out", str(tmp_path / "empty")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert reading.stdout is not None and reading.stderr is not None
    assert reading.stdout.readline()  # `| head -1`
    reading.stdout.close()
    assert (reading.wait(), reading.stderr.read().decode()) == (ExitCode.READER_GONE, "")


def _stderr_closed(*args: str) -> int:
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "ttlgen", *args], stdout=subprocess.DEVNULL, stderr=write, check=False).returncode
    finally:
        os.close(write)


@pytest.mark.parametrize("command", [["check", "--dif"], ["check", "--specs", "no-such-dir"]], ids=["click", "ttlgen"])
def test_a_usage_message_whose_reader_went_away_exits_141(command: list[str]) -> None:
    # `ttlgen check --dif 2>&1 | true`: never 1, which would read as the answer "no".
    assert _stderr_closed(*command) == ExitCode.READER_GONE


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full, a device every write to fails")
@pytest.mark.parametrize("command", [["build", "--bogus"], ["check", "--specs", "no-such-dir"]], ids=["click", "ttlgen"])
def test_standard_error_refusing_the_message_decides_nothing(command: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run([sys.executable, "-m", "ttlgen", *command], stdout=subprocess.PIPE, stderr=full, check=False)
    assert (done.returncode, done.stdout) == (ExitCode.BAD_INPUT, b"")


@pytest.mark.parametrize(
    "encoding", [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "POSIX", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}], ids=["ascii", "posix-locale"]
)
def test_output_the_stream_cannot_encode_is_written_escaped(tree: Path, encoding: dict[str, str]) -> None:
    edited = tree / "generated" / "docs" / "komorebi-abi.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "caf\u00e9 \u2014 edited\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LC_ALL", "LANG")} | encoding
    done = subprocess.run([sys.executable, "-m", "ttlgen", "diff"], cwd=tree, capture_output=True, env=env, check=False)
    assert (done.returncode, done.stderr) == (ExitCode.FAILED, b"")
    assert b"\n-caf\\xe9 \\u2014 edited\n" in done.stdout
