"""A partial `--snapshot-update` run never deletes snapshots; `--snapshot-prune` does, on a full run.

Each test runs pytest in a subprocess on a three-test sample module with the suite's snapshot
guard (tests/snapshot_guard.py) and checks which snapshot files are left. Without the guard,
syrupy 7.0.1 deletes the snapshots of tests a `-x` run never reached and of a test that
failed before its assertion.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SAMPLE = '''\
import os

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class Text(SingleFileSnapshotExtension):
    file_extension = "txt"
    _write_mode = WriteMode.TEXT


def test_alpha(snapshot):
    assert "alpha\\n" == snapshot(extension_class=Text)


def test_beta(snapshot):
    if os.environ.get("SAMPLE_FAIL_BETA"):
        raise RuntimeError("beta fails before its snapshot assertion")
    assert "beta\\n" == snapshot(extension_class=Text)


def test_gamma(snapshot):
    assert "gamma\\n" == snapshot(extension_class=Text)
'''

NAMES = ("test_alpha.txt", "test_beta.txt", "test_gamma.txt")


def run_pytest(root: Path, *args: str, fail_beta: bool = False) -> subprocess.CompletedProcess[str]:
    # The outer run's pytest/xdist variables would make the inner run act as an xdist worker.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    # Only the plugins the sample uses: syrupy, and the guard its conftest loads. Importing
    # every installed one (hypothesis alone takes a second) would cost most of each run.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # Its temporary directories stay in the sample's own root: in the default one, pytest
    # would also delete the oldest of the user's own runs on exit.
    (root.parent / "pytest-temp").mkdir(exist_ok=True)
    env["PYTEST_DEBUG_TEMPROOT"] = str(root.parent / "pytest-temp")
    if fail_beta:
        env["SAMPLE_FAIL_BETA"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "syrupy", *args],
        cwd=root, env=env, capture_output=True, text=True, check=False,
    )


def snapshots(root: Path) -> set[str]:
    return {p.name for p in (root / "__snapshots__" / "test_sample").iterdir()}


@pytest.fixture(scope="module")
def sample_with_snapshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sample")
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "conftest.py").write_text('pytest_plugins = ("tests.snapshot_guard",)\n')
    (root / "test_sample.py").write_text(SAMPLE)
    result = run_pytest(root, "--snapshot-update")
    assert result.returncode == 0, result.stdout + result.stderr
    assert snapshots(root) == set(NAMES)
    return root


@pytest.fixture
def sample(sample_with_snapshots: Path, tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(sample_with_snapshots, root)
    return root


def test_update_with_k_keeps_the_deselected_tests_snapshots(sample: Path) -> None:
    result = run_pytest(sample, "--snapshot-update", "-k", "alpha")
    assert result.returncode == 0, result.stdout
    assert snapshots(sample) == set(NAMES)


def test_update_with_exitfirst_keeps_the_snapshots_of_tests_never_reached(sample: Path) -> None:
    result = run_pytest(sample, "--snapshot-update", "-x", fail_beta=True)
    assert result.returncode == 1 and "stopping after 1 failures" in result.stdout
    assert snapshots(sample) == set(NAMES)


def test_update_keeps_the_snapshot_of_a_test_failing_before_its_assertion(sample: Path) -> None:
    result = run_pytest(sample, "--snapshot-update", fail_beta=True)
    assert result.returncode == 1
    assert snapshots(sample) == set(NAMES)


def test_update_keeps_an_orphaned_snapshot_and_says_how_to_prune(sample: Path) -> None:
    module = sample / "test_sample.py"
    module.write_text(module.read_text().split("def test_gamma")[0])
    result = run_pytest(sample, "--snapshot-update")
    assert snapshots(sample) == set(NAMES)
    assert "--snapshot-update --snapshot-prune" in result.stdout


def test_prune_on_a_full_run_deletes_an_orphaned_snapshot(sample: Path) -> None:
    module = sample / "test_sample.py"
    module.write_text(module.read_text().split("def test_gamma")[0])
    result = run_pytest(sample, "--snapshot-update", "--snapshot-prune")
    assert result.returncode == 0, result.stdout
    assert snapshots(sample) == {"test_alpha.txt", "test_beta.txt"}


def test_prune_on_a_partial_run_is_a_usage_error(sample: Path) -> None:
    result = run_pytest(sample, "--snapshot-update", "--snapshot-prune", "-k", "alpha")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "this run is partial: -k" in result.stderr
    assert snapshots(sample) == set(NAMES)


def test_prune_deletes_nothing_when_a_test_fails(sample: Path) -> None:
    result = run_pytest(sample, "--snapshot-update", "--snapshot-prune", fail_beta=True)
    assert result.returncode == 1
    assert "snapshot prune skipped, nothing deleted" in result.stdout
    assert snapshots(sample) == set(NAMES)


def test_an_orphaned_snapshot_fails_a_normal_run_and_names_the_prune_command(sample: Path) -> None:
    module = sample / "test_sample.py"
    module.write_text(module.read_text().split("def test_gamma")[0])
    result = run_pytest(sample)
    assert result.returncode == 1
    assert "--snapshot-update --snapshot-prune" in result.stdout
    assert snapshots(sample) == set(NAMES)
