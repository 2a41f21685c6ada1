"""tt-metal's kernel API as a release declares it: its headers read with libclang.

A release's API is what a kernel compiled by tt-metal's JIT sees, so the headers are parsed
the way :mod:`ttlgen.upstream.jit` compiles a kernel: the JIT's own entry translation unit
(``trisck.cc`` for a compute kernel as TRISC0 sees it, ``brisck.cc`` for a data-movement
kernel), its per-kernel files, defines and include roots, with a "kernel" that includes every
header of the kernel API (``tt_metal/hw/inc/api/compute/**.h`` or
``api/dataflow/dataflow_api.h``). Function bodies are skipped; a header that needs SFPI or a
real device only loses bodies, never declarations.

What is read, per kind of kernel:

- every function and function template at namespace scope declared in a header under
  ``hw/inc/api/``, as the specs write a declaration (``template <...> R name(T a = d)``,
  integer types without ``std::``, a value parameter's top-level ``const`` dropped), with its
  ``[[deprecated]]`` message;
- every enumeration at namespace scope anywhere in the translation unit (the LLK's enums live
  in ``tt-llk``): scoped or not, its declared underlying type, each enumerator's value;
- every variable at namespace scope (``constexpr bool DST_ACCUM_MODE``, ``noc_index``);
- every class at namespace scope: its template parameters, constructors, member functions
  and data members.

The PyPI package ``libclang`` ships libclang.so (no clang needed); the C++ standard headers
are the host g++'s, as in the compile check. Parsing one kind of one release takes about
0.5 s; the result is kept per (release sha256, kind) for the process.
"""

from __future__ import annotations

import ast
import ctypes
import functools
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ttlgen.errors import UsageError
from ttlgen.model.cpp_declarations import DeclarationError, parse_declaration
from ttlgen.model.tt_metal_api import KernelKind
from ttlgen.upstream import jit

# Where the kernel API's headers sit in the wheel's tt_metal/ (the include root kernels name
# them from: "api/compute/reduce.h").
API_ROOT = Path("hw") / "inc"
_KERNEL_API = "api/"
# The headers each kind of kernel can include, relative to API_ROOT. Quasar's, the
# experimental 2.0 API and the compute sentinel's internals are not part of the Gen1 API.
_COMPUTE_GLOB = "api/compute/**/*.h"
_COMPUTE_SKIP = ("api/compute/experimental/", "api/compute/sentinel/", "api/compute/debug/")
_DATAFLOW_HEADERS = ("api/dataflow/dataflow_api.h",)
# The architecture whose LLK the parse instantiates: the API is declared the same way for
# every Tensix architecture the JIT models (the compile check covers both).
PARSE_ARCH = "wormhole_b0"
# The processor whose view is read: TRISC2 (pack) sees every API declaration and, unlike
# unpack, the math scalars (APPROX, MATH_FIDELITY) kernels pass as template arguments; BRISC
# (NoC 0) for data movement.
_PROCESSOR = {KernelKind.COMPUTE: jit.PACK, KernelKind.DATAFLOW: jit.BRISC}
_PROBE = "ttlgen_api_probe.cpp"


class HeaderParseError(UsageError):
    """libclang is missing or the headers cannot be read: exit code 2."""


@dataclass(frozen=True)
class Function:
    """One declaration of a function (an overload) as the release declares it."""

    name: str
    namespace: str | None  # the enclosing namespace ("ckernel"), None at global scope
    header: str  # relative to hw/inc: "api/compute/reduce.h"
    line: int
    declaration: str  # as the specs write one (cpp_declarations.parse_declaration reads it)
    deprecated: str | None  # the [[deprecated]] message ("" for one without a message)


@dataclass(frozen=True)
class Enum:
    name: str
    namespace: str | None
    header: str  # relative to tt_metal/
    line: int
    scoped: bool
    underlying: str | None  # as declared (`enum class X : uint8_t`), None when not declared
    enumerators: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Variable:
    name: str
    namespace: str | None
    header: str  # relative to tt_metal/ ("" for one of the JIT's generated files)
    type: str
    constexpr: bool


