"""Target model: kernel target environments, their relation tables and runtime APIs.

Built from ``ttlgen.architecture/v1``, ``ttlgen.runtime_api/v1``, ``ttlgen.relations/v1``
and ``ttlgen.target/v1`` documents, checked against the op vocabulary. Each fact is stated
once: an architecture states its runtime name, DFB capacity, full-fp32 support and default
target (or why it is rejected); a runtime API states its translation, default fidelity,
unpack-attribute rules and runtime versions (each with the tt-metal kernel API level its
kernels are written against; a target uses its pinned version's); a target names one architecture and one API
and gives its relations: its own rules, or a relation-set table it names with a review note
(nothing is inherited). The model composes them into one :class:`Target` record per target
(plus one rejected record per rejected architecture), which is all later stages read.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from ttlgen.errors import DiagnosticSink, Entity, KeyPath, Mark, did_you_mean, format_key_path
from ttlgen.model import goldens as golden_model
from ttlgen.model.goldens import Golden
from ttlgen.model.ops import VOCABULARY, Vocabulary, unknown_name
from ttlgen.spec.document import SpecDocument

TARGET_KIND = "ttlgen.target"
RELATIONS_KIND = "ttlgen.relations"
RUNTIME_API_KIND = "ttlgen.runtime_api"
ARCHITECTURE_KIND = "ttlgen.architecture"

NO_ARCHITECTURE = "none"
NO_RUNTIME_API = "none"


def target_entity(name: str) -> Entity:
    return Entity("target", name)


def _architecture_entity(name: str) -> Entity:
    return Entity("architecture", name)


def facts_of(target: Target) -> tuple[Entity, ...]:
    """What a target's facts (DFB capacity, full-fp32 support) come from: when a spec error
    leaves them undefined, checks against them follow from it (errors.DiagnosticSink)."""
    return (target_entity(target.name), _architecture_entity(target.architecture))


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
    """One rule of a relation table; the first rule whose condition matches answers."""

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
    source: str  # the spec file the rules are written in (its source name)


@dataclass(frozen=True)
class FullFp32Support:
    """Whether an architecture supports a full-fp32 kind, and the warning if not."""

    kind: str
    supported: bool
    warning: str | None


@dataclass(frozen=True)
class RuntimeVersion:
    """A runtime version: its circular-buffer count and tt-metal kernel API level."""

    name: str
    num_circular_buffers: int
    kernel_api: str  # the tt-metal kernel API level (ttlgen.tt_metal_api) of this version


@dataclass(frozen=True)
class RuntimeApi:
    """A runtime configuration API (e.g. ComputeConfigDescriptor) and its pinned version."""

    name: str
    translation: str
    default_math_fidelity: str
    versions: tuple[RuntimeVersion, ...]
    pinned_version: str
    source: str

    @property
    def kernel_api(self) -> str | None:
        """The kernel API level of the pinned runtime version: what its kernels are written against."""
        return next((v.kernel_api for v in self.versions if v.name == self.pinned_version), None)


@dataclass(frozen=True)
class UnpackAttributeRules:
    """How an explicit ttl.unpack_to_dest_fp32 set is checked."""

    effective_for: tuple[str, ...]
    other_entries: str  # inert | require_32bit_dest
    unbound_entries: str  # accept | reject


@dataclass(frozen=True)
class StatedAt:
    """Where a value a target composes is written: ``attribute`` (a field of the target, or
    an entry of one: ``("full_fp32", "matmul")``) is the spec node at ``mark``, in its
    architecture's file, its runtime API's or its own. ``ttlgen explain`` names that node."""

    attribute: KeyPath
    mark: Mark
    what: str  # "the dfb_capacity of architecture 'blackhole'"


def _stated(doc: SpecDocument, owner: str, keys: Sequence[tuple[KeyPath, KeyPath]], base: KeyPath = ()) -> tuple[StatedAt, ...]:
    """(attribute, key path under ``base``) pairs of ``doc`` whose key is written there."""
    found = []
    for attribute, key in keys:
        path = (*base, *key)
        if path in doc.positions.values:
            found.append(StatedAt(attribute, doc.mark(path), f"the {format_key_path(key)} of {owner}"))
    return tuple(found)


def _fact_keys(doc: SpecDocument) -> list[tuple[KeyPath, KeyPath]]:
    """The facts an architecture states (or a target without one states itself)."""
    keys: list[tuple[KeyPath, KeyPath]] = [
        (("dfb_capacity",), ("dfb_capacity",)),
        (("runtime_architecture_name",), ("runtime_name",)),
        (("default_for_architecture",), ("default_target",)),
        (("full_fp32",), ("full_fp32",)),
    ]
    full = doc.data.get("full_fp32")
    keys += [(("full_fp32", kind), ("full_fp32", kind)) for kind in (full if isinstance(full, dict) else {})]
    return keys


# A target's unpack rules and the keys of an unpack_attribute that state them.
_UNPACK_KEYS: list[tuple[KeyPath, KeyPath]] = [
    (("unpack_effective_for",), ("unpack_attribute", "effective_for")),
    (("unpack_other_entries",), ("unpack_attribute", "other_entries")),
    (("unpack_unbound_entries",), ("unpack_attribute", "unbound_entries")),
]


@dataclass(frozen=True)
class Target:
    """An architecture launched through a runtime API, with the relation tables it uses."""

    name: str
    summary: str
    architecture: str
    default_for_architecture: bool
    rejected: str | None
    runtime_api: str  # NO_RUNTIME_API when the target has no runtime
    kernel_api: str | None  # the API level its kernels use; None without a runtime API
    runtime_architecture_name: str | None
    dfb_capacity: int
    dest_width: RelationTable | None
    dfb_unpack: RelationTable | None
    unpack_effective_for: tuple[str, ...]
    unpack_other_entries: str
    unpack_unbound_entries: str
    full_fp32: tuple[FullFp32Support, ...]  # in vocabulary (sorted) order
    source: str
    sources: tuple[str, ...]  # this target's file, its architecture's and API's, relation sets it uses
    mark: Mark
    goldens: tuple[Golden, ...] = ()  # answers TT-Lang's lit tests pin, from the target's file
    generation: str = ""  # the resolver generation it follows (the vocabulary's); "" when rejected
    display_name: str | None = None  # the architecture as TT-Lang's TargetInfo.h names it
    # "for <description>" of range diagnostics, from the generation (None: ranges alone).
    dfb_capacity_description: str | None = None
    # Where the values composed from the architecture, the runtime API and the target's own
    # keys are written (where, not what: equality ignores it).
    stated: tuple[StatedAt, ...] = field(default=(), compare=False)

    def stated_at(self, attribute: KeyPath) -> StatedAt | None:
        return next((s for s in self.stated if s.attribute == attribute), None)


@dataclass(frozen=True)
class RuntimeEnums:
    """The numeric values of the runtime enums a compute config carries."""

    unpack_to_dest_mode: tuple[tuple[str, int], ...]
    math_fidelity: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class TargetsModel:
    """Every target, runtime API and architecture of the spec tree."""

    targets: tuple[Target, ...]  # sorted by name
    runtime_apis: tuple[RuntimeApi, ...]  # sorted by name
    runtime_enums: RuntimeEnums
    architectures: tuple[tuple[str, str | None], ...]  # (architecture, runtime name), sorted
    relation_tables: tuple[str, ...]  # "<set>.<table>" of every relation set, sorted

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
                sink.error(doc.mark((*rpath, "when", "primitive", pindex)), unknown_name("primitive", primitive, vocab.primitives), after=[VOCABULARY])
        for eindex, element in enumerate(when.elements):
            if element not in element_names:
                sink.error(doc.mark((*rpath, "when", "element", eindex)), unknown_name("element type", element, element_names), after=[VOCABULARY])
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


def _relation_sets(docs: Sequence[SpecDocument], vocab: Vocabulary, sink: DiagnosticSink) -> dict[str, RelationTable]:
    tables: dict[str, RelationTable] = {}
    seen_sets: dict[str, SpecDocument] = {}
    for doc in docs:
        set_name = doc.data["name"]
        if set_name in seen_sets:
            sink.error(doc.mark(("name",)), f"relation set {set_name!r} is declared twice (first in {seen_sets[set_name].display})")
            continue
        seen_sets[set_name] = doc
        for table_name, raw in doc.data["tables"].items():
            query = Query(raw["query"])
            rules = _rules(doc, ("tables", table_name, "rules"), raw["rules"], query, vocab, sink)
            key = f"{set_name}.{table_name}"
            tables[key] = RelationTable(query, rules, key, None, doc.key_mark(("tables", table_name)), doc.source)
    return tables


def _relation(
    doc: SpecDocument, query: Query, target: str, shared: dict[str, RelationTable], vocab: Vocabulary, sink: DiagnosticSink
) -> RelationTable | None:
    path = ("relations", query.value)
    raw = doc.data["relations"][query.value]
    if "rules" in raw and "shared" in raw:
        sink.error(doc.key_mark((*path, "shared")), "give either the target's own rules or a shared table, not both")
        return None
    if "review" in raw and "shared" not in raw:
        sink.error(doc.key_mark((*path, "review")), "a review note belongs to a shared table; this relation has its own rules")
    if "rules" in raw:
        rules = _rules(doc, (*path, "rules"), raw["rules"], query, vocab, sink)
        return RelationTable(query, rules, target, None, doc.mark(path), doc.source)
    if "shared" not in raw:
        sink.error(doc.mark(path), "missing 'rules' (the target's own) or 'shared' (a reviewed relation-set table)")
        return None
    name = raw["shared"]
    if "review" not in raw:
        sink.error(doc.key_mark((*path, "shared")), f"sharing {name!r} needs a 'review' note saying why that table holds for this target; nothing is inherited without one")
        return None
    table = shared.get(name)
    if table is None:
        tables = sorted(k for k, t in shared.items() if t.query is query)
        sink.error(
            doc.mark((*path, "shared")),
            f"unknown relation table {name!r}; {query.value} tables: {', '.join(tables) or 'none'}{did_you_mean(name, tables)}",
        )
        return None
    if table.query is not query:
        sink.error(doc.mark((*path, "shared")), f"relation table {name!r} answers {table.query.value}, not {query.value}")
        return None
    return RelationTable(query, table.rules, name, " ".join(raw["review"].split()), doc.mark(path), table.source)


def _stated_once(
    doc: SpecDocument, key: str, owner: str, where: Mark | None, sink: DiagnosticSink
) -> None:
    """A target restating a fact its architecture or runtime API owns is an error at the key."""
    if key in doc.data and where is not None:
        sink.error(doc.key_mark((key,)), f"{key} is a fact of {owner}, stated at {where}; state it once, there")


def _full_fp32(doc: SpecDocument, kinds: Sequence[str], sink: DiagnosticSink) -> tuple[FullFp32Support, ...]:
    raw_full = doc.data["full_fp32"]
    for kind in raw_full:
        if kind not in kinds:
            sink.error(doc.key_mark(("full_fp32", kind)), unknown_name("full-fp32 kind", kind, kinds), after=[VOCABULARY])
    full = []
    for kind in kinds:
        if kind not in raw_full:
            sink.error(doc.mark(("full_fp32",)), f"no full-fp32 support stated for {kind!r}", after=[VOCABULARY])
            continue
        body = raw_full[kind]
        if body["supported"] and "warning" in body:
            sink.error(doc.key_mark(("full_fp32", kind, "warning")), "a warning applies only to an unsupported kind")
        full.append(FullFp32Support(kind, body["supported"], body.get("warning")))
    return tuple(full)


def _unpack_rules(
    doc: SpecDocument, path: tuple[str | int, ...], elements: Sequence[str], sink: DiagnosticSink
) -> UnpackAttributeRules:
    raw = doc.data
    for key in path:
        raw = raw[key]
    for index, element in enumerate(raw["effective_for"]):
        if element not in elements:
            sink.error(doc.mark((*path, "effective_for", index)), unknown_name("element type", element, elements), after=[VOCABULARY])
    return UnpackAttributeRules(tuple(raw["effective_for"]), raw["other_entries"], raw["unbound_entries"])


@dataclass(frozen=True)
class _RuntimeApiSpec:
    """A runtime API with its unpack-attribute rules, as its spec states them."""

    api: RuntimeApi
    unpack: UnpackAttributeRules
    mark: Mark  # of the API's unpack_attribute
    stated: tuple[StatedAt, ...]  # where each unpack rule is written


def _runtime_apis(
    docs: Sequence[SpecDocument], elements: Sequence[str], api_levels: Sequence[str] | None, sink: DiagnosticSink
) -> tuple[dict[str, _RuntimeApiSpec], RuntimeEnums]:
    apis: dict[str, _RuntimeApiSpec] = {}
    enums = RuntimeEnums((), ())
    for index, doc in enumerate(docs):
        if index == 0:
            raw_enums = doc.data["enums"]
            enums = RuntimeEnums(tuple(raw_enums["UnpackToDestMode"].items()), tuple(raw_enums["MathFidelity"].items()))
        else:
            sink.error(doc.mark(("enums",)), f"runtime enums are declared once (first in {docs[0].display}); put every API in that file")
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
            versions = []
            for version, body in sorted(raw["runtime_versions"].items()):
                if api_levels is not None and body["kernel_api"] not in api_levels:
                    known = ", ".join(api_levels) or "none (no ttlgen.tt_metal_api spec)"
                    sink.error(
                        doc.mark((*base, "runtime_versions", version, "kernel_api")),
                        f"unknown kernel API level {body['kernel_api']!r}{did_you_mean(body['kernel_api'], api_levels)}; levels: {known}",
                    )
                versions.append(RuntimeVersion(version, body["num_circular_buffers"], body["kernel_api"]))
            api = RuntimeApi(
                name, raw["translation"], raw["default_math_fidelity"], tuple(versions), raw["pinned_runtime_version"], doc.source,
            )
            unpack = _unpack_rules(doc, (*base, "unpack_attribute"), elements, sink)
            stated = _stated(doc, f"runtime API {name!r}", _UNPACK_KEYS, base)
            apis[name] = _RuntimeApiSpec(api, unpack, doc.key_mark((*base, "unpack_attribute")), stated)
    return apis, enums


@dataclass(frozen=True)
class _ArchitectureSpec:
    """An architecture's facts, as its spec states them."""

    name: str
    summary: str
    runtime_name: str
    display_name: str | None
    default_target: str | None
    dfb_capacity: int
    full_fp32: tuple[FullFp32Support, ...]
    rejected: str | None
    doc: SpecDocument
    goldens: tuple[Golden, ...]  # a rejected architecture's (it has no target spec to hold them)

    def fact_mark(self, key: str) -> Mark:
        return self.doc.key_mark((key,))

    @property
    def stated(self) -> tuple[StatedAt, ...]:
        return _stated(self.doc, f"architecture {self.name!r}", _fact_keys(self.doc))


