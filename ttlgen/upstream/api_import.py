"""Refresh an API level's spec from the headers of the release it pins.

``ttlgen upstream import --level L`` rewrites the facts of ``specs/tt_metal/<L>.yaml`` that
upstream states, from the parsed headers (:mod:`ttlgen.upstream.release_api`), so no
signature is typed by hand:

- ``headers``: every function the spec declares (and every one named with ``--add``) with
  all the forms the release declares for it that the spec can state, in the header and
  namespace the release declares it in, each signature as the release writes it and each
  ``[[deprecated]]`` message quoted; a function the release lacks is dropped (and reported);
- ``header_roots``: the directories those headers sit in;
- ``types``: every enumeration's scope, underlying type, enumerators and values;
- ``defines``: whether each is a macro or a constexpr variable (and its type), plus any name
  a refreshed default uses.

ttlgen's own knowledge beside a signature (``configures``, ``formats``, ``swap_sources``) is
carried to the release's form it belongs to, parameter names renamed by position where the
release renamed them; comments stay with the entry they precede. Everything else of the
file (the pin, the entry point, the init protocol, ``removed``, class types) is kept as
written; what the import cannot decide (a value for a new define in the emulation spec, a
dropped function's replacement) it reports.

The file's layout is the one the specs use: top-level keys at column 0, a header at indent
2, its keys at 4, its functions at 6.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ttlgen.model.cpp_declarations import BUILTIN_TYPES, Signature, identifiers, parse_declaration
from ttlgen.model.tt_metal_api import ApiLevel, FunctionForm, KernelKind
from ttlgen.spec.document import SpecDocument
from ttlgen.upstream.api_check import closest_enum, expressible, match_forms, parsed_declaration
from ttlgen.upstream.release_api import Function, KindApi, ReleaseApi

_TOP_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):")
# Keys of a function entry that are ttlgen's knowledge, in the order they are written.
_KNOWLEDGE = ("configures", "formats", "swap_sources", "expects", "expects_swapped_when")
_LITERALS = frozenset({"true", "false", "nullptr"})
_WIDTH = 100


class RefreshError(ValueError):
    """The spec cannot be refreshed (a layout the import does not know, a mixed namespace)."""


@dataclass
class Entry:
    """One function form as the refreshed spec writes it."""

    signature: Signature
    knowledge: dict[str, Any] = field(default_factory=dict)
    deprecated: dict[str, str] | None = None
    comments: list[str] = field(default_factory=list)


@dataclass
class HeaderBlock:
    path: str
    kernel: KernelKind
    namespace: str | None
    entries: list[Entry] = field(default_factory=list)
    lead: list[str] = field(default_factory=list)  # comments above the header's key
    inner: list[str] = field(default_factory=list)  # comments under it, before its keys


@dataclass
class Result:
    text: str
    notes: list[str]  # what changed and what is left to do, one line each


def _leading_comments(lines: Iterable[str]) -> list[str]:
    """The comment lines ``lines`` starts with (text without indentation)."""
    return [line.strip() for line in itertools.takewhile(lambda line: line.strip().startswith("#"), lines)]


def _comments_above(lines: Sequence[str], line: int) -> list[str]:
    """The comment lines right above 1-based ``line``."""
    return _leading_comments(reversed(lines[: line - 1]))[::-1]


def _comments_below(lines: Sequence[str], line: int) -> list[str]:
    return _leading_comments(lines[line:])


def _flow(value: Any) -> str:
    """A value in YAML flow style: identifiers plain, anything else JSON-quoted."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_./]*", text) and text not in ("true", "false", "null", "yes", "no", "on", "off"):
        return text
    return json.dumps(text)


def _scalar(text: str) -> str:
    """A declaration as a block-context YAML scalar: plain where YAML reads it back as is."""
    if ": " in text or " #" in text or text[:1] in "!&*?|>'\"%@`{[" or text.endswith(":"):
        return json.dumps(text)
    return text


def _renamed(knowledge: Mapping[str, Any], old: Signature, new: Signature) -> dict[str, Any]:
    """Knowledge naming ``old``'s parameters, naming ``new``'s at the same positions."""
    params = {p.name: i for i, p in enumerate(old.params) if p.name}
    template = {t.name: i for i, t in enumerate(old.template)}

    def param(name: str) -> str:
        index = params.get(name)
        renamed = new.params[index].name if index is not None and index < len(new.params) else None
        return name if renamed is None else renamed

    def tparam(name: str) -> str:
        index = template.get(name)
        return new.template[index].name if index is not None and index < len(new.template) else name

    result: dict[str, Any] = {}
    for key, value in knowledge.items():
        if key in ("formats", "expects"):
            result[key] = {state: param(p) for state, p in value.items()}
        elif key == "expects_swapped_when":
            result[key] = {tparam(name): values for name, values in value.items()}
        elif key == "swap_sources":
            result[key] = {"parameter": tparam(value["parameter"]), "value": value["value"]}
        else:
            result[key] = value
    return result


