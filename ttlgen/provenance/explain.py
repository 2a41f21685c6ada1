"""``ttlgen explain``: where a line of a generated file, or each region of it, comes from."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ttlgen.emit._base import Templates
from ttlgen.emit._notice import MANIFEST
from ttlgen.errors import KeyPath, UsageError, did_you_mean, format_key_path
from ttlgen.model.project import Project, build_project
from ttlgen.pipeline import validate_specs
from ttlgen.plan.project import ProjectPlan, plan_project
from ttlgen.provenance.files import emitted, trace_files
from ttlgen.provenance.origins import (
    FileProvenance,
    LineOrigin,
    Locator,
    OriginKind,
    entry_path,
    node_mark,
)
from ttlgen.provenance.reverse import node_at, spec_document
from ttlgen.spec.document import SpecDocument

HEADER_MODULE = "ttlgen/emit/_header.py"


@dataclass(frozen=True)
class Target:
    path: str  # relative to the output tree
    line: int | None
    given: str = ""  # the path as given (a spec file is found by it)


def parse_target(text: str, out: Path) -> Target:
    """``PATH``, ``PATH:LINE`` or ``PATH:LINE:COLUMN`` (a location as explain and errors
    print it; the column is ignored: a line is explained whole); PATH is a file of the
    output tree, given through it (``generated/include/...``) or relative to it
    (``include/...``)."""
    path, line = text, None
    head, sep, tail = text.rpartition(":")
    before, sep_line, line_text = head.rpartition(":")
    if sep and tail.isdigit() and sep_line and line_text.isdigit():
        head, tail = before, line_text
    if sep and tail.isdigit():
        path, line = head, int(tail)
        if line < 1:
            raise UsageError(f"line {line} of {path!r}: lines are numbered from 1")
    given = Path(path)
    try:
        relative = given.resolve().relative_to(out.resolve()).as_posix()
    except ValueError:
        relative = given.as_posix()
    return Target(relative, line, path)


@dataclass(frozen=True)
class Explained:
    file: FileProvenance
    current: bool  # the file on disk is what ``build`` would write
    locator: Locator


@dataclass(frozen=True)
class Traced:
    """Generated files with the origin of every line, and the specs they are from."""

    files: dict[str, FileProvenance]  # the whole tree, or the files explaining a target needs
    documents: tuple[SpecDocument, ...]


def traced_tree(specs: Path, templates: Path, target: Target | None = None) -> Traced:
    """The generated tree with provenance; with ``target``, what explaining it needs."""
    documents = validate_specs(specs)
    project = build_project(documents)
    plan = plan_project(project)
    tree = Templates(templates)
    emitters = _emitters_for(target, documents, project, plan, tree) if target is not None else None
    return Traced(trace_files(project, plan, documents, tree, emitters), tuple(documents))


def _emitters_for(target: Target, documents: list[SpecDocument], project: Project, plan: ProjectPlan, templates: Templates) -> set[str] | None:
    """The emitters to trace for ``target``: a generated file's own (a traced render costs
    several times a plain one), every one (None) for a spec file. Bad input (no file of
    either kind, a line past a spec file's end) is reported here, before any tracing."""
    document = spec_document(target.given, documents, generated=True)
    if document is not None:
        if target.line is not None:
            node_at(document, target.line)  # raises for a line past the end
        return None
    made = emitted(project, plan, templates)
    if target.path == MANIFEST:
        raise UsageError(
            f"{target.given!r} is the tree's MANIFEST, which `ttlgen build` writes from the hashes of its inputs: "
            "the generator's version, then a line per spec file, template and generated file with its sha256; "
            "no spec node produces its lines"
        )
    if target.path not in made:
        spec_document(target.given, documents, generated=False)  # raises for a spec file's name
        raise _not_generated(target.path, made)
    return {made[target.path].emitter}


def _not_generated(path: str, paths: Iterable[str]) -> UsageError:
    return UsageError(f"{path!r} is not a file the specs generate{did_you_mean(path, paths)}")


def provenance_of(target: Target, specs: Path, out: Path, templates: Path, traced: Traced | None = None) -> Explained:
    """The file's provenance, and whether the file on disk is what ``build`` would write."""
    traced = traced or traced_tree(specs, templates, target)
    files = traced.files
    found = files.get(target.path)
    if found is None:
        raise _not_generated(target.path, files)
    on_disk = out / target.path
    written = "\n".join(found.lines) + "\n"
    current = on_disk.is_file() and on_disk.read_bytes() == written.encode("utf-8")
    if target.line is not None and target.line > len(found.lines):
        raise UsageError(f"{out / target.path} has {len(found.lines)} lines, not {target.line}")
    return Explained(found, current, Locator(traced.documents))


# -- one line ------------------------------------------------------------------------------


def explain_line(file: FileProvenance, line: int, shown: str) -> str:
    origin = file.origins[line - 1]
    out = [f"{shown}:{line}: {file.lines[line - 1]}"]
    out += _origin_lines(origin, blank=not file.lines[line - 1].strip())
    return "\n".join(out) + "\n"


def _origin_lines(origin: LineOrigin, blank: bool) -> list[str]:
    if origin.kind is OriginKind.HEADER:
        return [f"  header: the notice every generated file starts with ({HEADER_MODULE}), naming its sources: {', '.join(origin.files)}"]
    if origin.kind is OriginKind.FILE:
        return [f"  file: copied or computed from {', '.join(origin.files) or 'the generator'} as a whole"]
    lines = []
    if origin.sources:
        lines.append(f"  spec: {origin.sources[0]}")
        lines += [f"  also: {source}" for source in origin.sources[1:]]
    if origin.template is not None:
        alone = ""
        if not origin.sources:
            alone = " (a blank line)" if blank else (" (it prints a value whose spec node is not traced)" if origin.printed else " (the template's own text)")
        lines.append(f"  template: {origin.template}{alone}")
    elif not origin.sources:
        lines.append("  a blank line")
    return lines


def line_json(file: FileProvenance, line: int) -> dict[str, object]:
    return {"file": file.path, "line": line, "text": file.lines[line - 1], **file.origins[line - 1].to_json()}


# -- regions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Region:
    first: int
    last: int
    origin: LineOrigin  # of the region's first line
    key: tuple[object, ...]
    what: str = ""  # the model objects its lines print
    node: KeyPath | None = None  # the spec node holding them all (the entry, or one node in it)

    def label(self, locator: Locator) -> str:
        kind = self.key[0]
        if kind == "header":
            return f"header ({HEADER_MODULE}), naming {', '.join(self.origin.files)}"
        if kind == "file":
            return f"copied or computed from {', '.join(self.origin.files)}"
        if kind == "template":
            return f"template {self.key[1]}"
        source = self.origin.sources[0]
        path: KeyPath = self.node if self.node is not None else entry_path(source.mark.path)
        document = locator.by_file.get(source.mark.file)
        at = node_mark(document, path) if document is not None and path in document.positions.values else source.mark
        return f"{at.file}:{at.line}:{at.column}: {format_key_path(path)}: {self.what}"

    def to_json(self, locator: Locator) -> dict[str, object]:
        return {"first": self.first, "last": self.last, "label": self.label(locator), **self.origin.to_json()}


def _key(origin: LineOrigin) -> tuple[object, ...] | None:
    if origin.kind is OriginKind.HEADER:
        return ("header",)
    if origin.kind is OriginKind.FILE:
        return ("file",)
    if origin.sources:
        mark = origin.sources[0].mark
        return ("spec", mark.file, entry_path(mark.path))
    if origin.template is not None:
        return ("template", origin.template.file)
    return None


def regions(file: FileProvenance) -> list[Region]:
    """Runs of lines from one spec entry (``enums.gave``), one template's own text or the
    header; blank lines and template text between two lines of one entry belong to it."""
    keys = [_key(origin) if text.strip() else None for text, origin in zip(file.lines, file.origins, strict=True)]
    # Template text between two lines of the same entry is part of that entry.
    spec_at = [i for i, k in enumerate(keys) if k is not None and k[0] == "spec"]
    for before, after in itertools.pairwise(spec_at):
        if keys[before] == keys[after]:
            for i in range(before + 1, after):
                if keys[i] is None or keys[i][0] == "template":  # type: ignore[index]
                    keys[i] = keys[before]
    found: list[Region] = []
    current: tuple[object, ...] | None = None
    for index, key in enumerate(keys):
        if key is None:
            key = current  # a blank line joins the region before it
        if key is None:
            continue
        if found and key == current:
            found[-1] = replace(found[-1], last=index + 1)
        else:
            found.append(Region(index + 1, index + 1, file.origins[index], key))
            current = key
    return [_named(region, file) for region in found]


def _named(region: Region, file: FileProvenance) -> Region:
    """A spec region labelled with the node its lines come from: the innermost node that
    holds the node of every line (a loop of a kernel, not the kernel), and the model
    object at that node, or else the objects of the lines."""
    if region.key[0] != "spec":
        return region
    entry = region.key[2]
    assert isinstance(entry, tuple)
    origins = file.origins[region.first - 1 : region.last]
    sources = [s for o in origins for s in o.sources if s.mark.file == region.key[1]]
    firsts = [s for o in origins for s in o.sources[:1] if s.mark.file == region.key[1]] or sources
    node = _common(s.mark.path for s in firsts if s.mark.path[: len(entry)] == entry) or entry
    own = [s for s in sources if s.mark.path == node]
    if own or node == entry:  # an entry's region is named by its first object
        what = (own or sources)[0].what
    else:
        whats = list(dict.fromkeys(s.what for s in firsts))
        what = ", ".join(whats[:3]) + (f" and {len(whats) - 3} more" if len(whats) > 3 else "")
    return replace(region, what=what, node=node)


def _common(paths: Iterable[KeyPath]) -> KeyPath:
    """The longest key path every one of ``paths`` starts with."""
    found: KeyPath | None = None
    for path in paths:
        if found is None:
            found = path
            continue
        size = 0
        while size < min(len(found), len(path)) and found[size] == path[size]:
            size += 1
        found = found[:size]
    return found or ()


def explain_regions(file: FileProvenance, shown: str, locator: Locator) -> str:
    spans = regions(file)
    width = len(f"{len(file.lines)}-{len(file.lines)}")
    out = [f"{shown}: {len(file.lines)} lines, {len(spans)} regions"]
    for region in spans:
        span = f"{region.first}-{region.last}" if region.last != region.first else f"{region.first}"
        out.append(f"  {span.ljust(width)}  {region.label(locator)}")
    return "\n".join(out) + "\n"


def regions_json(file: FileProvenance, locator: Locator) -> list[dict[str, object]]:
    return [r.to_json(locator) for r in regions(file)]