@dataclass(frozen=True)
class Class:
    name: str
    namespace: str | None
    header: str  # relative to tt_metal/
    template: str | None  # the template parameter list as the specs write it, None for no template
    constructors: tuple[str, ...]
    members: tuple[str, ...]
    fields: tuple[str, ...]  # "<type> <name>" of each non-static data member


@dataclass(frozen=True)
class KindApi:
    """What one kind of kernel sees of a release's API."""

    kind: KernelKind
    functions: tuple[Function, ...]
    enums: tuple[Enum, ...]
    variables: tuple[Variable, ...]
    classes: tuple[Class, ...]
    macros: frozenset[str]  # every macro defined when a kernel is compiled
    headers: frozenset[str]  # every kernel-API header of the kind, relative to hw/inc

    def overloads(self, name: str) -> tuple[Function, ...]:
        return self._functions.get(name, ())

    @functools.cached_property
    def _functions(self) -> dict[str, tuple[Function, ...]]:
        found: dict[str, list[Function]] = {}
        for function in self.functions:
            found.setdefault(function.name, []).append(function)
        return {name: tuple(items) for name, items in found.items()}

    def enum(self, name: str) -> list[Enum]:
        return [e for e in self.enums if e.name == name]

    def variable(self, name: str) -> list[Variable]:
        return [v for v in self.variables if v.name == name]

    def class_(self, name: str) -> list[Class]:
        return [c for c in self.classes if c.name == name]


# ----------------------------------------------------------------------------- libclang


def _cindex() -> Any:
    try:
        import clang.cindex as cindex
    except ImportError:
        raise HeaderParseError(
            "reading tt-metal's headers needs libclang (the PyPI package `libclang`): pip install 'ttlgen[upstream]'"
        ) from None
    return cindex


def _deprecation(cindex: Any, cursor: Any) -> str | None:
    """The [[deprecated]] message of a declaration ("" without one), None when not deprecated.
    The Python bindings do not wrap clang_getCursorPlatformAvailability; it gives the message."""
    if cursor.availability != cindex.AvailabilityKind.DEPRECATED:
        return None
    lib = cindex.conf.lib
    function = lib.clang_getCursorPlatformAvailability
    function.argtypes = [
        cindex.Cursor, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(cindex._CXString),
        ctypes.POINTER(ctypes.c_int), ctypes.POINTER(cindex._CXString), ctypes.c_void_p, ctypes.c_int,
    ]  # fmt: skip
    function.restype = ctypes.c_int
    always_deprecated, always_unavailable = ctypes.c_int(), ctypes.c_int()
    message, unavailable = cindex._CXString(), cindex._CXString()
    function(cursor, ctypes.byref(always_deprecated), ctypes.byref(message), ctypes.byref(always_unavailable), ctypes.byref(unavailable), None, 0)
    text = str(cindex._CXString.from_result(message) or "")
    cindex._CXString.from_result(unavailable)
    # A function template's attribute sits on the function it templates, which the call
    # above does not reach: read the attribute's string literals from the tokens.
    return text or _attribute_message([t.spelling for t in cursor.get_tokens()], "deprecated")


def _attribute_message(tokens: Sequence[str], attribute: str) -> str:
    """The string of ``[[attribute("...")]]`` among a declaration's tokens ("" without one);
    adjacent literals are concatenated as C++ does."""
    for index in range(len(tokens) - 2):
        if tokens[index] == attribute and tokens[index + 1] == "(":
            parts = []
            for token in tokens[index + 2 :]:
                if token == ")":
                    break
                if token.startswith('"'):
                    parts.append(ast.literal_eval(token))
            return "".join(parts)
    return ""


_STD = re.compile(r"\bstd::")
_SPACES = re.compile(r"\s+")
_SCOPE = re.compile(r"\s*::\s*")


def type_text(spelling: str, parameter: bool = False) -> str:
    """A type as the specs write it: ``std::`` dropped (the fixed-width integers), a value
    parameter's top-level ``const`` dropped (it is no part of the signature), references and
    pointers attached to the type."""
    text = _SPACES.sub(" ", _STD.sub("", spelling)).strip()
    text = text.replace(" &", "&").replace(" *", "*").replace("< ", "<").replace(" >", ">")
    if parameter and text.startswith("const ") and not text.endswith(("&", "*")):
        text = text[len("const ") :]
    return text