# Facts of an architecture that has targets; a rejected one states none of them. Its DFB
# capacity every architecture states: TT-Lang sizes dataflow-buffer indices by it
# (TargetInfo.h) before its kernel-config pass rejects an architecture.
_ARCHITECTURE_FACTS = ("default_target", "full_fp32")
_EVERY_ARCHITECTURE_FACTS = ("dfb_capacity",)


def _architectures(docs: Sequence[SpecDocument], vocabulary: Vocabulary, sink: DiagnosticSink) -> dict[str, _ArchitectureSpec]:
    kinds = [k.name for k in vocabulary.full_fp32_kinds]
    found: dict[str, _ArchitectureSpec] = {}
    runtime_names: dict[str, _ArchitectureSpec] = {}
    for doc in docs:
        data = doc.data
        name = data["name"]
        rejected = data.get("rejected")
        if name == NO_ARCHITECTURE:
            sink.error(doc.mark(("name",)), f"{name!r} is reserved for the environment without an architecture (a target with architecture: none)")
            continue
        if name in found:
            sink.error(doc.mark(("name",)), f"architecture {name!r} is declared twice (first in {found[name].doc.display})")
            continue
        for key in _ARCHITECTURE_FACTS:
            if rejected is not None and key in data:
                sink.error(doc.key_mark((key,)), f"a rejected architecture has no targets, so it states no {key}")
            elif rejected is None and key not in data:
                sink.error(
                    doc.mark(()), f"missing required key {key!r} (only a rejected architecture may omit it)",
                    breaks=[_architecture_entity(name)],
                )
        for key in _EVERY_ARCHITECTURE_FACTS:
            if key not in data:
                sink.error(
                    doc.mark(()), f"missing required key {key!r} (every architecture states it, a rejected one too)",
                    breaks=[_architecture_entity(name)],
                )
        if rejected is None and golden_model.KEY in data:
            own = data.get("default_target") or name
            sink.error(
                doc.key_mark((golden_model.KEY,)),
                f"an architecture with targets has its goldens in their target specs, beside the relations they guard "
                f"(e.g. target {own!r}); only a rejected architecture, which has none, has them here",
            )
        arch = _ArchitectureSpec(
            name=name,
            summary=" ".join(data["summary"].split()),
            runtime_name=data["runtime_name"],
            display_name=" ".join(data["display_name"].split()) if "display_name" in data else None,
            default_target=data.get("default_target"),
            dfb_capacity=int(data.get("dfb_capacity", 0)),
            full_fp32=_full_fp32(doc, kinds, sink) if "full_fp32" in data else (),
            rejected=" ".join(rejected.split()) if rejected is not None else None,
            doc=doc,
            goldens=golden_model.build(
                doc, vocabulary.primitives, tuple(e.name for e in vocabulary.element_types), tuple(kinds), sink
            ) if rejected is not None else (),
        )
        previous = runtime_names.get(arch.runtime_name)
        if previous is not None:
            sink.error(doc.mark(("runtime_name",)), f"runtime name {arch.runtime_name!r} already names architecture {previous.name!r} ({previous.doc.mark(('runtime_name',))})")
        runtime_names.setdefault(arch.runtime_name, arch)
        found[name] = arch
    # The runtime name in lower case names the architecture too (the device name TT-Lang's
    # runtime maps), so it may not be another architecture's name (unless it is that one's
    # runtime name too, which is reported as a duplicate above).
    for arch in found.values():
        other = found.get(arch.runtime_name.lower())
        if other is not None and other is not arch and other.runtime_name != arch.runtime_name:
            sink.error(
                arch.doc.mark(("runtime_name",)),
                f"runtime name {arch.runtime_name!r} in lower case is the name of architecture {other.name!r} "
                f"({other.doc.mark(('name',))}), which a device reporting {arch.runtime_name.lower()!r} would select; "
                f"a runtime name names one architecture",
            )
    return found


