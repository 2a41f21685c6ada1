"""pytest plugin: `--snapshot-update` writes snapshots but deletes none unless asked on a full run.

syrupy deletes, on `--snapshot-update`, every snapshot no test used in the run. A test that
was selected but did not get to its assertion (it failed first, or `-x`/`--maxfail` stopped
the run, or an xdist worker was interrupted) uses none, so its snapshots would be deleted.
This plugin makes deletion explicit:

- `--snapshot-update` alone writes new and changed snapshots and deletes nothing (it sets
  syrupy's `--snapshot-no-cleanup`);
- `--snapshot-update --snapshot-prune` also deletes unused snapshots, and is refused unless
  the run is the whole suite: no paths or node ids, no `-k`, `-m`, `--deselect`, `--ignore`,
  `-x`/`--maxfail`, `--lf`, `--sw`. If a test then fails, a test is deselected or the run is
  interrupted, nothing is deleted and the summary says why.

Without `--snapshot-update` syrupy deletes nothing and reports unused snapshots as a failure.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

_SKIPPED_PRUNE = pytest.StashKey[str]()
_DESELECTED = pytest.StashKey[int]()

PRUNE_COMMAND = "pytest -p no:cacheprovider --snapshot-update --snapshot-prune"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("syrupy").addoption(
        "--snapshot-prune",
        action="store_true",
        default=False,
        dest="snapshot_prune",
        help="With --snapshot-update on a full run: also delete snapshots no test used.",
    )


def partial_run_reasons(config: pytest.Config) -> list[str]:
    """What makes this invocation run less than the whole suite (empty: a full run)."""
    option = config.option
    reasons = []
    if config.args_source is not pytest.Config.ArgsSource.TESTPATHS and (
        config.args_source is pytest.Config.ArgsSource.ARGS or config.invocation_params.dir != config.rootpath
    ):
        reasons.append(f"paths given ({' '.join(config.args)})")
    for flag, value in (
        ("-k", option.keyword),
        ("-m", option.markexpr),
        ("--deselect", option.deselect),
        ("--ignore", option.ignore),
        ("--ignore-glob", option.ignore_glob),
        ("-x/--maxfail", option.maxfail),
        ("--lf", getattr(option, "lf", False)),
        ("--sw", getattr(option, "stepwise", False)),
    ):
        if value:
            reasons.append(flag)
    return reasons


def pytest_configure(config: pytest.Config) -> None:
    updating = bool(config.getoption("update_snapshots", default=False))
    pruning = bool(config.getoption("snapshot_prune"))
    if pruning and not updating:
        raise pytest.UsageError("--snapshot-prune deletes unused snapshots while updating: add --snapshot-update")
    if pruning:
        reasons = partial_run_reasons(config)
        if reasons:
            raise pytest.UsageError(
                "--snapshot-prune deletes every snapshot the run does not use, so it needs the whole "
                f"suite; this run is partial: {', '.join(reasons)}. Run: {PRUNE_COMMAND}"
            )
    elif updating:
        config.option.no_cleanup = True


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        config = items[0].config
        config.stash[_DESELECTED] = config.stash.get(_DESELECTED, 0) + len(items)


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> Generator[None, None, None]:
    # Runs before syrupy's own sessionfinish, which reads no_cleanup when it deletes.
    config = session.config
    if config.getoption("snapshot_prune"):
        reason = None
        if session.testsfailed or exitstatus != pytest.ExitCode.OK:
            reason = "tests failed or the run was interrupted, so some snapshots were not reached"
        elif config.stash.get(_DESELECTED, 0):
            reason = "tests were deselected"
        if reason is not None:
            config.option.no_cleanup = True
            config.stash[_SKIPPED_PRUNE] = reason
    return (yield)


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if not config.getoption("update_snapshots", default=False):
        # syrupy's own hint ("re-run with --snapshot-update") no longer deletes anything.
        report = getattr(getattr(config, "_syrupy", None), "report", None)
        if report is not None and getattr(report, "num_unused", 0):
            terminalreporter.write_line(f"to delete unused snapshots run the whole suite: {PRUNE_COMMAND}")
        return
    skipped = config.stash.get(_SKIPPED_PRUNE, None)
    if skipped is not None:
        terminalreporter.write_line(f"snapshot prune skipped, nothing deleted: {skipped}")
    elif not config.getoption("snapshot_prune"):
        terminalreporter.write_line(
            f"unused snapshots are kept; to delete them run the whole suite: {PRUNE_COMMAND}"
        )