def _written(tokens: Sequence[str]) -> str:
    """A default's tokens as the specs write it: ``::`` unspaced, ``std::`` dropped."""
    return _STD.sub("", _SCOPE.sub("::", " ".join(tokens)))


def _default(cursor: Any) -> str | None:
    """The default of a parameter or template parameter: the tokens after its ``=``."""
    tokens = [t.spelling for t in cursor.get_tokens()]
    if "=" not in tokens:
        return None
    return _written(tokens[tokens.index("=") + 1 :]) or None


def _listed_defaults(tokens: Sequence[str], close: str) -> list[str | None]:
    """The default of each entry of a parameter list, from the tokens after its opening
    bracket up to the ``close`` that ends it (entries split at the commas outside brackets)."""
    defaults: list[str | None] = []
    current: list[str] = []
    depth = 0
    for token in tokens:
        if depth == 0 and token in (",", close):
            if current:
                defaults.append(_written(current[current.index("=") + 1 :]) if "=" in current else None)
            current = []
            if token == close:
                break
            continue
        depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(token, 0)
        current.append(token)
    return defaults


def _template_defaults(cursor: Any) -> list[str | None]:
    """The default of each template parameter as the declaration's tokens write it. A
    parameter's own extent ends before a default the parse could not resolve (an undefined
    host macro: ``reduce_type = REDUCE_OP`` in ttnn 0.69.0), so the list is read from the
    declaration itself."""
    tokens = [t.spelling for t in cursor.get_tokens()]
    return _listed_defaults(tokens[2:], ">") if tokens[:2] == ["template", "<"] else []


def _param_defaults(cursor: Any) -> list[str | None]:
    """The default of each function parameter as the declaration's tokens write it (the
    same fallback as :func:`_template_defaults`, for the function's parameter list)."""
    tokens = [t.spelling for t in cursor.get_tokens()]
    name = cursor.spelling.partition("<")[0]
    starts = [i for i in range(len(tokens) - 1) if tokens[i] == name and tokens[i + 1] == "("]
    return _listed_defaults(tokens[starts[0] + 2 :], ")") if starts else []


def _template_params(cindex: Any, cursor: Any) -> list[str]:
    kinds = cindex.CursorKind
    params: list[str] = []
    written = _template_defaults(cursor)
    for child in cursor.get_children():
        if child.kind == kinds.TEMPLATE_TYPE_PARAMETER:
            head = f"typename {child.spelling}"
        elif child.kind == kinds.TEMPLATE_NON_TYPE_PARAMETER:
            head = f"{type_text(child.type.spelling)} {child.spelling}"
        elif child.kind == kinds.TEMPLATE_TEMPLATE_PARAMETER:
            head = f"template <...> class {child.spelling}"
        else:
            continue
        default = _default(child)
        if default is None and len(params) < len(written):
            default = written[len(params)]
        params.append(head if default is None else f"{head} = {default}")
    return params


def _is_constexpr(cursor: Any, name: str) -> bool:
    """Whether the declaration says `constexpr` before its name (after its template list)."""
    depth = 0
    for token in (t.spelling for t in cursor.get_tokens()):
        if token == name and depth == 0:
            return False
        if token == "constexpr" and depth == 0:
            return True
        depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(token, 0)
    return False