def _capacity_fits_runtime(doc: SpecDocument, arch: _ArchitectureSpec, api: RuntimeApi, sink: DiagnosticSink) -> None:
    """The architecture's DFB indices must all fit the circular buffers of the runtime
    version its targets launch through: the runtime's unpack_to_dest_mode holds one entry
    per circular buffer, so an unpack-to-DST buffer at a larger index has no entry."""
    pinned = next((v for v in api.versions if v.name == api.pinned_version), None)
    if pinned is None or arch.dfb_capacity <= pinned.num_circular_buffers:
        return
    sink.error(
        arch.fact_mark("dfb_capacity") if "dfb_capacity" in arch.doc.data else doc.mark(("architecture",)),
        f"architecture {arch.name!r} has {arch.dfb_capacity} dataflow-buffer indices, but target {doc.data['name']!r} "
        f"launches it through {api.name} runtime version {pinned.name!r}, which has {pinned.num_circular_buffers} "
        f"circular buffers ({doc.mark(('runtime_api',))}); a buffer index past them has no unpack_to_dest_mode entry",
    )


def _rejected_target(arch: _ArchitectureSpec) -> Target:
    """The record a lookup of a rejected architecture finds: named after it, refusing with its reason."""
    return Target(
        name=arch.name,
        summary=arch.summary,
        architecture=arch.name,
        default_for_architecture=True,
        rejected=arch.rejected,
        runtime_api=NO_RUNTIME_API,
        kernel_api=None,
        runtime_architecture_name=arch.runtime_name,
        dfb_capacity=arch.dfb_capacity,
        dest_width=None,
        dfb_unpack=None,
        unpack_effective_for=(),
        unpack_other_entries="inert",
        unpack_unbound_entries="accept",
        full_fp32=(),
        source=arch.doc.source,
        sources=(arch.doc.source,),
        mark=arch.doc.mark(("name",)),
        goldens=arch.goldens,
        display_name=arch.display_name,
        stated=arch.stated,
    )


