"""The causes of a generated change other than the specs: the templates, and ttlgen itself.

A generated file changes between a git ref and the work tree because a spec changed, a
template changed, or ttlgen's code changed (its emitters, planner, the resolver library
it copies into the tree, its version). The spec changes are charged line by line elsewhere
(:mod:`ttlgen.compat.line_charges`) by comparing two renders with the work tree's templates
and code: the specs at the ref (B) and the specs now (C). The other causes are told apart
with two more trees:

- T0, the tree committed at the ref (``--out`` read with git, as the specs are): what the
  ref's ttlgen wrote from the ref's specs and templates. MANIFEST's ``generator`` line
  says which ttlgen that was.
- A, the ref's specs rendered with the ref's templates (read with git when the template
  directory is in the repository) by the ttlgen running now.

Then A -> B is the template change alone (only the templates differ), and T0 -> A is the
change ttlgen's code and version made alone (only the generator differs). When A cannot be
made (the templates are outside the repository and MANIFEST shows they changed, or the
ref's templates do not render with this ttlgen: an emitter and its template changed
together), T0 -> B is charged to both together. A file that differs between T0 and the
tree now differs in at least one of the steps, so each changed file is listed under its
causes. MANIFEST itself, which changes with any input, is not listed.
"""

from __future__ import annotations

import contextlib
import difflib
import enum
import hashlib
import shutil
import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import ttlgen
from ttlgen.compat.git_specs import Revision, changed_since, files_at, prefix_in, repository_root
from ttlgen.compat.sides import Side
from ttlgen.emit._base import EmitContext, Templates
from ttlgen.emit._notice import MANIFEST
from ttlgen.errors import SpecErrors
from ttlgen.pipeline import render
from ttlgen.spec.files import display_path

Lines = dict[str, tuple[str, ...]]  # generated path -> its lines as written


def lines_of(files: Mapping[str, bytes]) -> Lines:
    """Each file's lines (MANIFEST left out: it changes with every input)."""
    out: Lines = {}
    for path, data in files.items():
        if path == MANIFEST:
            continue
        text = data.decode("utf-8", "replace").split("\n")
        out[path] = tuple(text[:-1] if text and text[-1] == "" else text)
    return out


@dataclass(frozen=True)
class FileChange:
    path: str  # in the generated tree
    added: int
    removed: int
    templates: tuple[str, ...] = ()  # the changed templates the file is rendered from, where known

    def counts(self) -> str:
        return f"+{self.added} -{self.removed}"

    def to_json(self) -> dict[str, object]:
        return {"file": self.path, "added": self.added, "removed": self.removed, "templates": list(self.templates)}


def file_changes(before: Lines, after: Lines) -> list[FileChange]:
    """Every file that differs, with the lines it gained and lost."""
    found = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path, ()), after.get(path, ())
        if old == new:
            continue
        added = removed = 0
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag != "equal":
                removed += i2 - i1
                added += j2 - j1
        found.append(FileChange(path, added, removed))
    return found


class CauseKind(enum.Enum):
    TEMPLATES = "templates"
    GENERATOR = "generator"
    TOGETHER = "templates and generator"


@dataclass(frozen=True)
class Cause:
    kind: CauseKind
    what: tuple[str, ...]  # what differs: template files; the version, code files
    files: tuple[FileChange, ...]

    @property
    def title(self) -> str:
        return {
            CauseKind.TEMPLATES: "templates",
            CauseKind.GENERATOR: "ttlgen's code and version",
            CauseKind.TOGETHER: "templates and ttlgen's code together",
        }[self.kind]

    def to_json(self) -> dict[str, object]:
        return {"cause": self.kind.value, "what": list(self.what), "files": [f.to_json() for f in self.files]}


