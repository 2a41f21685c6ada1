"""Which files of a spec directory are specs, and the names a spec file goes by.

Kept apart from the loader so that a no-op `check`, which only hashes the spec files, does
not import the parsers."""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from ttlgen.errors import UsageError

SPEC_SUFFIXES = (".yaml", ".yml", ".toml")


def spec_files(specs_dir: Path) -> list[Path]:
    """All spec files, sorted by their path relative to ``specs_dir`` (hidden paths skipped)."""
    if not specs_dir.is_dir():
        raise UsageError(f"spec directory {str(specs_dir)!r} does not exist; pass --specs DIR")
    found = [path for path in specs_dir.rglob("*") if is_spec_path(path.relative_to(specs_dir)) and path.is_file()]
    return sorted(found, key=lambda p: p.relative_to(specs_dir).as_posix())


def is_spec_path(rel: PurePath) -> bool:
    """Whether a file at ``rel`` in a spec directory is read as a spec: by its suffix,
    outside hidden directories."""
    return rel.suffix in SPEC_SUFFIXES and not any(part.startswith(".") for part in rel.parts)


def looked_for() -> str:
    """The files a spec directory is searched for, as messages name them."""
    *others, last = (f"*{suffix}" for suffix in SPEC_SUFFIXES)
    return f"{', '.join(others)} or {last} files, outside hidden directories"


def source_name(specs_dir: Path, path: Path) -> str:
    """The name generated headers give a spec: ``specs/ops/x.yaml``, whatever the working
    directory or the absolute location of the tree (``--specs .`` too)."""
    return f"{specs_dir.resolve().name}/{path.relative_to(specs_dir).as_posix()}"


def display_path(path: Path) -> str:
    """The path messages give a spec: one that names it from the current directory.

    Relative to the current directory when the file is inside it, otherwise as the spec
    directory was given (an absolute or ``../`` path still names the right file)."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except (ValueError, OSError):  # outside the working directory, or it was deleted
        return Path(os.path.normpath(path)).as_posix()
