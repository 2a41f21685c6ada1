"""Comparing a generated tree with what is on disk, and replacing it atomically.

``build`` stages the complete new tree beside the output directory, then swaps it in
with two renames, so a failure at any point before the swap leaves the old tree as it
was. Unchanged files are hard-linked into the stage, which keeps their mtime (and so
keeps make/ninja from rebuilding what did not change).
"""

from __future__ import annotations

import difflib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


@dataclass(frozen=True)
class TreeDiff:
    stale: tuple[str, ...]     # on disk with different content
    missing: tuple[str, ...]   # produced but not on disk
    orphaned: tuple[str, ...]  # on disk but produced by nothing
    unchanged: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return not (self.stale or self.missing or self.orphaned)

    def to_json(self) -> dict[str, list[str]]:
        return {"stale": list(self.stale), "missing": list(self.missing), "orphaned": list(self.orphaned)}


# Bytecode caches appear wherever generated Python is imported from; they are never
# outputs, so they are neither orphans nor carried into a rebuilt tree.
IGNORED_DIRS = frozenset({"__pycache__"})


def existing_files(out_dir: Path) -> Iterator[str]:
    if not out_dir.is_dir():
        return
    for root, dirs, files in os.walk(out_dir):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in sorted(files):
            yield (Path(root) / name).relative_to(out_dir).as_posix()


def compare(out_dir: Path, files: dict[str, bytes]) -> TreeDiff:
    existing = set(existing_files(out_dir))
    stale, missing, unchanged = [], [], []
    for path, content in files.items():
        if path not in existing:
            missing.append(path)
        elif (out_dir / path).read_bytes() != content:
            stale.append(path)
        else:
            unchanged.append(path)
    orphaned = sorted(existing - files.keys())
    return TreeDiff(tuple(sorted(stale)), tuple(sorted(missing)), tuple(orphaned), tuple(sorted(unchanged)))


def compare_hashes(expected: dict[str, str], on_disk: dict[str, str]) -> TreeDiff:
    """The same comparison as `compare`, from content hashes alone."""
    stale = sorted(p for p in expected if p in on_disk and on_disk[p] != expected[p])
    missing = sorted(p for p in expected if p not in on_disk)
    unchanged = sorted(p for p in expected if on_disk.get(p) == expected[p])
    orphaned = sorted(on_disk.keys() - expected.keys())
    return TreeDiff(tuple(stale), tuple(missing), tuple(orphaned), tuple(unchanged))


def _text(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def unified_diff(out_dir: Path, files: dict[str, bytes], diff: TreeDiff) -> str:
    """The change ``build`` would make, as a git-style unified diff."""
    name = out_dir.name
    chunks: list[str] = []
    for path in sorted((*diff.stale, *diff.missing, *diff.orphaned)):
        old = (out_dir / path).read_bytes() if path not in diff.missing else b""
        new = files.get(path, b"")
        before = f"a/{name}/{path}" if path not in diff.missing else "/dev/null"
        after = f"b/{name}/{path}" if path in files else "/dev/null"
        lines = difflib.unified_diff(_text(old), _text(new), before, after)
        for line in lines:
            chunks.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(chunks)


def _stage_name(out_dir: Path, role: str) -> Path:
    return out_dir.parent / f".{out_dir.name}.ttlgen-{role}-{os.getpid()}"


def recover(out_dir: Path) -> None:
    """Undo what an interrupted build left behind (stale stages, a half-done swap)."""
    parent = out_dir.parent
    if not parent.is_dir():
        return
    for leftover in sorted(parent.glob(f".{out_dir.name}.ttlgen-*")):
        if "-old-" in leftover.name and not out_dir.exists():
            leftover.rename(out_dir)  # the swap stopped between its two renames
        else:
            shutil.rmtree(leftover, ignore_errors=True)


def _write_file(path: Path, content: bytes) -> None:
    path.write_bytes(content)


def _keep_file(old: Path, new: Path) -> None:
    try:
        os.link(old, new)
    except OSError:
        shutil.copy2(old, new)


def is_generated_tree(out_dir: Path, manifest: str, notice: str) -> bool:
    """True when ``out_dir`` is absent, empty, or was written by ttlgen (its MANIFEST says so)."""
    if not out_dir.exists():
        return True
    if not out_dir.is_dir():
        return False
    if not any(out_dir.iterdir()):
        return True
    try:
        with open(out_dir / manifest, encoding="utf-8") as handle:
            return notice in handle.readline()
    except (OSError, UnicodeDecodeError):
        return False


def write_tree(out_dir: Path, files: dict[str, bytes]) -> TreeDiff:
    """Make ``out_dir`` hold exactly ``files``. Writes nothing when already identical."""
    recover(out_dir)
    diff = compare(out_dir, files)
    if diff.clean:
        return diff
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    stage = _stage_name(out_dir, "stage")
    old = _stage_name(out_dir, "old")
    try:
        stage.mkdir()
        for directory in sorted({PurePosixPath(path).parent for path in files}):
            (stage / directory).mkdir(parents=True, exist_ok=True)
        unchanged = set(diff.unchanged)
        for path, content in files.items():
            if path in unchanged:
                _keep_file(out_dir / path, stage / path)
            else:
                _write_file(stage / path, content)
        if out_dir.exists():
            os.rename(out_dir, old)
        try:
            os.rename(stage, out_dir)
        except BaseException:
            if old.exists() and not out_dir.exists():
                os.rename(old, out_dir)
            raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)
    return diff
