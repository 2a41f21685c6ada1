"""Hostile text in every string of the real specs, and what the build does with it.

Every string a spec holds (a value, or a mapping key) is a *site*; sites are grouped into
*fields* by the schema node that describes them (``ttlgen.layout/v1 #/$defs/enum/...
/doc``), found by walking each document with its kind's schema, so a field a schema gains
is covered without a list to update. :func:`settle` puts hostile text into every site of
the fields it is given, runs validation, the model and the plan on the copies, and drops
the fields whose text is rejected (each rejection must be a located error) until the rest
builds: those are the free-text fields, whose text reaches the outputs, and
:func:`generate` emits them.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from tests.conftest import TEMPLATES, real_documents, real_plan
from ttlgen.emit._base import EmitContext, Templates
from ttlgen.emit._notice import MANIFEST
from ttlgen.errors import Diagnostic, KeyPath, SpecErrors
from ttlgen.model.project import Project, build_project
from ttlgen.pipeline import render
from ttlgen.plan.project import ProjectPlan, plan_project
from ttlgen.spec.document import SpecDocument
from ttlgen.spec.kinds import find_kind
from ttlgen.validate.documents import validate_documents

# Each piece attacks one syntax; HOSTILE holds them all. Identifiers that would become code
# if the text escaped its comment or string are named injected_*.
PIECES: dict[str, str] = {
    "comment_terminators": " ends the comment */ int injected_symbol = 1; /* reopen // ",
    "line_breaks": "\nint injected_lf = 2;\r\nint injected_crlf = 3;\rint injected_cr = 4;\u2028int injected_ls = 5;\u2029\x85\x0b\x0c",
    "line_splices": " backslash \\\nint injected_splice = 6; ??/\nint injected_trigraph = 7; ??= ??' ??( ends in a backslash\\",
    "quotes": ' """ injected_docstring = 8 """ \'\'\' "double" \'single\' `back` ',
    "backslash_escapes": " \\n \\x41 \\u0041 \\N{BULLET} \\0 \\' \\\" ",
    "hidden_characters": " nul\x00 esc\x1b[31m del\x7f \u202eevil\u202c \u2066isolate\u2069 \u200bzero\u200d \ufeffbom \U000e0001 ",
    "markdown": " | cell | `code` <!-- hidden --> <b>html</b> &amp; [link](http://x)\n# injected heading\n| a | b |\n",
    "template_syntax": " {{ jinja }} {% raw %} {0} %s %(x)s ${x} ",
    "non_ascii": " \U0001f600 \u00e9 \u2264 ",
    "trailing_newline": "\n",  # a schema pattern's $ also matches before a final newline
}
# All of them, ending in a backslash (a comment line must not end in one).
HOSTILE = "".join(text for name, text in PIECES.items() if name != "line_splices") + PIECES["line_splices"]
INJECTED = re.compile(r"\binjected_\w+|\bINJECTED\w*")


@dataclass(frozen=True)
class Site:
    """One string of one document: a value, or the key of a mapping entry."""

    document: int  # index into the documents
    path: KeyPath  # of the value, or of the entry whose key it is
    field: str  # kind and schema location
    key: bool = False


# ---------------------------------------------------------------------------- finding sites


def _resolve(root: dict[str, Any], ref: str) -> Any:
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


class _Walker:
    """Every string of a document with the schema node that describes it."""

    def __init__(self, kind: str, root: dict[str, Any]) -> None:
        self.kind = kind
        self.root = root
        self.validator = Draft202012Validator(root)
        self.found: list[tuple[KeyPath, str, bool]] = []

    def walk(self, node: Any, data: Any, pointer: str, path: KeyPath) -> None:
        if not isinstance(node, dict):
            return
        if "$ref" in node:
            self.walk(_resolve(self.root, node["$ref"]), data, node["$ref"], path)
        for keyword in ("oneOf", "anyOf"):
            for index, branch in enumerate(node.get(keyword, [])):
                if self.validator.evolve(schema=branch).is_valid(data):
                    self.walk(branch, data, f"{pointer}/{keyword}/{index}", path)
                    break
        for index, branch in enumerate(node.get("allOf", [])):
            self.walk(branch, data, f"{pointer}/allOf/{index}", path)
        if isinstance(data, str) and node.get("type") == "string":
            self.found.append((path, pointer, False))
        elif isinstance(data, dict):
            self._mapping(node, data, pointer, path)
        elif isinstance(data, list) and isinstance(node.get("items"), dict):
            for index, item in enumerate(data):
                self.walk(node["items"], item, f"{pointer}/items", (*path, index))

    def _mapping(self, node: dict[str, Any], data: dict[str, Any], pointer: str, path: KeyPath) -> None:
        properties = node.get("properties", {})
        for key, value in data.items():
            if key in properties:
                self.walk(properties[key], value, f"{pointer}/properties/{key}", (*path, key))
                continue
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                # A key the schema does not name is the spec's own string.
                self.found.append(((*path, key), f"{pointer}/propertyNames", True))
                self.walk(extra, value, f"{pointer}/additionalProperties", (*path, key))


def string_sites(documents: Sequence[SpecDocument]) -> list[Site]:
    sites = []
    for index, document in enumerate(documents):
        kind = find_kind(document.kind, document.version)
        assert kind is not None
        walker = _Walker(document.kind_id, kind.schema())
        walker.walk(walker.root, document.data, "#", ())
        for path, pointer, key in walker.found:
            if path == ("spec",):
                continue  # the kind itself: the loader reads it before any schema
            sites.append(Site(index, path, f"{document.kind_id} {pointer}", key))
    return sites


def fields(sites: Sequence[Site]) -> dict[str, list[Site]]:
    grouped: dict[str, list[Site]] = {}
    for site in sites:
        grouped.setdefault(site.field, []).append(site)
    return dict(sorted(grouped.items()))


# ---------------------------------------------------------------------------- mutating


Texts = Callable[[str], str]  # the hostile text of a string, from its old text


def mutated(documents: Sequence[SpecDocument], sites: Sequence[Site], text: Texts) -> tuple[list[SpecDocument], dict[Site, KeyPath]]:
    """Copies of ``documents`` with ``text`` in every site, and where each site is now (a
    changed key moves its entry)."""
    values = {(s.document, s.path) for s in sites if not s.key}
    keys = {(s.document, s.path) for s in sites if s.key}
    out = []
    moved: dict[tuple[int, KeyPath], KeyPath] = {}
    touched = {s.document for s in sites}
    for index, document in enumerate(documents):
        if index not in touched:
            out.append(document)  # nothing downstream changes a document's data
            continue

        def rebuild(data: Any, old: KeyPath, new: KeyPath, index: int = index) -> Any:
            moved[(index, old)] = new
            if isinstance(data, dict):
                result = {}
                for key, value in data.items():
                    new_key = text(key) if (index, (*old, key)) in keys else key
                    result[new_key] = rebuild(value, (*old, key), (*new, new_key))
                return result
            if isinstance(data, list):
                return [rebuild(item, (*old, i), (*new, i)) for i, item in enumerate(data)]
            if isinstance(data, str) and (index, old) in values:
                return text(data)
            return data  # a scalar

        out.append(dataclasses.replace(document, data=rebuild(document.data, (), ())))
    return out, {s: moved[(s.document, s.path)] for s in sites}


# ---------------------------------------------------------------------------- building


@dataclass(frozen=True)
class _Outcome:
    errors: tuple[Diagnostic, ...]
    by_schema: bool  # the errors are the schemas' (the model did not run)
    built: tuple[Project, ProjectPlan] | None


# The schema errors of each document: one settle() validates a copy again when a round or
# a search for culprits puts the same text in the same sites of it. A copy is known by its
# file and data, a real document (alive for the process, never copied) by itself.
Validated = dict[object, tuple[Diagnostic, ...]]


def _validated(documents: list[SpecDocument], memo: Validated) -> list[Diagnostic]:
    """``validate_documents(documents)``, which validates each document on its own, from
    what it reads: its data and (for the marks) its file, which a copy keeps."""
    real = {id(d) for d in real_documents()}
    found: list[Diagnostic] = []
    for document in documents:
        key: object = id(document) if id(document) in real else (document.source, repr(document.data))
        if key not in memo:
            memo[key] = tuple(validate_documents([document]))
        found.extend(memo[key])
    return found


def _planned(documents: list[SpecDocument], memo: Validated) -> _Outcome:
    """Validate, model and plan ``documents``."""
    found = _validated(documents, memo)
    if found:
        return _Outcome(tuple(found), True, None)
    try:
        project = build_project(documents)
        return _Outcome((), False, (project, plan_project(project)))
    except SpecErrors as exc:
        return _Outcome(exc.diagnostics, False, None)


def _errors(documents: list[SpecDocument], memo: Validated) -> tuple[Diagnostic, ...]:
    return _planned(documents, memo).errors


@dataclass(frozen=True)
class Settled:
    accepted: tuple[str, ...]  # fields whose hostile text builds
    rejected: dict[str, Diagnostic]  # field -> the located error that rejected it
    by_schema: frozenset[str]  # the rejected fields a schema rejected (the others, the model)
    # With the text in every accepted field; None when none is: the documents as given.
    built: tuple[Project, ProjectPlan] | None


class Unattributed(AssertionError):
    """An error no mutated site explains: the harness cannot tell which field caused it."""


def settle(documents: Sequence[SpecDocument], candidates: dict[str, list[Site]], text: Texts) -> Settled:
    """Put ``text`` into every site of ``candidates``; drop each field the build rejects
    until the rest builds (or none is left). Rejections must be located (a spec file, a
    line, a column)."""
    active = dict(candidates)
    rejected: dict[str, Diagnostic] = {}
    by_schema: set[str] = set()
    files = {d.mark().file for d in documents}
    memo: Validated = {}
    while active:
        copies, where = mutated(documents, [s for sites in active.values() for s in sites], text)
        outcome = _planned(copies, memo)
        if outcome.built is not None:
            return Settled(tuple(active), rejected, frozenset(by_schema), outcome.built)
        errors = outcome.errors
        for error in errors:
            assert error.mark.file in files and error.mark.line > 0 and error.mark.column > 0, (
                f"an unlocated or misplaced error: {error.format()}"
            )
        blamed = _blame(copies, active, where, errors, text, memo)
        for field, error in blamed.items():
            rejected[field] = error
            del active[field]
            if outcome.by_schema:
                by_schema.add(field)
    # Every field rejected the text: what builds is the documents unchanged.
    return Settled((), rejected, frozenset(by_schema), None)


def _blame(
    copies: list[SpecDocument],
    active: dict[str, list[Site]],
    where: dict[Site, KeyPath],
    errors: Sequence[Diagnostic],
    text: Texts,
    memo: Validated,
) -> dict[str, Diagnostic]:
    """Fields the errors follow from, by the first rule that finds one: a field with a site
    at an error's node; of the fields with a site under it, those that fail on their own;
    the same among the fields of its document; among all fields. Errors the first rules
    leave may follow from what they found, so the next round sees them again."""
    documents = {d.mark().file: i for i, d in enumerate(copies)}
    # The fields with a site at each node, by document and path (a schema error comes for
    # each of thousands of sites): an error about a key names its entry or, from the
    # schema, the whole mapping.
    at_node: dict[tuple[int, KeyPath], set[str]] = {}
    for f, sites in active.items():
        for s in sites:
            at_node.setdefault((s.document, where[s]), set()).add(f)
            if s.key:
                at_node.setdefault((s.document, where[s][:-1]), set()).add(f)

    def under(error: Diagnostic, exact: bool) -> frozenset[str]:
        index, path = documents[error.mark.file], error.mark.path
        if exact:
            return frozenset(at_node.get((index, path), ()))
        return frozenset(f for f, sites in active.items() for s in sites if s.document == index and where[s][: len(path)] == path)

    def of_document(error: Diagnostic) -> frozenset[str]:
        index = documents[error.mark.file]
        return frozenset(f for f, sites in active.items() if any(s.document == index for s in sites))

    culprits = functools.cache(lambda suspects: _culprits(suspects, active, text, memo))
    rules = (
        lambda e: under(e, exact=True),
        lambda e: culprits(under(e, exact=False)),
        lambda e: culprits(of_document(e)),
        lambda e: culprits(frozenset(active)),
    )
    for rule in rules:
        blamed: dict[str, Diagnostic] = {}
        for error in errors:
            for field in rule(error):
                blamed.setdefault(field, error)
        if blamed:
            return blamed
    raise Unattributed("no mutated field explains: " + "; ".join(e.format() for e in errors))


def _culprits(suspects: frozenset[str], active: dict[str, list[Site]], text: Texts, memo: Validated) -> frozenset[str]:
    """The suspects whose text fails the build, found by halving the set (a failure only a
    combination of fields causes blames the combination)."""
    documents = list(real_documents())
    if not suspects or not _errors(mutated(documents, [s for f in suspects for s in active[f]], text)[0], memo):
        return frozenset()
    if len(suspects) == 1:
        return suspects
    ordered = sorted(suspects)
    halves = frozenset(ordered[: len(ordered) // 2]), frozenset(ordered[len(ordered) // 2 :])
    found = _culprits(halves[0], active, text, memo) | _culprits(halves[1], active, text, memo)
    return found or suspects


def appended(piece: str) -> Texts:
    return lambda old: f"{old}{piece}"


# ---------------------------------------------------------------------------- outputs


def generate(project: Project, plan: ProjectPlan) -> dict[str, bytes]:
    """Every generated file (the MANIFEST aside), as ``build`` writes it."""
    files = render(project, plan, EmitContext(Templates(TEMPLATES)))
    del files[MANIFEST]
    return files


@functools.cache
def real_outputs() -> dict[str, bytes]:
    return generate(*real_plan())


PLAIN = " plain words"  # what a baseline build appends where the hostile build puts its text


@dataclass(frozen=True)
class HostileBuild:
    settled: Settled
    outputs: dict[str, bytes]  # every file the hostile text changed
    baseline: dict[str, bytes]  # the same files with plain words where the hostile text is

    def changed(self, suffixes: tuple[str, ...]) -> list[str]:
        return sorted(p for p in self.outputs if p.endswith(suffixes))


def hostile_build(candidates: dict[str, list[Site]], text: Texts) -> HostileBuild:
    """Hostile text in the fields of ``candidates`` that take it, and a baseline with plain
    words in the same places: a template may print a text only when it is not empty, so the
    baseline, not the real tree, is what the hostile outputs must have the shape of."""
    documents = list(real_documents())
    settled = settle(documents, candidates, text)
    if settled.built is None:
        return HostileBuild(settled, {}, {})  # no field took the text: the real specs, unchanged
    outputs = generate(*settled.built)
    # A name that takes the text (a newline after it) may not take words: it stays as it is.
    plain = settle(documents, {f: candidates[f] for f in settled.accepted}, appended(PLAIN))
    real = real_outputs()
    baseline = generate(*plain.built) if plain.built is not None else real
    assert set(outputs) == set(real) == set(baseline), "hostile text changed which files are generated"
    changed = {p: b for p, b in outputs.items() if b != real[p]}
    return HostileBuild(settled, changed, {p: baseline[p] for p in changed})


def write_tree(outputs: dict[str, bytes], root: Path) -> Path:
    """The real generated tree with ``outputs`` written over it, under ``root``."""
    for path, data in {**real_outputs(), **outputs}.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root
