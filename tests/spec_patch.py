"""Text edits on a copy of the real spec tree: how a test breaks or extends the specs.

A test that needs specs unlike the real ones states only the difference, as a user would
make it in an editor: replace this text with that one, append this text, add this file,
delete that one. The rest of the tree is whatever specs/ holds today, so a test keeps
working when someone adds an op, an architecture or a kernel.

An edit finds its place by text (an anchor), never by line number. The anchor must occur
exactly once in the file: when the real spec no longer holds it, or holds it twice, the
edit fails with the name of the case and the text, rather than changing the wrong place.
Bad-spec cases (tests/fixtures/bad_specs/) keep their edits in a patch.yaml read by
``load_patch``; other tests build ``Edit`` values in Python.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
SPECS = REPO / "specs"


class StaleAnchor(AssertionError):
    """An edit's anchor text is missing from its file, or occurs more than once."""


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` by ``new`` in ``file`` (relative to specs/); ``old`` None appends ``new``."""

    file: str
    old: str | None
    new: str


@dataclass(frozen=True)
class Patch:
    """What a case changes in the real specs: deletions first, then edits, then new files."""

    name: str
    edits: tuple[Edit, ...] = ()
    delete: tuple[str, ...] = ()
    # New files: path relative to specs/ -> the file on disk whose bytes it gets.
    files: tuple[tuple[str, Path], ...] = ()


def replace(file: str, old: str, new: str) -> Edit:
    return Edit(file, old, new)


def append(file: str, text: str) -> Edit:
    return Edit(file, None, text)


def apply_edits(specs: Path, edits: Iterable[Edit], *, case: str) -> None:
    """Apply ``edits`` in order to the tree at ``specs``; a stale anchor raises StaleAnchor.

    Files are read and written as bytes decoded as UTF-8, so line ends (and any character a
    case is about) survive exactly as written."""
    for edit in edits:
        path = specs / edit.file
        if not path.is_file():
            raise StaleAnchor(f"{case}: {edit.file} is not a file under specs/")
        text = path.read_bytes().decode("utf-8")
        if edit.old is None:
            text += edit.new
        else:
            count = text.count(edit.old)
            if count != 1:
                where = "not found" if count == 0 else f"found {count} times, so it names no one place"
                raise StaleAnchor(
                    f"{case}: the text to replace in specs/{edit.file} is {where}: {edit.old!r}; "
                    "the real spec changed: choose an anchor it still holds once"
                )
            text = text.replace(edit.old, edit.new)
        path.write_bytes(text.encode("utf-8"))


def apply_patch(specs: Path, patch: Patch) -> None:
    for pattern in patch.delete:
        matches = sorted(specs.glob(pattern))
        if not matches:
            raise StaleAnchor(f"{patch.name}: delete {pattern!r} matches nothing under specs/")
        for path in matches:
            path.unlink()
    apply_edits(specs, patch.edits, case=patch.name)
    for relative, source in patch.files:
        target = specs / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


PATCH_FILE = "patch.yaml"
EXPECTED_MESSAGES = "expected.txt"
# The files of a case that describe it rather than being a spec file at its path under specs/.
CASE_METADATA = (PATCH_FILE, EXPECTED_MESSAGES)


def load_patch(case_dir: Path, name: str) -> Patch:
    """The patch of a bad-spec case directory (format: tests/fixtures/bad_specs/README.md)."""
    patch_file = case_dir / PATCH_FILE
    data: dict[str, object] = {}
    if patch_file.exists():
        loaded = yaml.safe_load(patch_file.read_text(encoding="utf-8"))
        assert isinstance(loaded, dict), f"{name}: {PATCH_FILE} is not a mapping"
        data = loaded
    unknown = set(data) - {"edits", "delete"}
    assert not unknown, f"{name}: {PATCH_FILE} has unknown keys {sorted(unknown)}; known: edits, delete"
    edits = tuple(_edit(entry, name) for entry in _sequence(data.get("edits", []), name, "edits"))
    delete = tuple(str(p) for p in _sequence(data.get("delete", []), name, "delete"))
    files = tuple(
        (p.relative_to(case_dir).as_posix(), p)
        for p in sorted(case_dir.rglob("*"))
        if p.is_file() and p.relative_to(case_dir).as_posix() not in CASE_METADATA
    )
    return Patch(name, edits, delete, files)


def _sequence(value: object, name: str, key: str) -> Sequence[object]:
    assert isinstance(value, list), f"{name}: {PATCH_FILE} {key} must be a list"
    return value


def _edit(entry: object, name: str) -> Edit:
    assert isinstance(entry, dict), f"{name}: each edit is a mapping with file and old/new or append"
    keys = set(entry)
    assert keys in ({"file", "old", "new"}, {"file", "append"}), (
        f"{name}: an edit has keys {sorted(keys)}; expected file, old, new or file, append"
    )
    # A YAML null or number is a typo of the patch, never text to look for.
    assert all(isinstance(entry[k], str) for k in keys), f"{name}: {entry}: every value of an edit is text"
    if "append" in keys:
        return Edit(entry["file"], None, entry["append"])
    assert entry["old"], f"{name}: an edit of {entry['file']} has an empty old text; use append"
    return Edit(entry["file"], entry["old"], entry["new"])