def _declaration(cindex: Any, cursor: Any, constructor: bool = False) -> str:
    kinds = cindex.CursorKind
    template = _template_params(cindex, cursor)
    params: list[str] = []
    written = _param_defaults(cursor)
    for child in cursor.get_children():
        if child.kind != kinds.PARM_DECL:
            continue
        text = type_text(child.type.spelling, parameter=True)
        if child.spelling:
            text += f" {child.spelling}"
        default = _default(child)
        if default is None and len(params) < len(written):
            default = written[len(params)]
        params.append(text if default is None else f"{text} = {default}")
    head = f"template <{', '.join(template)}> " if template else ""
    returns = "" if constructor else f"{type_text(cursor.result_type.spelling)} "
    const = " const" if cursor.kind == kinds.CXX_METHOD and cursor.is_const_method() else ""
    name = cursor.spelling.partition("<")[0]  # a constructor of a class template: its bare name
    # `constexpr` matters to a caller: a constexpr function's result is a constant (a braced
    # initialiser accepts it without narrowing, a constexpr variable holds it).
    constexpr = "constexpr " if _is_constexpr(cursor, name) else ""
    text = f"{head}{constexpr}{returns}{name}({', '.join(params)}){const}"
    try:
        # The specs' own spelling of the declaration (spacing, joined tokens).
        return parse_declaration(text).text
    except DeclarationError:
        return text  # beyond what the specs declare (a pack, a SFINAE parameter): kept as read


def _unqualified(text: str, namespace: str | None) -> str:
    """A declaration in a namespace names that namespace's members without it, as kernels
    (``using namespace ckernel``) and the specs do: ``ckernel::DstRoundingMode`` is ``DstRoundingMode``."""
    if namespace is None:
        return text
    for scope in reversed(namespace.split("::")):
        text = re.sub(rf"(?<![\w:]){re.escape(scope)}::", "", text)
    return text


def _relative(path: str, root: str) -> str | None:
    """``path`` relative to directory ``root`` (which ends in a separator), or None."""
    return path[len(root) :] if path.startswith(root) else None