class _Importer:
    def __init__(self, doc: SpecDocument, text: str, level: ApiLevel, api: ReleaseApi, release: str) -> None:
        self.doc = doc
        self.lines = text.splitlines()
        self.level = level
        self.api = api
        self.release = release
        self.notes: list[str] = []
        self.known_types = set(BUILTIN_TYPES) | {t.name for t in level.types}
        self.new_types: dict[str, list[str]] = {}
        self.moved: dict[tuple[str, str], list[str]] = {}

    # --------------------------------------------------------------------- the layout

    def top_keys(self) -> list[tuple[str, int]]:
        """Each top-level key with its 0-based line."""
        return [(m.group(1), i) for i, line in enumerate(self.lines) if (m := _TOP_KEY.match(line))]

    def span(self, key: str) -> tuple[int, int] | None:
        """Lines [start, end) of a top-level section, its trailing comments and blank lines
        left to the section after it."""
        keys = self.top_keys()
        for index, (name, start) in enumerate(keys):
            if name != key:
                continue
            end = keys[index + 1][1] if index + 1 < len(keys) else len(self.lines)
            while end > start + 1 and (not self.lines[end - 1].strip() or self.lines[end - 1].startswith("#")):
                end -= 1
            return start, end
        return None

    # ---------------------------------------------------------------------- headers

    def raw_function(self, path: str, index: int) -> dict[str, Any]:
        item = self.doc.data["headers"][path]["functions"][index]
        return item if isinstance(item, dict) else {"signature": item}

    def blocks(self, added: Sequence[str]) -> list[HeaderBlock]:
        blocks: dict[str, HeaderBlock] = {}  # in the order they are first named
        placed: set[tuple[str, KernelKind]] = set()

        def block(path: str, kernel: KernelKind, namespace: str | None) -> HeaderBlock:
            found = blocks.setdefault(path, HeaderBlock(path, kernel, namespace))
            if found.namespace != namespace:
                raise RefreshError(
                    f"{path} declares functions in namespace {found.namespace or 'global'} and {namespace or 'global'}: "
                    "a header of the spec has one namespace"
                )
            return found

        for header in self.level.headers:
            key_line = self.doc.key_mark(("headers", header.path)).line
            forms_by_name: dict[str, list[tuple[int, FunctionForm]]] = {}
            for index, form in enumerate(header.forms):
                forms_by_name.setdefault(form.name, []).append((index, form))
            kind = self.api.kind(header.kernel)
            # The header's own comments stay with the header the release declares its
            # first function in (the header itself, when it exists).
            home = self.home(header.path, kind, list(forms_by_name))
            if home is not None:
                target = block(home[0], header.kernel, home[1])
                target.lead += _comments_above(self.lines, key_line)
                target.inner += _comments_below(self.lines, key_line)
            for name, forms in forms_by_name.items():
                if (name, header.kernel) in placed:
                    continue
                placed.add((name, header.kernel))
                self.function(name, kind, forms, header.path, block)
        for name in added:
            kinds = [k for k in KernelKind if self.api.kind(k).overloads(name)]
            if not kinds:
                raise RefreshError(f"--add {name}: {self.release} declares no function {name!r}")
            for kernel in kinds:
                if (name, kernel) in placed:
                    continue
                placed.add((name, kernel))
                self.function(name, self.api.kind(kernel), [], None, block)
        return [b for b in blocks.values() if b.entries]

    def home(self, path: str, kind: KindApi, names: Sequence[str]) -> tuple[str, str | None] | None:
        if path in kind.headers:
            declared = [f for n in names for f in kind.overloads(n) if f.header == path]
            namespace = declared[0].namespace if declared else next((f.namespace for f in self.level.all_forms() if f.header == path), None)
            return path, namespace
        for name in names:
            found = kind.overloads(name)
            if found:
                return found[0].header, found[0].namespace
        return None

    def api_forms(self, name: str, kind: KindApi, namespace: str | None) -> list[Function]:
        """The release's forms of ``name``: in the namespace the spec uses when it has them
        there, else in the one upstream uses (kernel-API namespaces: ckernel or global)."""
        found = [f for f in kind.overloads(name) if "::" not in (f.namespace or "")]
        preferred = [f for f in found if f.namespace == namespace]
        return preferred or found

    def function(self, name: str, kind: KindApi, forms: Sequence[tuple[int, FunctionForm]], path: str | None, block: Any) -> None:
        namespace = forms[0][1].namespace if forms else None
        upstream = self.api_forms(name, kind, namespace)
        if not upstream:
            self.notes.append(f"dropped {name} ({path}): {self.release} declares no {name!r} for {kind.kind.value} kernels; list it under `removed` with what replaces it if kernels may name it")
            return
        headers = sorted({f.header for f in upstream})
        home = path if path in headers else headers[0]
        if path is not None and home != path:
            self.moved.setdefault((path, home), []).append(name)
        upstream = [f for f in upstream if f.header == home]
        matched = match_forms([f for _, f in forms], upstream)
        index_of = {id(f): i for i, f in forms}
        target = block(home, kind.kind, upstream[0].namespace)
        for form in matched.spec_only:
            self.notes.append(f"dropped a form of {name}: {self.release} has no `{form.signature.text}`")
        written: dict[int, Entry] = {}
        for form, function, _ in matched.pairs:
            i = index_of[id(form)]
            raw = self.raw_function(form.header, i)
            new = parse_declaration(function.declaration)
            knowledge = _renamed({k: raw[k] for k in _KNOWLEDGE if k in raw}, form.signature, new)
            written[id(function)] = Entry(new, knowledge, self.deprecated(function, raw.get("deprecated")), self.item_comments(form.header, i))
        for function in matched.upstream_only:
            signature = parsed_declaration(function.declaration)
            if signature is None or not expressible(signature, self.known_types):
                continue
            sibling = next(iter(written.values()), None)
            knowledge = {}
            if sibling is not None and "configures" in sibling.knowledge:
                names = set(signature.names())
                knowledge["configures"] = sibling.knowledge["configures"]
                formats = {s: p for s, p in sibling.knowledge.get("formats", {}).items() if p in names}
                if formats:
                    knowledge["formats"] = formats
            written[id(function)] = Entry(signature, knowledge, self.deprecated(function, None))
            self.notes.append(f"added a form of {name} ({function.header}:{function.line}): {signature.text}" + (" (its configures/formats copied from a sibling: check them)" if knowledge else ""))
        # The release's order of its declarations.
        for function in sorted(upstream, key=lambda f: f.line):
            if id(function) in written:
                target.entries.append(written[id(function)])

    def item_comments(self, path: str, index: int) -> list[str]:
        return _comments_above(self.lines, self.doc.mark(("headers", path, "functions", index)).line)

    def deprecated(self, function: Function, old: Mapping[str, str] | None) -> dict[str, str] | None:
        if function.deprecated is None:
            return None
        if function.deprecated:
            return {"quote": " ".join(function.deprecated.split()), "source": self.release}
        if old is not None and "summary" in old:
            return dict(old)
        return {"summary": "deprecated without a message", "source": self.release}

    def headers_text(self, blocks: Sequence[HeaderBlock]) -> list[str]:
        out = ["headers:"]
        for index, header in enumerate(blocks):
            if index:
                out.append("")
            out += [f"  {c}" for c in header.lead]
            out.append(f"  {header.path}:")
            out += [f"    {c}" for c in header.inner]
            out.append(f"    kernel: {header.kernel.value}")
            if header.namespace:
                out.append(f"    namespace: {header.namespace}")
            out.append("    functions:")
            for entry in header.entries:
                out += [f"      {c}" for c in entry.comments]
                keys = dict(entry.knowledge)
                if entry.deprecated is not None:
                    keys["deprecated"] = entry.deprecated
                if not keys:
                    out.append(f"      - {_scalar(entry.signature.text)}")
                    continue
                out.append(f"      - signature: {_scalar(entry.signature.text)}")
                out += [f"        {k}: {_flow(v)}" for k, v in keys.items()]
        return out

    # ------------------------------------------------------------------------- roots

    def roots_text(self, blocks: Sequence[HeaderBlock]) -> list[str]:
        out = ["header_roots:"]
        for kernel in KernelKind:
            dirs = sorted({"/".join(b.path.split("/")[:2]) + "/" if b.path.count("/") >= 2 else b.path for b in blocks if b.kernel is kernel})
            out.append(f"  {kernel.value}: {_flow(dirs)}")
        return out

    # ------------------------------------------------------------------------- types

    def type_lines(self) -> dict[str, list[str]]:
        """The refreshed text of each enumeration's entry."""
        found = {}
        for declared in self.level.types:
            if declared.enumerators is None:
                continue
            enums = [e for k in KernelKind for e in self.api.kind(k).enum(declared.name)]
            if not enums:
                self.notes.append(f"types.{declared.name}: {self.release} declares no such enumeration (left as written)")
                continue
            found[declared.name] = _enum_lines(closest_enum(declared, enums))
        return found

    def add_types(self, blocks: Sequence[HeaderBlock]) -> None:
        """Declare the enumerations refreshed signatures name that the spec does not."""
        for header in blocks:
            for entry in header.entries:
                signature = entry.signature
                scope = {t.name for t in signature.template}
                refs = [p.type for p in signature.params] + [t.type for t in signature.template if t.type is not None]
                refs += [signature.returns] if signature.returns is not None else []
                for ref in refs:
                    if ref.name in self.known_types or ref.name in scope or ref.name in self.new_types:
                        continue
                    enums = [e for k in KernelKind for e in self.api.kind(k).enum(ref.name)]
                    if enums:
                        self.new_types[ref.name] = _enum_lines(enums[0])
                        self.notes.append(f"types.{ref.name}: new (`{signature.name}` names it)")
                    else:
                        self.notes.append(f"types.{ref.name}: `{signature.name}` names it; declare it under `types`")

    # ----------------------------------------------------------------------- defines

    def defines_text(self, blocks: Sequence[HeaderBlock]) -> list[str]:
        raw: dict[str, Any] = dict(self.doc.data.get("defines", {}))
        meanings = {n: (v if isinstance(v, str) else v["meaning"]) for n, v in raw.items()}
        used: dict[str, None] = {}  # in the order first named
        enumerators = {t.name for t in self.level.types if t.enumerators is not None} | set(self.new_types)
        for header in blocks:
            for entry in header.entries:
                signature = entry.signature
                scope = {t.name for t in signature.template}
                defaults = [t.default for t in signature.template] + [p.default for p in signature.params]
                for default in defaults:
                    for name in identifiers(default or ""):
                        qualifier = name.rpartition("::")[0]
                        if name in scope or name in _LITERALS or name in BUILTIN_TYPES or name.startswith("__builtin_") or qualifier in enumerators:
                            continue
                        used.setdefault(name, None)
        out = ["defines:"]
        for name in dict.fromkeys([*raw, *used]):
            if name in raw:
                out += [f"  {c}" for c in _comments_above(self.lines, self.doc.key_mark(("defines", name)).line)]
            variable = self.variable(name)
            meaning = meanings.get(name)
            if meaning is None:
                where = f" ({variable.header})" if variable is not None else ""
                meaning = f"{'a constexpr variable' if variable is not None else 'a macro'} of {self.release}{where}"
                self.notes.append(f"defines.{name}: new (a refreshed default names it); give it a value in the emulation spec")
            if variable is not None:
                out.append(f"  {name}: {_flow({'constexpr': variable.type.removeprefix('const '), 'meaning': meaning})}")
            elif isinstance(raw.get(name), Mapping) and raw[name].get("host"):
                out.append(f"  {name}: {_flow({'host': True, 'meaning': meaning})}")  # no header declares it
            else:
                out.append(f"  {name}: {_scalar(meaning)}")
        return out

    def variable(self, name: str) -> Any:
        return next((v for v in self.api.variables(name) if v.constexpr), None)

    # ------------------------------------------------------------------------- whole

    def run(self, added: Sequence[str]) -> Result:
        blocks = self.blocks(added)
        for (source, target), names in self.moved.items():
            self.notes.append(f"moved {', '.join(names)} from {source} to {target}, where {self.release} declares them")
        self.add_types(blocks)
        replacements: list[tuple[int, int, list[str]]] = []
        if self.new_types:
            span = self.span("types")
            if span is None:
                raise RefreshError("the spec has no top-level `types:` to declare new enumerations in")
            replacements.append((span[1], span[1], [line for lines in self.new_types.values() for line in lines]))
        for key, text in (("headers", self.headers_text(blocks)), ("header_roots", self.roots_text(blocks)), ("defines", self.defines_text(blocks))):
            span = self.span(key)
            if span is None:
                raise RefreshError(f"the spec has no top-level `{key}:` to refresh")
            replacements.append((span[0], span[1], text))
        for name, text in self.type_lines().items():
            start = self.doc.key_mark(("types", name)).line - 1
            end = start + 1
            while end < len(self.lines) and self.lines[end].startswith("    "):
                end += 1
            replacements.append((start, end, text))
        lines = list(self.lines)
        for start, end, text in sorted(replacements, key=lambda r: (r[0], r[1]), reverse=True):
            lines[start:end] = text
        return Result("\n".join(lines) + "\n", self.notes)


def _enum_lines(enum: Any) -> list[str]:
    value: dict[str, Any] = {"enum": dict(enum.enumerators), "scoped": enum.scoped}
    if enum.underlying:
        value["underlying"] = enum.underlying
    line = f"  {enum.name}: {_flow(value)}"
    if len(line) <= _WIDTH:
        return [line]
    return [f"  {enum.name}:", *(f"    {k}: {_flow(v)}" for k, v in value.items())]


def refresh(doc: SpecDocument, text: str, level: ApiLevel, api: ReleaseApi, release: str, added: Sequence[str] = ()) -> Result:
    """The level's spec file ``text`` (loaded as ``doc``) with its upstream facts refreshed."""
    return _Importer(doc, text, level, api, release).run(added)

