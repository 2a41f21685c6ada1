"""Generated output depends only on the specs and templates: not on hash seeds, locale or cwd."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import GENERATED, REPO, SPECS
from ttlgen.emit._notice import NOTICE
from ttlgen.tree import existing_entries


def build_in_subprocess(out: Path, cwd: Path, seed: str, locale: str) -> dict[str, bytes]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "LC_ALL": locale, "LANG": locale}
    subprocess.run(
        [sys.executable, "-m", "ttlgen", "build", "--specs", str(SPECS), "--out", str(out)],
        cwd=cwd, env=env, check=True, capture_output=True,
    )
    return {path: (out / path).read_bytes() for path in existing_entries(out)}


def test_builds_with_different_hash_seeds_locales_and_directories_are_identical(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first = build_in_subprocess(tmp_path / "a", REPO, "0", "C")
    second = build_in_subprocess(tmp_path / "b" / "nested", elsewhere, "4242", "C.UTF-8")
    assert first == second


def generated_files() -> list[Path]:
    return [GENERATED / path for path in existing_entries(GENERATED)]


def test_generated_files_use_lf_and_end_with_exactly_one_newline() -> None:
    for path in generated_files():
        data = path.read_bytes()
        assert b"\r" not in data, path
        assert data.endswith(b"\n") and not data.endswith(b"\n\n"), path


def test_generated_files_hold_no_machine_specific_text() -> None:
    # Whole paths and path components only: a home directory /root must not flag
    # "#/$defs/roots", nor a user "root" the word "header_roots" or "the root of the tree".
    paths = [str(REPO), str(Path.home())]
    forbidden = [re.compile(re.escape(p) + r"(?![\w.-])") for p in paths] + [re.compile(re.escape("ttlgen 0."))]
    user = os.environ.get("USER")
    if user:
        forbidden.append(re.compile(rf"[/\\]{re.escape(user)}(?![\w.-])"))
    for path in generated_files():
        if path.name == "MANIFEST":
            continue  # the one place provenance that changes with versions belongs
        text = path.read_text(encoding="utf-8")
        for pattern in forbidden:
            found = pattern.search(text)
            assert found is None, f"{path} contains {found.group()!r} at offset {found.start()}"


def test_every_generated_file_says_it_is_generated_and_from_what() -> None:
    for path in generated_files():
        head = path.read_text(encoding="utf-8")[:600]
        assert NOTICE in head, path