class _Reader:
    def __init__(self, cindex: Any, metal: Path, names: frozenset[str] | None) -> None:
        self.cindex = cindex
        self.metal = f"{metal}/"  # the wheel's tt_metal/
        self.api = f"{metal / API_ROOT}/"
        self.names = names
        self.functions: dict[tuple[str, str, str | None], Function] = {}
        self.enums: dict[tuple[str, str | None], Enum] = {}
        self.variables: dict[tuple[str, str | None], Variable] = {}
        self.classes: dict[tuple[str, str | None], Class] = {}
        self.macros: set[str] = set()

    def walk(self, cursor: Any, namespace: str | None) -> None:
        kinds = self.cindex.CursorKind
        for child in cursor.get_children():
            kind = child.kind
            if kind == kinds.MACRO_DEFINITION:
                self.macros.add(child.spelling)
            elif kind == kinds.NAMESPACE:
                inner = child.spelling if namespace is None else f"{namespace}::{child.spelling}"
                self.walk(child, inner)
            elif kind == kinds.LINKAGE_SPEC:
                self.walk(child, namespace)
            elif kind in (kinds.FUNCTION_DECL, kinds.FUNCTION_TEMPLATE):
                if self.names is None or child.spelling in self.names:
                    self.function(child, namespace)
            elif kind == kinds.ENUM_DECL and child.is_definition():
                self.enum(child, namespace)
            elif kind == kinds.VAR_DECL:
                self.variable(child, namespace)
            elif kind in (kinds.STRUCT_DECL, kinds.CLASS_DECL, kinds.CLASS_TEMPLATE) and child.is_definition():
                self.class_(child, namespace)

    def where(self, cursor: Any) -> tuple[str, int] | None:
        location = cursor.location
        if location.file is None:
            return None
        relative = _relative(location.file.name, self.metal)
        # Outside the wheel: one of the JIT's generated files (chlkc_descriptors.h).
        return (relative if relative is not None else Path(location.file.name).name, location.line)

    def function(self, cursor: Any, namespace: str | None) -> None:
        location = cursor.location
        if location.file is None:
            return
        header = _relative(location.file.name, self.api)
        if header is None or not header.startswith(_KERNEL_API):
            return
        declaration = _unqualified(_declaration(self.cindex, cursor), namespace)
        key = (header, declaration, namespace)
        deprecated = _deprecation(self.cindex, cursor)
        found = self.functions.get(key)
        if found is None or (found.deprecated is None and deprecated is not None):
            self.functions[key] = Function(cursor.spelling, namespace, header, location.line, declaration, deprecated)

    def enum(self, cursor: Any, namespace: str | None) -> None:
        where = self.where(cursor)
        if where is None or not cursor.spelling:
            return
        tokens = [t.spelling for t in cursor.get_tokens()]
        brace = tokens.index("{") if "{" in tokens else len(tokens)
        underlying = type_text(cursor.enum_type.spelling) if ":" in tokens[:brace] else None
        # libclang reads a value as signed unless the underlying type is spelled as a builtin
        # unsigned one; a uint8_t's 0xFF is 255, not -1.
        canonical = cursor.enum_type.get_canonical()
        bits = 8 * canonical.get_size()
        unsigned = canonical.kind.spelling.startswith(("U", "Char_U")) or canonical.kind.spelling == "Bool"
        enumerators = tuple(
            (c.spelling, int(c.enum_value) % (1 << bits) if unsigned else int(c.enum_value))
            for c in cursor.get_children()
            if c.kind == self.cindex.CursorKind.ENUM_CONSTANT_DECL
        )
        self.enums.setdefault(
            (cursor.spelling, namespace), Enum(cursor.spelling, namespace, where[0], where[1], cursor.is_scoped_enum(), underlying, enumerators)
        )

    def variable(self, cursor: Any, namespace: str | None) -> None:
        where = self.where(cursor)
        if where is None:
            return
        tokens = [t.spelling for t in cursor.get_tokens()]
        constexpr = "constexpr" in tokens[: tokens.index(cursor.spelling)] if cursor.spelling in tokens else False
        self.variables.setdefault(
            (cursor.spelling, namespace), Variable(cursor.spelling, namespace, where[0], type_text(cursor.type.spelling), constexpr)
        )

    def class_(self, cursor: Any, namespace: str | None) -> None:
        where = self.where(cursor)
        if where is None or not cursor.spelling:
            return
        kinds = self.cindex.CursorKind
        scope = cursor.spelling if namespace is None else f"{namespace}::{cursor.spelling}"
        if self.names is not None and cursor.spelling not in self.names:
            # Only its static constants (p_sfpu::kCONST_1_FP16B, a default's value).
            for child in cursor.get_children():
                if child.kind == kinds.VAR_DECL:
                    self.variable(child, scope)
            return
        template = _template_params(self.cindex, cursor) if cursor.kind == kinds.CLASS_TEMPLATE else None
        constructors, members, fields = [], [], []
        for child in cursor.get_children():
            if child.access_specifier == self.cindex.AccessSpecifier.PRIVATE:
                continue
            if child.kind == kinds.CONSTRUCTOR or (child.kind == kinds.FUNCTION_TEMPLATE and child.spelling.partition("<")[0] == cursor.spelling):
                constructors.append(_declaration(self.cindex, child, constructor=True))
            elif child.kind in (kinds.CXX_METHOD, kinds.FUNCTION_TEMPLATE):
                members.append(_declaration(self.cindex, child))
            elif child.kind == kinds.FIELD_DECL:
                fields.append(f"{type_text(child.type.spelling)} {child.spelling}")
            elif child.kind == kinds.VAR_DECL:  # a static data member: p_sfpu::kCONST_1_FP16B
                self.variable(child, scope)
        self.classes.setdefault(
            (cursor.spelling, namespace),
            Class(cursor.spelling, namespace, where[0], None if template is None else ", ".join(template), tuple(constructors), tuple(members), tuple(fields)),
        )


def api_headers(metal: Path, kind: KernelKind) -> list[str]:
    """Every kernel-API header of ``kind`` in the release, relative to hw/inc."""
    root = metal / API_ROOT
    if kind is KernelKind.DATAFLOW:
        return [h for h in _DATAFLOW_HEADERS if (root / h).is_file()]
    found = (p.relative_to(root).as_posix() for p in root.glob(_COMPUTE_GLOB))
    return sorted(h for h in found if not h.startswith(_COMPUTE_SKIP))


