"""Target model: kernel target environments, their relation tables and runtime APIs.

Built from ``ttlgen.target/v1``, ``ttlgen.relations/v1`` and ``ttlgen.runtime_api/v1``
documents, checked against the op vocabulary. A target's relations are its own rules
or a relation-set table it names with a review note; nothing is inherited.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model.ops import Vocabulary
from ttlgen.spec.document import SpecDocument

TARGET_KIND = "ttlgen.target"
RELATIONS_KIND = "ttlgen.relations"
RUNTIME_API_KIND = "ttlgen.runtime_api"

NO_ARCHITECTURE = "none"
NO_RUNTIME_API = "none"


class Query(enum.Enum):
    DEST_WIDTH = "dest_width"
    DFB_UNPACK = "dfb_unpack"


@dataclass(frozen=True)
class Condition:
    """What a rule matches; an empty tuple / None matches anything."""

    primitives: tuple[str, ...]
    elements: tuple[str, ...]
    element_bits: tuple[int, ...]
    element_float: bool | None
    routes: tuple[str, ...]


@dataclass(frozen=True)
class Rule:
    when: Condition
    dest_widths: tuple[int, ...]
    unpack_modes: tuple[str, ...]  # empty for dest_width tables
    mark: Mark


@dataclass(frozen=True)
class RelationTable:
    """Rules of one query, first match wins. ``origin`` says where the rules came from."""

    query: Query
    rules: tuple[Rule, ...]
    origin: str  # "<target>" for a target's own rules, "<set>.<table>" for a shared table
    review: str | None
    mark: Mark


@dataclass(frozen=True)
class FullFp32Support:
    kind: str
    supported: bool
    warning: str | None


@dataclass(frozen=True)
class RuntimeVersion:
    name: str
    num_circular_buffers: int


@dataclass(frozen=True)
class RuntimeApi:
    name: str
    summary: str
    translation: str
    default_math_fidelity: str
    versions: tuple[RuntimeVersion, ...]
    pinned_version: str
    source: str


@dataclass(frozen=True)
class Target:
    name: str
    summary: str
    architecture: str
    default_for_architecture: bool
    rejected: str | None
    runtime_api: str  # NO_RUNTIME_API when the target has no runtime
    runtime_architecture_name: str | None
    dfb_capacity: int
    dest_width: RelationTable | None
    dfb_unpack: RelationTable | None
    unpack_effective_for: tuple[str, ...]
    unpack_other_entries: str
    unpack_unbound_entries: str
    full_fp32: tuple[FullFp32Support, ...]  # in vocabulary (sorted) order
    source: str
    sources: tuple[str, ...]  # this target's file plus relation sets it uses
    mark: Mark


@dataclass(frozen=True)
class RuntimeEnums:
    unpack_to_dest_mode: tuple[tuple[str, int], ...]
    math_fidelity: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class TargetsModel:
    targets: tuple[Target, ...]  # sorted by name
    runtime_apis: tuple[RuntimeApi, ...]  # sorted by name
    runtime_enums: RuntimeEnums
    architectures: tuple[tuple[str, str | None], ...]  # (architecture, runtime name), sorted

    @property
    def no_target(self) -> Target | None:
        """The environment without an architecture, used when a kernel names no target."""
        return next((t for t in self.targets if t.architecture == NO_ARCHITECTURE), None)

    @property
    def sources(self) -> tuple[str, ...]:
        found = {api.source for api in self.runtime_apis}
        for target in self.targets:
            found.update(target.sources)
        return tuple(sorted(found))


def _condition(raw: dict[str, object] | None) -> Condition:
    raw = raw or {}
    float_value = raw.get("element_float")
    return Condition(
        primitives=tuple(raw.get("primitive", ())),  # type: ignore[arg-type]
        elements=tuple(raw.get("element", ())),  # type: ignore[arg-type]
        element_bits=tuple(raw.get("element_bits", ())),  # type: ignore[arg-type]
        element_float=float_value if isinstance(float_value, bool) else None,
        routes=tuple(raw.get("route", ())),  # type: ignore[arg-type]
    )


def _rules(
    doc: SpecDocument, path: tuple[str | int, ...], raw_rules: list[dict[str, object]], query: Query,
    vocab: Vocabulary, sink: DiagnosticSink,
) -> tuple[Rule, ...]:
    rules = []
    element_names = [e.name for e in vocab.element_types]
    for index, raw in enumerate(raw_rules):
        rpath = (*path, index)
        when = _condition(raw.get("when"))  # type: ignore[arg-type]
        for pindex, primitive in enumerate(when.primitives):
            if primitive not in vocab.primitives:
                sink.error(doc.mark((*rpath, "when", "primitive", pindex)), f"unknown primitive {primitive!r}; declared: {', '.join(vocab.primitives)}")
        for eindex, element in enumerate(when.elements):
            if element not in element_names:
                sink.error(doc.mark((*rpath, "when", "element", eindex)), f"unknown element type {element!r}; declared: {', '.join(element_names)}")
        if when.routes and query is not Query.DFB_UNPACK:
            sink.error(doc.key_mark((*rpath, "when", "route")), "only dfb_unpack rules can match on the operand route")
        allow = raw["allow"]
        if query is Query.DEST_WIDTH:
            if not isinstance(allow, list):
                sink.error(doc.mark((*rpath, "allow")), "a dest_width rule allows a list of widths, e.g. [16, 32]")
                widths: tuple[int, ...] = ()
                modes: tuple[str, ...] = ()
            else:
                widths, modes = tuple(sorted(allow)), ()
        else:
            if not isinstance(allow, dict):
                sink.error(doc.mark((*rpath, "allow")), "a dfb_unpack rule allows {dest_width: [...], unpack: [...]}")
                widths, modes = (), ()
            else:
                widths = tuple(sorted(allow["dest_width"]))
                modes = tuple(sorted(allow["unpack"]))
        rules.append(Rule(when, widths, modes, doc.mark(rpath)))
    if rules and rules[-1].when != _condition(None):
        sink.error(doc.mark((*path, len(rules) - 1)), "the last rule of a table must have no 'when': it answers every use the other rules do not match")
    return tuple(rules)


def _relation_sets(
    docs: Sequence[SpecDocument], vocab: Vocabulary, sink: DiagnosticSink
) -> dict[str, tuple[RelationTable, str]]:
    tables: dict[str, tuple[RelationTable, str]] = {}
    seen_sets: dict[str, SpecDocument] = {}
    for doc in docs:
        set_name = doc.data["name"]
        if set_name in seen_sets:
            sink.error(doc.mark(("name",)), f"relation set {set_name!r} is declared twice (first in {seen_sets[set_name].file})")
            continue
        seen_sets[set_name] = doc
        for table_name, raw in doc.data["tables"].items():
            query = Query(raw["query"])
            rules = _rules(doc, ("tables", table_name, "rules"), raw["rules"], query, vocab, sink)
            key = f"{set_name}.{table_name}"
            tables[key] = (RelationTable(query, rules, key, None, doc.key_mark(("tables", table_name))), doc.file)
    return tables


def _runtime_apis(docs: Sequence[SpecDocument], sink: DiagnosticSink) -> tuple[dict[str, RuntimeApi], RuntimeEnums]:
    apis: dict[str, RuntimeApi] = {}
    enums = RuntimeEnums((), ())
    for index, doc in enumerate(docs):
        if index == 0:
            raw_enums = doc.data["enums"]
            enums = RuntimeEnums(tuple(raw_enums["UnpackToDestMode"].items()), tuple(raw_enums["MathFidelity"].items()))
        else:
            sink.error(doc.mark(("enums",)), f"runtime enums are declared once (first in {docs[0].file}); put every API in that file")
        fidelity = enums.math_fidelity
        for name, raw in doc.data["apis"].items():
            base = ("apis", name)
            if name in apis or name == NO_RUNTIME_API:
                sink.error(doc.key_mark(base), f"runtime API {name!r} is declared twice" if name in apis else f"{name!r} is reserved")
                continue
            if raw["default_math_fidelity"] not in dict(fidelity):
                sink.error(doc.mark((*base, "default_math_fidelity")), f"{raw['default_math_fidelity']!r} is not one of the API's math_fidelity values")
            if raw["pinned_runtime_version"] not in raw["runtime_versions"]:
                sink.error(doc.mark((*base, "pinned_runtime_version")), f"{raw['pinned_runtime_version']!r} is not one of the declared runtime_versions")
            versions = tuple(RuntimeVersion(v, body["num_circular_buffers"]) for v, body in sorted(raw["runtime_versions"].items()))
            apis[name] = RuntimeApi(
                name, raw["summary"], raw["translation"], raw["default_math_fidelity"], versions, raw["pinned_runtime_version"], doc.file,
            )
    return apis, enums


def _relation(
    doc: SpecDocument, query: Query, target: str, shared: dict[str, tuple[RelationTable, str]],
    vocab: Vocabulary, sink: DiagnosticSink,
) -> tuple[RelationTable | None, str | None]:
    path = ("relations", query.value)
    raw = doc.data["relations"][query.value]
    if "rules" in raw and "shared" in raw:
        sink.error(doc.key_mark((*path, "shared")), "give either the target's own rules or a shared table, not both")
        return None, None
    if "review" in raw and "shared" not in raw:
        sink.error(doc.key_mark((*path, "review")), "a review note belongs to a shared table; this relation has its own rules")
    if "rules" in raw:
        rules = _rules(doc, (*path, "rules"), raw["rules"], query, vocab, sink)
        return RelationTable(query, rules, target, None, doc.mark(path)), None
    if "shared" not in raw:
        sink.error(doc.mark(path), "missing 'rules' (the target's own) or 'shared' (a reviewed relation-set table)")
        return None, None
    name = raw["shared"]
    if "review" not in raw:
        sink.error(doc.key_mark((*path, "shared")), f"sharing {name!r} needs a 'review' note saying why that table holds for this target; nothing is inherited without one")
        return None, None
    found = shared.get(name)
    if found is None:
        known = ", ".join(sorted(k for k, (t, _) in shared.items() if t.query is query)) or "none"
        sink.error(doc.mark((*path, "shared")), f"unknown relation table {name!r}; {query.value} tables: {known}")
        return None, None
    table, source = found
    if table.query is not query:
        sink.error(doc.mark((*path, "shared")), f"relation table {name!r} answers {table.query.value}, not {query.value}")
        return None, None
    return RelationTable(query, table.rules, name, " ".join(raw["review"].split()), doc.mark(path)), source


def build(documents: Sequence[SpecDocument], sink: DiagnosticSink, vocabulary: Vocabulary) -> TargetsModel:
    shared = _relation_sets([d for d in documents if d.kind == RELATIONS_KIND], vocabulary, sink)
    apis, enums = _runtime_apis([d for d in documents if d.kind == RUNTIME_API_KIND], sink)
    kinds = [k.name for k in vocabulary.full_fp32_kinds]
    elements = [e.name for e in vocabulary.element_types]
    targets: dict[str, Target] = {}
    defaults: dict[str, Target] = {}
    runtime_names: dict[str, tuple[str | None, Mark]] = {}
    for doc in (d for d in documents if d.kind == TARGET_KIND):
        data = doc.data
        name = data["name"]
        rejected = data.get("rejected")
        runtime = data["runtime"]
        api = runtime.get("api", NO_RUNTIME_API)
        sources = {doc.file}
        if rejected is None:
            for key in ("dfb_capacity", "relations", "unpack_attribute", "full_fp32"):
                if key not in data:
                    sink.error(doc.mark(()), f"missing required key {key!r} (only a rejected target may omit it)")
            if "api" not in runtime:
                sink.error(doc.mark(("runtime",)), "missing required key 'api' (use 'none' for a target without a runtime)")
        if api != NO_RUNTIME_API and api not in apis:
            sink.error(doc.mark(("runtime", "api")), f"unknown runtime API {api!r}; declared: {', '.join(sorted(apis)) or 'none'}")
        if api != NO_RUNTIME_API and "architecture_name" not in runtime:
            sink.error(doc.mark(("runtime",)), "a target with a runtime API needs the runtime's architecture_name")
        dest_width = dfb_unpack = None
        if "relations" in data:
            dest_width, src1 = _relation(doc, Query.DEST_WIDTH, name, shared, vocabulary, sink)
            dfb_unpack, src2 = _relation(doc, Query.DFB_UNPACK, name, shared, vocabulary, sink)
            sources.update(s for s in (src1, src2) if s)
        full = []
        raw_full = data.get("full_fp32", {})
        for kind in raw_full:
            if kind not in kinds:
                sink.error(doc.key_mark(("full_fp32", kind)), f"unknown full-fp32 kind {kind!r}; declared: {', '.join(kinds)}")
        if "full_fp32" in data:
            for kind in kinds:
                if kind not in raw_full:
                    sink.error(doc.mark(("full_fp32",)), f"no full-fp32 support stated for {kind!r}")
                    continue
                body = raw_full[kind]
                if body["supported"] and "warning" in body:
                    sink.error(doc.key_mark(("full_fp32", kind, "warning")), "a warning applies only to an unsupported kind")
                full.append(FullFp32Support(kind, body["supported"], body.get("warning")))
        unpack = data.get("unpack_attribute", {"effective_for": [], "other_entries": "inert", "unbound_entries": "accept"})
        for index, element in enumerate(unpack["effective_for"]):
            if element not in elements:
                sink.error(doc.mark(("unpack_attribute", "effective_for", index)), f"unknown element type {element!r}; declared: {', '.join(elements)}")
        target = Target(
            name=name,
            summary=" ".join(data["summary"].split()),
            architecture=data["architecture"],
            default_for_architecture=bool(data.get("default_for_architecture", False)),
            rejected=" ".join(rejected.split()) if rejected else None,
            runtime_api=api,
            runtime_architecture_name=runtime.get("architecture_name"),
            dfb_capacity=int(data.get("dfb_capacity", 0)),
            dest_width=dest_width,
            dfb_unpack=dfb_unpack,
            unpack_effective_for=tuple(unpack["effective_for"]),
            unpack_other_entries=unpack["other_entries"],
            unpack_unbound_entries=unpack["unbound_entries"],
            full_fp32=tuple(full),
            source=doc.file,
            sources=tuple(sorted(sources | ({apis[api].source} if api in apis else set()))),
            mark=doc.mark(("name",)),
        )
        if name in targets:
            sink.error(target.mark, f"target {name!r} is declared twice (first in {targets[name].source})")
            continue
        targets[name] = target
        if target.architecture == NO_ARCHITECTURE:
            if target.default_for_architecture:
                sink.error(doc.key_mark(("default_for_architecture",)), "the environment without an architecture cannot be an architecture's default")
        else:
            runtime_name = target.runtime_architecture_name
            previous = runtime_names.get(target.architecture)
            if previous is not None and runtime_name is not None and previous[0] is not None and previous[0] != runtime_name:
                sink.error(doc.mark(("runtime", "architecture_name")), f"architecture {target.architecture!r} has runtime name {previous[0]!r} at {previous[1]}")
            if previous is None or previous[0] is None:
                runtime_names[target.architecture] = (runtime_name, doc.mark(("runtime", "architecture_name")))
        if target.default_for_architecture:
            if target.architecture in defaults:
                sink.error(doc.key_mark(("default_for_architecture",)), f"architecture {target.architecture!r} already has a default target: {defaults[target.architecture].name!r}")
            else:
                defaults[target.architecture] = target
    no_arch = [t for t in targets.values() if t.architecture == NO_ARCHITECTURE]
    if len(no_arch) > 1:
        sink.error(no_arch[1].mark, f"only one target may have no architecture (also {no_arch[0].name!r})")
    for arch in sorted(runtime_names):
        if arch not in defaults:
            first = next(t for t in targets.values() if t.architecture == arch)
            sink.error(first.mark, f"architecture {arch!r} has no target with default_for_architecture: true")
    return TargetsModel(
        targets=tuple(targets[n] for n in sorted(targets)),
        runtime_apis=tuple(apis[n] for n in sorted(apis)),
        runtime_enums=enums,
        architectures=tuple(sorted((arch, name) for arch, (name, _) in runtime_names.items())),
    )