def build(
    documents: Sequence[SpecDocument], sink: DiagnosticSink, vocabulary: Vocabulary, api_levels: Sequence[str] | None = None
) -> TargetsModel:
    """The targets; ``api_levels`` (the tt-metal API levels declared) checks each runtime
    version's kernel API level, unless None (a caller that models the targets alone)."""
    kinds = [k.name for k in vocabulary.full_fp32_kinds]
    elements = [e.name for e in vocabulary.element_types]
    shared = _relation_sets([d for d in documents if d.kind == RELATIONS_KIND], vocabulary, sink)
    apis, enums = _runtime_apis([d for d in documents if d.kind == RUNTIME_API_KIND], elements, api_levels, sink)
    architectures = _architectures([d for d in documents if d.kind == ARCHITECTURE_KIND], vocabulary, sink)
    targets: dict[str, Target] = {a.name: _rejected_target(a) for a in architectures.values() if a.rejected}
    for doc in (d for d in documents if d.kind == TARGET_KIND):
        data = doc.data
        name = data["name"]
        arch_name = data["architecture"]
        api_name = data["runtime_api"]
        arch = architectures.get(arch_name)
        api = apis.get(api_name)
        sources = {doc.source}
        if arch_name == NO_ARCHITECTURE:
            if api_name != NO_RUNTIME_API:
                sink.error(doc.mark(("runtime_api",)), "the environment without an architecture has no runtime: use runtime_api: none")
        elif arch is None:
            known = sorted(architectures)
            sink.error(
                doc.mark(("architecture",)),
                f"unknown architecture {arch_name!r}; declared: {', '.join(known) or 'none'} "
                f"(or 'none' for the compiler-testing environment){did_you_mean(arch_name, [*known, NO_ARCHITECTURE])}",
                breaks=[target_entity(name)],  # the facts the architecture gives
            )
        elif arch.rejected is not None:
            sink.error(
                doc.mark(("architecture",)), f"architecture {arch_name!r} is rejected ({arch.doc.mark(('rejected',))}), so it has no targets",
                breaks=[target_entity(name)],
            )
        else:
            sources.add(arch.doc.source)
        if api_name != NO_RUNTIME_API and api is None:
            sink.error(
                doc.mark(("runtime_api",)),
                f"unknown runtime API {api_name!r}; declared: {', '.join(sorted(apis)) or 'none'}{did_you_mean(api_name, [*apis, NO_RUNTIME_API])}",
            )
        elif api is not None:
            sources.add(api.api.source)
        # Facts come from the architecture and the API; the target states them only where it has none.
        for key in ("dfb_capacity", "full_fp32"):
            _stated_once(doc, key, f"architecture {arch_name!r}", arch.fact_mark(key) if arch is not None and key in arch.doc.data else None, sink)
            if arch_name == NO_ARCHITECTURE and key not in data:
                sink.error(
                    doc.mark(()), f"missing required key {key!r}: without an architecture the target states it",
                    breaks=[target_entity(name)],
                )
        _stated_once(doc, "unpack_attribute", f"runtime API {api_name!r}", api.mark if api is not None else None, sink)
        if api_name == NO_RUNTIME_API and "unpack_attribute" not in data:
            sink.error(doc.mark(()), "missing required key 'unpack_attribute': without a runtime API the target states it")
        if arch is not None and arch.rejected is None:
            dfb_capacity, full_fp32 = arch.dfb_capacity, arch.full_fp32
        else:
            dfb_capacity = int(data.get("dfb_capacity", 0))
            full_fp32 = _full_fp32(doc, kinds, sink) if "full_fp32" in data else ()
        if api is not None:
            unpack = api.unpack
        elif "unpack_attribute" in data:
            unpack = _unpack_rules(doc, ("unpack_attribute",), elements, sink)
        else:
            unpack = UnpackAttributeRules((), "inert", "accept")
        generation_name = data.get("generation", vocabulary.default_generation)
        generation = vocabulary.generation(generation_name)
        if generation is None and "generation" in data and vocabulary.generations:
            known = [g.name for g in vocabulary.generations]
            sink.error(doc.mark(("generation",)), unknown_name("resolver generation", generation_name, known), after=[VOCABULARY])
        display_name = arch.display_name if arch is not None else None
        if generation is not None and generation.dfb_range_target is not None and arch is not None and display_name is None:
            sink.error(
                doc.key_mark(("generation",)) if "generation" in data else doc.mark(("architecture",)),
                f"generation {generation.name!r} names the architecture in range diagnostics ({generation.mark}), "
                f"but architecture {arch.name!r} states no display_name ({arch.doc.mark(())})",
            )
        description = None
        if generation is not None:
            sources.add(vocabulary.source)
            if arch_name == NO_ARCHITECTURE and generation.dfb_range_no_target is not None:
                description = generation.dfb_range_no_target.format(capacity=dfb_capacity)
            elif arch_name != NO_ARCHITECTURE and generation.dfb_range_target is not None:
                description = generation.dfb_range_target.format(capacity=dfb_capacity, target=display_name)
        if api is not None and arch is not None and arch.rejected is None:
            _capacity_fits_runtime(doc, arch, api.api, sink)
        # Where each composed value is written: the target's own keys, then what its
        # architecture and runtime API state (a target without them states those itself).
        own = f"target {name!r}"
        stated = _stated(doc, own, [(("architecture",), ("architecture",)), (("runtime_api",), ("runtime_api",))])
        stated += arch.stated if arch is not None and arch.rejected is None else _stated(doc, own, _fact_keys(doc))
        stated += api.stated if api is not None else _stated(doc, own, _UNPACK_KEYS)
        dest_width = _relation(doc, Query.DEST_WIDTH, name, shared, vocabulary, sink)
        dfb_unpack = _relation(doc, Query.DFB_UNPACK, name, shared, vocabulary, sink)
        # A table's own file: the target's for its own rules, a relation set's for a shared one.
        sources.update(t.source for t in (dest_width, dfb_unpack) if t is not None)
        target = Target(
            name=name,
            summary=" ".join(data["summary"].split()),
            architecture=arch_name,
            default_for_architecture=arch is not None and arch.default_target == name,
            rejected=None,
            runtime_api=api_name,
            kernel_api=api.api.kernel_api if api is not None else None,
            runtime_architecture_name=arch.runtime_name if arch is not None else None,
            dfb_capacity=dfb_capacity,
            dest_width=dest_width,
            dfb_unpack=dfb_unpack,
            unpack_effective_for=unpack.effective_for,
            unpack_other_entries=unpack.other_entries,
            unpack_unbound_entries=unpack.unbound_entries,
            full_fp32=full_fp32,
            source=doc.source,
            sources=tuple(sorted(sources)),
            mark=doc.mark(("name",)),
            goldens=golden_model.build(doc, vocabulary.primitives, tuple(elements), tuple(kinds), sink),
            generation=generation_name,
            display_name=display_name,
            dfb_capacity_description=description,
            stated=stated,
        )
        if name in targets:
            sink.error(target.mark, f"target {name!r} is declared twice (first in {targets[name].source})")
            continue
        targets[name] = target
    no_arch = [t for t in targets.values() if t.architecture == NO_ARCHITECTURE]
    if len(no_arch) > 1:
        sink.error(no_arch[1].mark, f"only one target may have no architecture (also {no_arch[0].name!r})")
    for arch in architectures.values():
        if arch.rejected is not None or arch.default_target is None:
            continue
        default = targets.get(arch.default_target)
        if default is None or default.architecture != arch.name:
            own_targets = sorted(t.name for t in targets.values() if t.architecture == arch.name)
            own = ", ".join(own_targets) or "none"
            if default is None:
                what = f"unknown target {arch.default_target!r}"
                hint = did_you_mean(arch.default_target, own_targets)
            else:
                what = f"{default.name!r} is a target of architecture {default.architecture!r}, not of {arch.name!r}"
                hint = ""
            sink.error(arch.doc.mark(("default_target",)), f"{what}; the targets of architecture {arch.name!r}: {own}{hint}")
    return TargetsModel(
        targets=tuple(targets[n] for n in sorted(targets)),
        runtime_apis=tuple(apis[n].api for n in sorted(apis)),
        runtime_enums=enums,
        architectures=tuple(sorted((a.name, a.runtime_name) for a in architectures.values())),
        relation_tables=tuple(sorted(shared)),
    )