def _arguments(root: Path, directory: Path, kind: KernelKind) -> list[str]:
    """The compile check's command line for ``kind`` (:func:`jit.command`), as libclang takes it."""
    cxx = jit.compiler()
    command = jit.command(cxx, root, directory, _PROCESSOR[kind], jit.ARCHITECTURES[PARSE_ARCH], ())
    dropped = {"-fsyntax-only", "-fmax-errors=10", "-fno-diagnostics-show-caret", "-fdiagnostics-color=never"}
    args = [a for a in command[1:-1] if a not in dropped]
    # g++'s own headers: libclang ships no C++ library, the host compiler's is the one the
    # compile check uses too.
    args += [f"-isystem{d}" for d in jit.system_dirs(cxx, True)]
    return ["-x", "c++", *args]


def read_kind(root: Path, kind: KernelKind, names: frozenset[str] | None = None) -> KindApi:
    """Parse what ``kind`` of kernel sees of the release whose ``tt_metal/`` is under ``root``:
    of functions and classes only those named in ``names`` (all when None: rendering every
    declaration of the API takes seconds, the few a spec names milliseconds)."""
    cindex = _cindex()
    metal = root / "tt_metal"
    headers = api_headers(metal, kind)
    if not headers:
        raise HeaderParseError(f"{metal / API_ROOT}: no {kind.value} kernel-API headers (is this a tt-metal tree?)")
    processor = _PROCESSOR[kind]
    with tempfile.TemporaryDirectory(prefix="ttlgen-headers-") as scratch:
        directory = Path(scratch)
        probe = directory / _PROBE
        probe.write_text("".join(f'#include "{h}"\n' for h in headers), encoding="utf-8")
        # The JIT's defaults: HiFi4, no approximation, a 16-bit half-synced DST.
        scalars = jit.Scalars("HiFi4", False, False, False)
        jit.write_files(directory, processor, [], [probe], jit.ARCHITECTURES[PARSE_ARCH], None, scalars)
        entry = metal / "hw" / "firmware" / "src" / "tt-1xx" / processor.entry
        try:
            index = cindex.Index.create()
            # The detailed record lists the macros (a define the spec names may be one).
            unit_options = cindex.TranslationUnit
            options = unit_options.PARSE_SKIP_FUNCTION_BODIES | unit_options.PARSE_INCOMPLETE | unit_options.PARSE_DETAILED_PROCESSING_RECORD
            unit = index.parse(str(entry), args=_arguments(root, directory, kind), options=options)
        except cindex.TranslationUnitLoadError as exc:
            raise HeaderParseError(f"libclang could not parse {entry}: {exc}") from None
        except cindex.LibclangError as exc:
            raise HeaderParseError(f"libclang could not be loaded: {exc}") from None
        reader = _Reader(cindex, metal, names)
        reader.walk(unit.cursor, None)
    return KindApi(
        kind,
        tuple(sorted(reader.functions.values(), key=lambda f: (f.header, f.line, f.declaration))),
        tuple(reader.enums.values()),
        tuple(reader.variables.values()),
        tuple(reader.classes.values()),
        frozenset(reader.macros),
        frozenset(headers),
    )


@dataclass(frozen=True)
class ReleaseApi:
    """A release's kernel API, per kind of kernel."""

    sha256: str
    compute: KindApi
    dataflow: KindApi

    def kind(self, kind: KernelKind) -> KindApi:
        return self.compute if kind is KernelKind.COMPUTE else self.dataflow

    def variables(self, name: str) -> list[Variable]:
        """The variables of either kind a define's name (``leaf`` or ``scope::leaf``, the
        scope ending the variable's namespace) may be."""
        scope, _, leaf = name.rpartition("::")
        return [v for kind in (self.compute, self.dataflow) for v in kind.variable(leaf) if (v.namespace or "").endswith(scope)]


@functools.cache
def read_release(root: Path, sha256: str, names: frozenset[str] | None = None) -> ReleaseApi:
    """The API of the release extracted under ``root`` (the directory holding ``tt_metal/``),
    parsed once per process per release and set of names."""
    return ReleaseApi(sha256, read_kind(root, KernelKind.COMPUTE, names), read_kind(root, KernelKind.DATAFLOW, names))

