"""An API level's spec against the headers of the release it pins.

Every fact of ``specs/tt_metal/<level>.yaml`` that upstream states is compared with what the
pinned release's headers declare (:mod:`ttlgen.upstream.release_api`):

- header roots and headers: each exists in the release;
- functions: every form the spec declares is a declaration of the release, in the header
  the spec names and the namespace it gives, with the same return type, template
  parameters (kind or type, name, default), parameters (type, name, default), and the same
  ``[[deprecated]]`` message (quoted) or none; every form of a declared function that the
  release declares in that header and the spec could state (its types are ones the spec
  declares) is declared by the spec too, so a call resolves to the same overload on both
  sides; a function the spec lists as ``removed`` is absent;
- enumerations: scoped or not, the declared underlying type, every enumerator and its value;
- other types: they exist; a class's template parameters, and each constructor, member
  function and field the spec declares;
- defines: a ``constexpr`` define is a constexpr variable of that type; a macro is a macro
  of the release, unless the spec says the host passes it (``{host: true, ...}``: a kernel
  descriptor's defines, such as REDUCE_OP for ttnn 0.69.0's reduce LLK).

ttlgen's own knowledge beside the signatures (what an init configures, from which CB it loads
formats, the init protocol, the entry point, which calls kernels make) is not upstream's to
state and is not compared. Each disagreement is located at the spec line it concerns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ttlgen.errors import Diagnostic, Mark
from ttlgen.model.cpp_declarations import (
    BUILTIN_TYPES,
    DeclarationError,
    Signature,
    TypeRef,
    parse_declaration,
    template_params,
)
from ttlgen.model.tt_metal_api import ApiLevel, FunctionForm, KernelKind, TypeDecl
from ttlgen.upstream.release_api import Enum, Function, KindApi, ReleaseApi

# A disagreement is a located message like any other: printed with format(), as JSON with
# to_json().
Disagreement = Diagnostic


def names_of(level: ApiLevel) -> frozenset[str]:
    """Every function, class and class-like scope the level names: what the parse reads."""
    names = {f.name for f in level.all_forms()} | {n for n, _ in level.removed} | {t.name for t in level.types}
    names |= {d.name.rpartition("::")[0] for d in level.defines if "::" in d.name}
    return frozenset(names)


def _same(a: str | None, b: str | None) -> bool:
    """Two defaults (or types) as the same tokens, whatever the spacing."""
    if a is None or b is None:
        return a is b
    return a.replace(" ", "") == b.replace(" ", "")


def parsed_declaration(declaration: str) -> Signature | None:
    """The declaration read as the specs read one, None when it is beyond them (a pack, a
    SFINAE parameter)."""
    try:
        return parse_declaration(declaration)
    except DeclarationError:
        return None


def signature_differences(spec: Signature, upstream: Signature) -> list[str]:
    """What differs between two declarations of one function, part by part."""
    found = []
    if (spec.returns.text if spec.returns else None) != (upstream.returns.text if upstream.returns else None):
        found.append(f"returns {upstream.returns.text if upstream.returns else 'nothing'}, not {spec.returns.text if spec.returns else 'nothing'}")
    for what, mine, theirs in (
        ("template parameter", [t.text for t in spec.template], [t.text for t in upstream.template]),
        ("parameter", [p.text for p in spec.params], [p.text for p in upstream.params]),
    ):
        if len(mine) != len(theirs):
            found.append(f"takes {len(theirs)} {what}s ({', '.join(theirs) or 'none'}), not {len(mine)}")
            continue
        for index, (ours, upstreams) in enumerate(zip(mine, theirs, strict=True), start=1):
            if not _same(ours, upstreams):
                found.append(f"{what} {index} is `{upstreams}`, not `{ours}`")
    if spec.constexpr != upstream.constexpr:
        found.append("is constexpr" if upstream.constexpr else "is not constexpr")
    if spec.const != upstream.const:
        found.append("is a const member" if upstream.const else "is no const member")
    return found


def _similarity(spec: Signature, upstream: Signature) -> tuple[int, ...]:
    """How alike two forms of a function are: which upstream form a spec form meant."""
    same_params = sum(1 for a, b in zip(spec.params, upstream.params, strict=False) if a.type.text == b.type.text)
    same_names = sum(1 for a, b in zip(spec.params, upstream.params, strict=False) if a.name == b.name)
    return (len(spec.params) == len(upstream.params), same_params + same_names, len(spec.template) == len(upstream.template))


def expressible(signature: Signature, known_types: Iterable[str]) -> bool:
    """Whether every type a declaration names is one the level declares (or C++'s own)."""
    known = set(known_types) | {t.name for t in signature.template}
    refs: list[TypeRef] = [p.type for p in signature.params]
    refs += [t.type for t in signature.template if t.type is not None]
    if signature.returns is not None:
        refs.append(signature.returns)
    return all(r.name in known for r in refs)


@dataclass(frozen=True)
class Matching:
    """The spec's forms of a function paired with the release's declarations of it: each
    pair exact or the release's form the spec's most likely means; forms either side lacks."""

    pairs: tuple[tuple[FunctionForm, Function, bool], ...]
    spec_only: tuple[FunctionForm, ...]
    upstream_only: tuple[Function, ...]


def match_forms(declared: Sequence[FunctionForm], upstream: Sequence[Function]) -> Matching:
    """Pair forms that are the same declaration first, then each remaining spec form with
    the most similar remaining release form (same arity, parameter types and names)."""
    remaining = [(f, s) for f in upstream if (s := parsed_declaration(f.declaration)) is not None]
    unreadable = [f for f in upstream if parsed_declaration(f.declaration) is None]
    pairs: list[tuple[FunctionForm, Function, bool]] = []
    pending = []
    for form in declared:
        exact = next((item for item in remaining if item[1].text == form.signature.text), None)
        if exact is None:
            pending.append(form)
            continue
        remaining.remove(exact)
        pairs.append((form, exact[0], True))
    spec_only = []
    for form in pending:
        if not remaining:
            spec_only.append(form)
            continue
        best = max(remaining, key=lambda item: _similarity(form.signature, item[1]))
        remaining.remove(best)
        pairs.append((form, best[0], False))
    order = {id(f): i for i, f in enumerate(declared)}
    pairs.sort(key=lambda p: order[id(p[0])])
    return Matching(tuple(pairs), tuple(spec_only), tuple(f for f, _ in remaining) + tuple(unreadable))


class _LevelCheck:
    def __init__(self, level: ApiLevel, api: ReleaseApi, release: str) -> None:
        self.level = level
        self.api = api
        self.release = release  # "ttnn 0.81.1", as messages name it
        self.found: list[Disagreement] = []
        self.known_types = BUILTIN_TYPES | {t.name for t in level.types}

    def report(self, mark: Mark, message: str) -> None:
        self.found.append(Disagreement(mark, message))

    def run(self) -> list[Disagreement]:
        self.roots()
        forms: dict[tuple[str, KernelKind, str], list[FunctionForm]] = {}
        for header in self.level.headers:
            kind = self.api.kind(header.kernel)
            if header.path not in kind.headers:
                where = sorted({f.header for form in header.forms for f in kind.overloads(form.name)})
                hint = f"; its functions are declared in {', '.join(where)}" if where else ""
                self.report(header.mark, f"{self.release} has no {header.kernel.value} header {header.path}{hint}")
            for form in header.forms:
                forms.setdefault((form.name, header.kernel, header.path), []).append(form)
        for (name, kernel, path), declared in forms.items():
            self.function(name, self.api.kind(kernel), path, declared)
        for name, removal in self.level.removed:
            for kernel in KernelKind:
                present = self.api.kind(kernel).overloads(name)
                if present:
                    self.report(removal.mark, f"{name!r} is listed as removed, but {self.release} declares it ({present[0].header}:{present[0].line})")
                    break
        for kind_decl in self.level.types:
            self.type(kind_decl)
        self.defines()
        return self.found

    # ------------------------------------------------------------------------ headers

    def roots(self) -> None:
        for kernel, roots in self.level.header_roots:
            headers = self.api.kind(kernel).headers
            for root in roots:
                if not any(h.startswith(root) if root.endswith("/") else h == root for h in headers):
                    mark = self.level.mark  # header roots carry no mark of their own: the level's
                    self.report(mark, f"header_roots.{kernel.value}: {self.release} has no {kernel.value} headers under {root!r}; its headers: {_summary(headers)}")

    # ---------------------------------------------------------------------- functions

    def function(self, name: str, kind: KindApi, path: str, declared: Sequence[FunctionForm]) -> None:
        namespace = declared[0].namespace
        everywhere = [f for f in kind.overloads(name) if f.namespace == namespace]
        if not everywhere:
            other = [f for f in kind.overloads(name)]
            if other:
                where = ", ".join(sorted({f"{f.header} (namespace {f.namespace or 'global'})" for f in other}))
                self.report(declared[0].mark, f"{self.release} declares {name!r} in another namespace than {namespace or 'the global one'}: {where}")
            else:
                elsewhere = self.api.kind(KernelKind.DATAFLOW if kind.kind is KernelKind.COMPUTE else KernelKind.COMPUTE).overloads(name)
                hint = f" (only for {elsewhere[0].header})" if elsewhere else ""
                for form in declared:
                    self.report(form.mark, f"{self.release} declares no {name!r} for {kind.kind.value} kernels{hint}: remove it from this level (and list it under `removed` with what replaces it)")
            return
        upstream = [f for f in everywhere if f.header == path]
        if not upstream:
            headers = ", ".join(sorted({f.header for f in everywhere}))
            self.report(declared[0].mark, f"{self.release} declares {name!r} in {headers}, not in {path}")
            return
        matched = match_forms(declared, upstream)
        for form, function, exact in matched.pairs:
            if not exact:
                theirs = parsed_declaration(function.declaration)
                assert theirs is not None
                differences = signature_differences(form.signature, theirs)
                self.report(form.mark, f"{name!r} differs from {self.release} ({function.header}:{function.line}): {'; '.join(differences)}; upstream: {function.declaration}")
            self.deprecation(form, function)
        for form in matched.spec_only:
            shapes = "; ".join(f.declaration for f in upstream)
            self.report(form.mark, f"{self.release} has no such form of {name!r}; its forms in {path}: {shapes}")
        for function in matched.upstream_only:
            signature = parsed_declaration(function.declaration)
            if signature is not None and expressible(signature, self.known_types):
                self.report(
                    declared[0].mark,
                    f"{self.release} also declares this form of {name!r} ({function.header}:{function.line}), which the spec lacks: {function.declaration}",
                )

    def deprecation(self, form: FunctionForm, upstream: Function) -> None:
        mine = form.deprecated
        if upstream.deprecated is None:
            if mine is not None:
                self.report(form.mark, f"{form.name!r} (this form) is not deprecated in {self.release}")
            return
        if mine is None:
            said = f": {upstream.deprecated!r}" if upstream.deprecated else ""
            self.report(form.mark, f"{form.name!r} (this form) is deprecated in {self.release}{said}")
        elif upstream.deprecated and (not mine.quoted or mine.message != upstream.deprecated):
            self.report(form.mark, f"{form.name!r} (this form) is deprecated in {self.release} with the message {upstream.deprecated!r}; the spec says {mine.message!r} ({'quoted' if mine.quoted else 'a summary'})")

    # -------------------------------------------------------------------------- types

    def type(self, declared: TypeDecl) -> None:
        enums = [e for kind in (self.api.compute, self.api.dataflow) for e in kind.enum(declared.name)]
        classes = [c for kind in (self.api.compute, self.api.dataflow) for c in kind.class_(declared.name)]
        if declared.enumerators is not None:
            if not enums:
                self.report(declared.mark, f"{self.release} declares no enumeration {declared.name}")
                return
            self.enum(declared, closest_enum(declared, enums))
            return
        if not enums and not classes:
            self.report(declared.mark, f"{self.release} declares no type {declared.name}")
            return
        if not classes:
            if declared.template or declared.constructors or declared.members or declared.fields:
                self.report(declared.mark, f"{declared.name} is an enumeration in {self.release}, not a class")
            return
        upstream = classes[0]
        mine_template = ", ".join(t.text for t in declared.template) or None
        theirs_template = _canonical_template(upstream.template)
        if not _same(mine_template, theirs_template):
            shown = f"template <{theirs_template}>" if theirs_template else "no template"
            self.report(declared.mark, f"{declared.name} is {shown} in {self.release} ({upstream.header}), not {f'template <{mine_template}>' if mine_template else 'no template'}")
        self.members(declared, "constructor", declared.constructors, upstream.constructors, upstream.header)
        self.members(declared, "member function", declared.members, upstream.members, upstream.header)
        for ref, field_name in declared.fields:
            text = f"{ref.text} {field_name}"
            if not any(_same(text, f) for f in upstream.fields):
                self.report(declared.mark, f"{declared.name} has no field `{text}` in {self.release}; its fields: {', '.join(upstream.fields) or 'none'}")

    def members(self, declared: TypeDecl, what: str, mine: Sequence[Signature], theirs: Sequence[str], header: str) -> None:
        upstream = [s for s in (parsed_declaration(t) for t in theirs) if s is not None]
        for signature in mine:
            if any(signature.text == u.text for u in upstream):
                continue
            same_name = [u for u in upstream if u.name == signature.name]
            if same_name:
                best = max(same_name, key=lambda u: _similarity(signature, u))
                detail = "; ".join(signature_differences(signature, best))
                self.report(declared.mark, f"{what} {declared.name}::{signature.name} differs from {self.release} ({header}): {detail}; upstream: {best.text}")
            else:
                self.report(declared.mark, f"{self.release} declares no {what} `{signature.text}` of {declared.name} ({header})")

    def enum(self, declared: TypeDecl, upstream: Enum) -> None:
        assert declared.enumerators is not None
        where = f"{self.release} ({upstream.header})"
        if declared.scoped != upstream.scoped:
            self.report(declared.mark, f"{declared.name} is {'an enum class' if upstream.scoped else 'an unscoped enum'} in {where}; set scoped: {'true' if upstream.scoped else 'false'}")
        if (declared.underlying or None) != upstream.underlying:
            said = upstream.underlying or "not declared"
            self.report(declared.mark, f"the underlying type of {declared.name} is {said} in {where}, not {declared.underlying or 'not declared'}")
        theirs = dict(upstream.enumerators)
        mine = {e.name: e for e in declared.enumerators}
        missing = [n for n in theirs if n not in mine]
        extra = [n for n in mine if n not in theirs]
        if missing:
            self.report(declared.mark, f"{declared.name} has {', '.join(missing)} in {where}, which the spec lacks")
        if extra:
            self.report(declared.mark, f"{declared.name} has no {', '.join(extra)} in {where}")
        for name, enumerator in mine.items():
            if name not in theirs:
                continue
            if enumerator.value is None:
                self.report(declared.mark, f"{declared.name}::{name} is {theirs[name]} in {where}; the spec gives no value")
            elif enumerator.value != theirs[name]:
                self.report(declared.mark, f"{declared.name}::{name} is {theirs[name]} in {where}, not {enumerator.value}")

    # ------------------------------------------------------------------------ defines

    def defines(self) -> None:
        for define in self.level.defines:
            variables = self.api.variables(define.name)
            if define.constexpr is not None:
                if not variables:
                    self.report(define.mark, f"{self.release} declares no constexpr variable {define.name}")
                elif not variables[0].constexpr or variables[0].type.removeprefix("const ") != define.constexpr:
                    v = variables[0]
                    self.report(define.mark, f"{define.name} is `{'constexpr ' if v.constexpr else ''}{v.type.removeprefix('const ')}` in {self.release} ({v.header}), not constexpr {define.constexpr}")
            elif variables:
                v = variables[0]
                self.report(define.mark, f"{define.name} is a variable in {self.release} ({v.header}), not a macro: write {{constexpr: {v.type.removeprefix('const ')}, meaning: ...}}")
            else:
                declared = any(define.name in kind.macros for kind in (self.api.compute, self.api.dataflow))
                if define.host and declared:
                    self.report(define.mark, f"{self.release} defines macro {define.name} itself; the host does not pass it: write it as a string (its meaning)")
                elif not define.host and not declared:
                    self.report(define.mark, f"{self.release} defines no macro {define.name}; if the host passes it per kernel, write {{host: true, meaning: ...}}")


def _canonical_template(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return ", ".join(t.text for t in template_params(text))
    except DeclarationError:
        return text


def closest_enum(declared: TypeDecl, enums: Sequence[Enum]) -> Enum:
    """The enumeration of that name sharing the most enumerators with the declared one."""
    names = {e.name for e in declared.enumerators or ()}
    return max(enums, key=lambda e: len(names & {n for n, _ in e.enumerators}))


def _summary(headers: Iterable[str]) -> str:
    roots = sorted({h.rpartition("/")[0] + "/" for h in headers})
    return ", ".join(roots[:6]) + (" ..." if len(roots) > 6 else "")


def check_level(level: ApiLevel, api: ReleaseApi, release: str) -> list[Disagreement]:
    """Every disagreement between ``level``'s spec and ``api``, the headers of its release."""
    return _LevelCheck(level, api, release).run()
