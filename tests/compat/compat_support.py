"""A git repository holding the real specs, for comparing an edit with the commit before it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.conftest import SPECS, CliResult, run_cli
from ttlgen.errors import KeyPath
from ttlgen.spec import load

GIT_ENV = {
    "GIT_AUTHOR_NAME": "ttlgen tests",
    "GIT_AUTHOR_EMAIL": "tests@ttlgen.invalid",
    "GIT_COMMITTER_NAME": "ttlgen tests",
    "GIT_COMMITTER_EMAIL": "tests@ttlgen.invalid",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}

Edit = tuple[str, str, str | None]  # (file under specs/, text, replacement); ("", None): delete the file


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo)}
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env)
    return done.stdout


def make_repo(root: Path) -> Path:
    """root/repo: a repository whose one commit holds the real specs under specs/."""
    repo = root / "repo"
    shutil.copytree(SPECS, repo / "specs")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the real specs")
    return repo


def apply(repo: Path, edits: list[Edit]) -> None:
    for file, old, new in edits:
        path = repo / "specs" / file
        if new is None:
            assert old == "", f"{file}: a deletion replaces no text"
            path.unlink()
            continue
        if old == "":  # a new file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(new, encoding="utf-8")
            continue
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{file}: {old!r} is not there exactly once"
        path.write_text(text.replace(old, new), encoding="utf-8")


def run_in(repo: Path, *args: str | Path) -> CliResult:
    """A command run from the repository's root, as a developer runs it (messages name
    spec files from there)."""
    with contextlib.chdir(repo):
        return run_cli(*args)


def compat_json(repo: Path, ref: str = "main") -> tuple[int, dict[str, object]]:
    result = run_in(repo, "compat", "--against", ref, "--specs", "specs", "--json")
    return result.exit_code, json.loads(result.stdout)


def key_path(text: str) -> KeyPath:
    """``enums.gave.values[2]`` (or ``headers['api/x.h']``) as a key path."""
    found = re.findall(r"([A-Za-z_][\w\-]*)|\[(\d+)\]|\['([^']*)'\]", text)
    return tuple(int(index) if index else quoted or name for name, index, quoted in found)


def located(location: object) -> str | None:
    """A location of a compat report as ``file key.path`` (the file under specs/)."""
    if location is None:
        return None
    assert isinstance(location, dict)
    file = str(location["file"]).removeprefix("specs/")
    return f"{file} {location['path']}" if location["path"] else file


def assert_positions(repo: Path, report: dict[str, object], ref: str = "main", at_ref: Path | None = None) -> None:
    """Every location of ``report`` is where its key path's key is in that side's file: the
    committed one at ``ref`` before (``at_ref``: a directory holding the tree as it is at
    ``ref``, read instead of asking git), the working tree's after."""
    changes = report["changes"]
    assert isinstance(changes, list)
    scratch = repo.parent / "at-ref"
    for change in changes:
        for side in ("before", "after"):
            at = change[side]
            if at is None or not at["line"]:
                continue
            if side == "before" and at_ref is not None:
                path = at_ref / at["file"]
            elif side == "before":
                text = git(repo, "show", f"{ref}:{at['file']}")
                path = scratch / at["file"]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            else:
                path = repo / at["file"]
            document = load.load_file(path, at["file"])
            wanted = key_path(at["path"] or "")
            assert wanted in document.positions.values, f"{change['subject']}: {side} {at['path']} is no node of {at['file']}"
            # A mapping's entry is on its key's line (the key that was edited, not the first
            # line of its value), at the key or at a value beside it; a list item at its value.
            key, value = document.positions.key(wanted), document.positions.value(wanted)
            shown = (at["line"], at["column"])
            assert shown == key or (shown == value and value[0] == key[0]), f"{change['subject']}: {side} {at}"