@dataclass(frozen=True)
class OtherCauses:
    """The generated files changed by something other than the specs, by cause, and what
    could not be compared (and why)."""

    causes: tuple[Cause, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def files(self) -> set[str]:
        return {f.path for cause in self.causes for f in cause.files}

    def to_json(self) -> dict[str, object]:
        return {"causes": [c.to_json() for c in self.causes], "notes": list(self.notes)}


@dataclass(frozen=True)
class Manifest:
    """What MANIFEST says produced a tree."""

    generator: str | None
    inputs: dict[str, str] = field(default_factory=dict)  # source name -> sha256
    templates: dict[str, str] = field(default_factory=dict)  # name under templates/ -> sha256

    @classmethod
    def parse(cls, data: bytes) -> Manifest:
        generator, inputs, templates = None, {}, {}
        for line in data.decode("utf-8", "replace").splitlines():
            kind, _, rest = line.partition(" ")
            if kind == "generator":
                generator = rest.strip()
            elif kind in ("input", "template"):
                digest, _, name = rest.partition(" ")
                if kind == "input":
                    inputs[name] = digest
                else:
                    templates[name.removeprefix("templates/")] = digest
        return cls(generator, inputs, templates)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _listing(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


@contextlib.contextmanager
def _template_tree(files: Mapping[str, bytes]) -> Iterator[Templates]:
    scratch = Path(tempfile.mkdtemp(prefix="ttlgen-templates-"))
    try:
        root = scratch / "templates"
        for name, data in files.items():
            path = root.joinpath(*PurePosixPath(name).parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        root.mkdir(exist_ok=True)
        yield Templates(root)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _render_lines(side: Side, templates: Templates) -> Lines:
    return lines_of(render(side.project, side.plan, EmitContext(templates)))


def _package_changes(root: Path, revision: Revision) -> list[str] | None:
    """ttlgen's own files changed in the repository since the ref; None when ttlgen is not
    in it (an installed ttlgen, known by its version only)."""
    package = Path(ttlgen.__file__).resolve().parent
    prefix = prefix_in(root, package)
    if prefix is None:
        return None
    return [p for p in changed_since(root, revision, prefix) if "__pycache__" not in p and not p.endswith(".pyc")]


def other_causes(
    old: Side, revision: Revision, specs_dir: Path, templates: Templates, out_dir: Path,
    before: Lines | None = None, templates_of: Callable[[Collection[str]], Mapping[str, set[str]]] | None = None,
) -> OtherCauses:
    """The generated files the templates and ttlgen changed since ``revision``. ``before``:
    the tree of the ref's specs with the work tree's templates (B), when already rendered;
    ``templates_of``: the templates each of the files given of it is rendered from (from
    provenance, asked only of the files the templates changed)."""
    root = repository_root(specs_dir)
    ref = revision.ref
    notes: list[str] = []
    out_prefix = prefix_in(root, out_dir)
    old_tree = files_at(root, revision, out_prefix) if out_prefix is not None else {}
    manifest = Manifest.parse(old_tree[MANIFEST]) if MANIFEST in old_tree else None
    shown_out = display_path(out_dir)
    no_tree = f"{shown_out}/ is outside the repository" if out_prefix is None else f"{shown_out}/ is not in git at {ref}"

    # Which templates differ: by their files at the ref, else by MANIFEST's hashes of them.
    template_prefix = prefix_in(root, templates.root)
    old_templates = files_at(root, revision, template_prefix) if template_prefix is not None else {}
    changed_templates: list[str] | None
    if old_templates:
        changed_templates = sorted(n for n in old_templates.keys() | templates.files.keys() if old_templates.get(n) != templates.files.get(n))
    elif manifest is not None:
        now = {name: _sha256(data) for name, data in templates.files.items()}
        changed_templates = sorted(n for n in manifest.templates.keys() | now.keys() if manifest.templates.get(n) != now.get(n))
    else:
        changed_templates = None
    shown_templates = [display_path(templates.root / name) for name in changed_templates or ()]

    # What differs in the generator.
    evidence: list[str] = []
    if manifest is not None and manifest.generator != f"ttlgen {ttlgen.__version__}":
        evidence.append(f"{manifest.generator or 'an unnamed generator'} at {ref}, ttlgen {ttlgen.__version__} now (MANIFEST's generator line)")
    code = _package_changes(root, revision)
    code_evidence = f"ttlgen's files changed since {ref}: {_listing(code)}" if code else None
    if code_evidence is not None:
        evidence.append(code_evidence)
    if manifest is not None:
        stale = sorted(
            name for name, digest in manifest.inputs.items()
            if digest != next((d.sha256 for d in old.documents if d.source == name), None)
        )
        if old_templates:
            stale += sorted(
                f"templates/{name}" for name, digest in manifest.templates.items()
                if name in old_templates and digest != _sha256(old_templates[name])
            )
        if stale:
            evidence.append(f"the tree committed at {ref} was not rebuilt from its inputs (MANIFEST names other versions of {_listing(stale, 3)})")

    if not old_tree and not changed_templates:
        notes.append(f"ttlgen's code was not compared: {no_tree}")
        if changed_templates is None:
            notes.append(f"the templates were not compared: they are outside the repository and {shown_out}/ at {ref} has no MANIFEST naming them")
        if code_evidence is not None:
            notes.append(f"{code_evidence}; which generated files that changes is not known without the tree at {ref}")
        return OtherCauses((), tuple(notes))

    if before is None:
        try:
            before = _render_lines(old, templates)
        except SpecErrors as exc:  # this ttlgen checks what the ref's did not (compat reports that itself)
            notes.append(f"the specs at {ref} do not plan with this ttlgen ({len(exc.diagnostics)} error(s)); templates and code were not compared")
            return OtherCauses((), tuple(notes))
        except Exception as exc:  # the ref's specs and the work tree's templates do not fit together
            notes.append(f"the specs at {ref} do not render with the work tree's templates ({type(exc).__name__}: {exc}); templates and code were not compared")
            return OtherCauses((), tuple(notes))

    # A: the ref's specs with the ref's templates, rendered by this ttlgen.
    with_old_templates: Lines | None = None
    if changed_templates == []:
        with_old_templates = before
    elif changed_templates and old_templates:
        try:
            with _template_tree(old_templates) as ref_templates:
                with_old_templates = _render_lines(old, ref_templates)
        except Exception as exc:  # an emitter and its template changed together
            notes.append(f"the templates at {ref} do not render with this ttlgen ({type(exc).__name__}: {exc}): their changes and ttlgen's are shown together")

    causes: list[Cause] = []
    if changed_templates and with_old_templates is not None:
        changes = file_changes(with_old_templates, before)
        if templates_of is not None:
            wanted = {f"templates/{name}": shown for name, shown in zip(changed_templates, shown_templates, strict=True)}
            rendered_from = templates_of([c.path for c in changes])
            changes = [
                FileChange(c.path, c.added, c.removed, tuple(sorted(wanted[t] for t in rendered_from.get(c.path, set()) if t in wanted)))
                for c in changes
            ]
        causes.append(Cause(CauseKind.TEMPLATES, tuple(shown_templates), tuple(changes)))
    if old_tree:
        committed = lines_of(old_tree)
        if with_old_templates is not None:
            changes = file_changes(committed, with_old_templates)
            if changes or evidence:  # a code change that changed no file is worth saying too
                what = evidence or [f"the tree committed at {ref} is not what this ttlgen writes from {ref}'s specs and templates"]
                causes.append(Cause(CauseKind.GENERATOR, tuple(what), tuple(changes)))
        else:
            changes = file_changes(committed, before)
            if changes:
                causes.append(Cause(CauseKind.TOGETHER, (*shown_templates, *evidence), tuple(changes)))
    else:
        notes.append(f"ttlgen's code was not compared: {no_tree}")
        if code_evidence is not None:
            notes.append(f"{code_evidence}; which generated files that changes is not known without the tree at {ref}")
    return OtherCauses(tuple(causes), tuple(notes))
