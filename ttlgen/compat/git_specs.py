"""The spec tree as it is at a git ref, read with git plumbing into a temporary directory.

Nothing here touches the working tree, the index or any ref: ``rev-parse`` names the
commit, ``ls-tree`` lists the blobs under the spec directory's path in the repository and
one ``cat-file --batch`` reads them all. The copy is named like the spec directory, so
the specs at the ref are displayed with the same paths (``specs/abi/komorebi.yaml``) as the
working tree's.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ttlgen.errors import UsageError
from ttlgen.spec.files import is_spec_path, looked_for

_REGULAR_FILES = ("100644", "100755")


@dataclass(frozen=True)
class Revision:
    ref: str  # as the user wrote it
    commit: str  # the full object name

    @property
    def short(self) -> str:
        return self.commit[:12]


def _git(root: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(root), *args], input=input, capture_output=True, check=False)
    except FileNotFoundError:
        raise UsageError("git is not installed or not on PATH; compat reads the specs at a ref with git") from None


def repository_root(path: Path) -> Path:
    """The top of the git work tree holding ``path``; a usage error outside one."""
    found = _git(path, "rev-parse", "--show-toplevel")
    if found.returncode != 0:
        raise UsageError(f"{str(path)!r} is not inside a git repository; compat compares the specs with a git ref")
    return Path(found.stdout.decode("utf-8").strip())


def resolve(root: Path, ref: str) -> Revision:
    """The commit ``ref`` names (any form git understands); a usage error for an unknown ref."""
    if not ref or ref.startswith("-"):
        raise UsageError(f"{ref!r} is not a git ref")
    found = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if found.returncode != 0:
        raise UsageError(f"unknown git ref {ref!r} in {root}: no commit has that name")
    return Revision(ref, found.stdout.decode("ascii").strip())


def spec_prefix(root: Path, specs_dir: Path) -> PurePosixPath:
    """Where the spec directory is in the repository, relative to its root."""
    try:
        return PurePosixPath(specs_dir.resolve().relative_to(root.resolve()).as_posix())
    except ValueError:
        raise UsageError(f"spec directory {str(specs_dir)!r} is outside the git repository at {root}") from None


def _blobs(root: Path, revision: Revision, prefix: PurePosixPath) -> list[tuple[str, PurePosixPath]]:
    """(blob name, path relative to the spec directory) of every regular file under ``prefix``."""
    args = ["ls-tree", "-r", "-z", "--full-tree", revision.commit]
    if str(prefix) != ".":
        args += ["--", f"{prefix}/"]
    listing = _git(root, *args)
    if listing.returncode != 0:
        raise UsageError(f"git cannot list {revision.ref!r}: {listing.stderr.decode('utf-8', 'replace').strip()}")
    found = []
    for entry in listing.stdout.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, name = meta.decode("ascii").split()
        if kind != "blob" or mode not in _REGULAR_FILES:
            continue  # symlinks and submodules are not spec files
        path = PurePosixPath(raw_path.decode("utf-8"))
        found.append((name, path if str(prefix) == "." else path.relative_to(prefix)))
    return found


def _read_blobs(root: Path, names: list[str]) -> list[bytes]:
    batch = _git(root, "cat-file", "--batch", input="".join(f"{n}\n" for n in names).encode("ascii"))
    if batch.returncode != 0:
        raise UsageError(f"git cat-file failed: {batch.stderr.decode('utf-8', 'replace').strip()}")
    out, data, at = [], batch.stdout, 0
    for name in names:
        end = data.index(b"\n", at)
        header = data[at:end].decode("ascii").split()
        if len(header) != 3 or header[0] != name:
            raise UsageError(f"git cat-file returned {data[at:end]!r} for blob {name}")
        size = int(header[2])
        out.append(data[end + 1 : end + 1 + size])
        at = end + 1 + size + 1  # the blob and its trailing newline
    return out


def materialize(root: Path, revision: Revision, prefix: PurePosixPath, target: Path) -> None:
    """Write the files under ``prefix`` at ``revision`` into ``target``."""
    blobs = _blobs(root, revision, prefix)
    if not blobs:
        raise UsageError(f"{revision.ref!r} ({revision.short}) has no files under {prefix}/: there are no specs to compare with")
    # Said here, where the ref is known: the loader would name the temporary copy.
    if not any(is_spec_path(path) for _, path in blobs):
        raise UsageError(
            f"{revision.ref!r} ({revision.short}) has no spec file under {prefix}/ (looked for {looked_for()}): "
            "there are no specs to compare with"
        )
    for (_, path), content in zip(blobs, _read_blobs(root, [name for name, _ in blobs]), strict=True):
        destination = target.joinpath(*path.parts)
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(content)


@contextlib.contextmanager
def specs_at(ref: str, specs_dir: Path) -> Iterator[tuple[Path, Revision]]:
    """A temporary copy of ``specs_dir`` as it is at ``ref``, and the commit it names."""
    if not specs_dir.is_dir():
        raise UsageError(f"spec directory {str(specs_dir)!r} does not exist; pass --specs DIR")
    root = repository_root(specs_dir)
    revision = resolve(root, ref)
    prefix = spec_prefix(root, specs_dir)
    scratch = Path(tempfile.mkdtemp(prefix="ttlgen-compat-"))
    try:
        target = scratch / specs_dir.resolve().name
        target.mkdir()
        materialize(root, revision, prefix, target)
        yield target, revision
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def prefix_in(root: Path, path: Path) -> PurePosixPath | None:
    """Where ``path`` is in the repository at ``root``, or None when it is outside it."""
    try:
        return PurePosixPath(path.resolve().relative_to(root.resolve()).as_posix())
    except ValueError:
        return None


def files_at(root: Path, revision: Revision, prefix: PurePosixPath) -> dict[str, bytes]:
    """Every regular file under ``prefix`` at ``revision``, by its path under ``prefix``
    (empty when nothing is there)."""
    blobs = _blobs(root, revision, prefix)
    if not blobs:
        return {}
    contents = _read_blobs(root, [name for name, _ in blobs])
    return {path.as_posix(): content for (_, path), content in zip(blobs, contents, strict=True)}


def changed_since(root: Path, revision: Revision, prefix: PurePosixPath) -> list[str]:
    """The files under ``prefix`` (paths from the repository's root) whose content in the
    work tree differs from ``revision``'s, new untracked files included (ignored ones not)."""
    pathspec = ["--", "." if str(prefix) == "." else f"{prefix}/"]
    tracked = _git(root, "diff", "--name-only", "-z", "--no-renames", revision.commit, *pathspec)
    untracked = _git(root, "ls-files", "-z", "--others", "--exclude-standard", *pathspec)
    for done in (tracked, untracked):
        if done.returncode != 0:
            raise UsageError(f"git cannot compare the work tree with {revision.ref!r}: {done.stderr.decode('utf-8', 'replace').strip()}")
    names = {n.decode("utf-8") for done in (tracked, untracked) for n in done.stdout.split(b"\0") if n}
    return sorted(names)
