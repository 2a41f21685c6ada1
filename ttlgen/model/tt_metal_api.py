"""The tt-metal kernel API per level (``ttlgen.tt_metal_api/v1``) and its emulation
(``ttlgen.tt_metal_emulation/v1``).

An API level is one file: the directories and files its headers sit under, the headers
kernels include, per header the functions it declares as C++ signatures (overloads are
separate forms; a form may be deprecated, with upstream's message or ttlgen's summary of
the change, and says which hardware state it configures and, for a data format, from which
parameter's CB), the types and defines the signatures use, the entry point of compute and
dataflow kernels, which functions start a compute kernel (the init protocol), and the
functions the level removed. Kernels are checked against their target's level
(:meth:`ApiLevel.check_call`), take their includes from it (:meth:`ApiLevel.header_of`)
and print their entry point from it.

The emulation file binds each API function to a routine of the host emulator's glue
(`ttlgen/device/include/ttlemu/`): the generated emulator headers declare a level's forms
with these bodies, and ``computes`` names the math a call performs, which is also the
float64 reference ``ttlgen run`` compares with. Every declared form of a bound function
must have a binding that applies to it, every opaque type and define of a level must be
provided (but a define the host passes, whose value is each kernel's: an op's spelling
states it), so a generated header never fails to compile for want of data.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ttlgen import release_headers
from ttlgen.errors import DiagnosticSink, Entity, Mark, did_you_mean
from ttlgen.model import emulator_glue, math_spec
from ttlgen.model.call_forms import (
    ArgKind,
    CallArg,
    CallForm,
    FormError,
    Literal,
    parse_call,
    parse_value,
)
from ttlgen.model.cpp_declarations import (
    BUILTIN_TYPES,
    DeclarationError,
    Param,
    Signature,
    TemplateParam,
    TypeRef,
    identifiers,
    parse_declaration,
    template_params,
)
from ttlgen.spec.document import SpecDocument

KIND = "ttlgen.tt_metal_api"
EMULATION_KIND = "ttlgen.tt_metal_emulation"

# Names any default argument may use besides the ones in scope.
_LITERALS = frozenset(["true", "false", "nullptr"])
# The compiler's own functions (``call_line = __builtin_LINE()``): in scope everywhere.
_BUILTIN_PREFIX = "__builtin_"
# A binding argument that passes the API function's own name (for the emulator's messages).
FUNCTION_NAME = "__func__"
# A binding argument that stands for the math the call computes.
MATH_FUNCTION = "function"


# The emulation spec's `math:` tables: which routine takes the math functions of each arity.
# What a binding's routine passes as `function` is read through them, so a wrong table makes
# every such check of every binding a consequence of it.
MATH_TABLES = Entity("emulator math tables")


def level_entity(level: str) -> Entity:
    """An API level's declarations, which checks of calls against the level rely on."""
    return Entity("tt-metal API level", level)


class KernelKind(enum.Enum):
    COMPUTE = "compute"
    DATAFLOW = "dataflow"


class State(enum.Enum):
    """Hardware state an init or reconfiguration sets (what a later call relies on)."""

    HARDWARE = "hardware"  # everything: unpacker, math, packer, data formats
    FPU = "fpu"  # the unpacker and FPU math set up for one op
    SFPU = "sfpu"  # the SFPU set up for one op
    SRCA_FORMAT = "srca_format"
    SRCB_FORMAT = "srcb_format"
    PACK_FORMAT = "pack_format"
    PACKER_L1_ACC = "packer_l1_acc"


# The registers a call loads with the data format of a CB: the two unpacker source
# registers and the packer.
FORMAT_STATES = (State.SRCA_FORMAT, State.SRCB_FORMAT, State.PACK_FORMAT)


@dataclass(frozen=True)
class Deprecation:
    """Why a form is deprecated, and where that comes from."""

    message: str
    source: str
    quoted: bool  # upstream's own words (as the reference quotes them); else ttlgen's summary of `source`

    @property
    def text(self) -> str:
        """The message with where it comes from, for diagnostics and ``[[deprecated]]``."""
        if self.quoted:
            return f"{self.message} ({self.source})"
        return f"{self.message} (ttlgen's summary of {self.source})"


@dataclass(frozen=True)
class SourceSwap:
    """A template argument that swaps the CBs SrcA and SrcB are loaded from (a source order)."""

    parameter: str  # a template parameter of the form
    value: str  # the argument, as a call spells it, that swaps them
    mark: Mark = field(compare=False)


def changed_states(configures: frozenset[State]) -> frozenset[State]:
    """The states a call that configures these changes: hardware stands for all of them."""
    return frozenset(State) if State.HARDWARE in configures else configures


@dataclass(frozen=True)
class FunctionForm:
    """One declared overload of an API function, in the header that declares it."""

    signature: Signature
    header: str
    kernel: KernelKind
    namespace: str | None
    configures: frozenset[State]
    deprecated: Deprecation | None
    # Each data-format register the call loads, and the parameter whose CB it is loaded from.
    formats: tuple[tuple[State, str], ...]
    swap: SourceSwap | None
    mark: Mark = field(compare=False)
    # A contract the compile cannot see: the data format each source register must hold when
    # the call runs (the CB of that parameter), loaded by the caller beforehand ...
    expects: tuple[tuple[State, str], ...] = ()
    # ... with SrcA's and SrcB's swapped when each of these template parameters is one of
    # its values (reduce.h: a REDUCE_ROW SUM or AVG reads the scaler through SrcA).
    expects_swapped_when: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def name(self) -> str:
        return self.signature.name

    def expected(self, template_args: Sequence[str | None]) -> tuple[tuple[State, int], ...] | None:
        """For a call with these template arguments (None: computed): each register the call
        expects loaded and the index of the argument naming its CB; None when a computed
        argument leaves the swap unknown. Empty when the form states no expectation."""
        return self._registers(self.expects, self.expects_swapped_when, template_args)

    def sets(self) -> frozenset[State]:
        """The states the call changes (hardware stands for all of them)."""
        return changed_states(self.configures)

    def loads(self, template_args: Sequence[str | None]) -> tuple[tuple[State, int], ...] | None:
        """For a call with these template arguments (each one's text, None for a computed
        one): each data-format register it loads and the index of the argument naming the CB
        it is loaded from. None when a computed argument leaves the source order unknown."""
        swap_when = () if self.swap is None else ((self.swap.parameter, (self.swap.value,)),)
        return self._registers(self.formats, swap_when, template_args)

    def _registers(
        self, named: Sequence[tuple[State, str]], swap_when: Sequence[tuple[str, Sequence[str]]], template_args: Sequence[str | None]
    ) -> tuple[tuple[State, int], ...] | None:
        """Each register of ``named`` and the index of the argument of the parameter named
        with it, SrcA's and SrcB's swapped when each template parameter of ``swap_when`` is
        one of its values; None when a computed argument leaves the swap unknown."""
        index = {p.name: i for i, p in enumerate(self.signature.params)}
        found = {state: index[param] for state, param in named}
        template = self.signature.template
        swapped = bool(swap_when)
        for name, values in swap_when:
            at = next(i for i, t in enumerate(template) if t.name == name)
            text = template_args[at] if at < len(template_args) else template[at].default
            if text is None:
                return None
            swapped = swapped and text in values
        if swapped and State.SRCA_FORMAT in found and State.SRCB_FORMAT in found:
            found[State.SRCA_FORMAT], found[State.SRCB_FORMAT] = found[State.SRCB_FORMAT], found[State.SRCA_FORMAT]
        return tuple((state, found[state]) for state in FORMAT_STATES if state in found)


@dataclass(frozen=True)
class Header:
    """An upstream header and the function forms it declares."""

    path: str
    kernel: KernelKind
    namespace: str | None
    forms: tuple[FunctionForm, ...]
    mark: Mark = field(compare=False)


@dataclass(frozen=True)
class Enumerator:
    """An enumerator of an API enum."""

    name: str
    value: int | None  # None: not re-read upstream (the position is used)


# The values an enumeration's underlying type holds (`int` when none is given).
_UNDERLYING_RANGE = {
    "int": (-(2**31), 2**31 - 1),
    "int8_t": (-(2**7), 2**7 - 1),
    "uint8_t": (0, 2**8 - 1),
    "int16_t": (-(2**15), 2**15 - 1),
    "uint16_t": (0, 2**16 - 1),
    "int32_t": (-(2**31), 2**31 - 1),
    "uint32_t": (0, 2**32 - 1),
    "int64_t": (-(2**63), 2**63 - 1),
    "uint64_t": (0, 2**64 - 1),
}


@dataclass(frozen=True)
class TypeDecl:
    """An enumeration, or a class with its template parameters, constructors, members, fields."""

    name: str
    enumerators: tuple[Enumerator, ...] | None
    scoped: bool
    underlying: str | None
    template: tuple[TemplateParam, ...]
    constructors: tuple[Signature, ...]
    members: tuple[Signature, ...]
    fields: tuple[tuple[TypeRef, str], ...]
    mark: Mark = field(compare=False)

    @property
    def is_enum(self) -> bool:
        return self.enumerators is not None

    def has_enumerator(self, name: str) -> bool:
        return name in self._enumerator_names

    @functools.cached_property
    def _enumerator_names(self) -> frozenset[str]:
        # Every template argument, argument and default naming an enumerator asks.
        return frozenset(e.name for e in self.enumerators or ())


# The interpreter and platform the pinned wheels are fetched for (`ttlgen upstream fetch`
# runs `pip download --python-version ... --platform ...`): the ttnn wheels are built for
# CPython 3.12 on manylinux_2_34 x86_64 only. A pin names a wheel pip would pick for them.
WHEEL_PYTHON = "3.12"
WHEEL_PLATFORM = "manylinux_2_34_x86_64"
_PYTHON_TAGS = frozenset({"cp312", "py312", "py3"})
_ABI_TAGS = frozenset({"cp312", "abi3", "none"})
# The legacy manylinux names and the glibc each stands for (PEP 600).
_LEGACY_MANYLINUX = {"manylinux1_x86_64": 5, "manylinux2010_x86_64": 12, "manylinux2014_x86_64": 17}
_MANYLINUX = re.compile(r"manylinux_2_(\d+)_x86_64\Z")


@dataclass(frozen=True)
class Release:
    """The upstream release a level follows: the wheel that ships its kernel headers."""

    package: str
    version: str
    wheel: str  # the exact file name pip downloads
    sha256: str
    mark: Mark = field(compare=False)

    @property
    def name(self) -> str:
        """``ttnn 0.81.1``, as messages name the release."""
        return f"{self.package} {self.version}"


def normalized_distribution(name: str) -> str:
    """A distribution name as wheel file names and the package index compare it (PEP 503/427)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def wheel_problem(package: str, version: str, wheel: str) -> str | None:
    """Why ``wheel`` is not the file pip downloads for ``package==version`` for CPython
    3.12 on manylinux_2_34 x86_64, or None."""
    parts = wheel.removesuffix(".whl").split("-")
    if len(parts) not in (5, 6):
        return f"{wheel!r} is no wheel file name (<name>-<version>[-<build>]-<python>-<abi>-<platform>.whl)"
    name, found_version, python, abi, platform = parts[0], parts[1], parts[-3], parts[-2], parts[-1]
    if normalized_distribution(name) != normalized_distribution(package) or found_version != version:
        return f"{wheel!r} is a wheel of {name} {found_version}, not of the pinned {package} {version}"
    if not _PYTHON_TAGS & set(python.split(".")) or not _ABI_TAGS & set(abi.split(".")):
        return f"{wheel!r} is not built for CPython {WHEEL_PYTHON} ({python}-{abi}); the pinned wheels are fetched for {WHEEL_PYTHON} (cp312)"
    if not any(_platform_fits(tag) for tag in platform.split(".")):
        return f"{wheel!r} does not run on {WHEEL_PLATFORM} ({platform}); the pinned wheels are fetched for {WHEEL_PLATFORM}"
    return None


def _platform_fits(tag: str) -> bool:
    if tag == "any":
        return True
    glibc = _LEGACY_MANYLINUX.get(tag)
    if glibc is None and (found := _MANYLINUX.match(tag)) is not None:
        glibc = int(found.group(1))
    return glibc is not None and glibc <= int(WHEEL_PLATFORM.split("_")[2])


@dataclass(frozen=True)
class Define:
    """A name signatures and kernels may use that the host, the JIT or the firmware gives: a
    macro, or (``constexpr`` set to its type) a ``constexpr`` variable, as upstream declares
    it (``constexpr bool DST_ACCUM_MODE`` in the JIT's chlkc_descriptors.h)."""

    name: str  # may be qualified: p_sfpu::kCONST_1_FP16B
    meaning: str
    constexpr: str | None  # the variable's type; None for a macro
    mark: Mark = field(compare=False)
    # A macro no header declares, which the host passes per kernel (a kernel descriptor's
    # defines, written by the JIT into defines_generated.h): an op's spelling states its value.
    host: bool = False


@dataclass(frozen=True)
class EntryPoint:
    """``void function()``, or ``namespace N { void M { ... } }`` with both names macros."""

    function: str
    namespace_macro: str | None = None
    mark: Mark | None = field(default=None, compare=False)  # where the level states it

    @property
    def uses_macros(self) -> bool:
        return self.namespace_macro is not None


@dataclass(frozen=True)
class Removal:
    """A function removed upstream, by which change, and what replaces it."""

    by: str
    use: str
    mark: Mark = field(compare=False)


@dataclass(frozen=True)
class CallProblem:
    """Why a call does not fit a level: what is wrong, at the call's spelling."""

    message: str
    deprecated: Deprecation | None = None  # set when the only problem is a deprecated form


@dataclass(frozen=True)
class ApiLevel:
    """One tt-metal kernel API level: entry points, start-up, headers, types, removals."""

    level: str
    compute_entry: EntryPoint
    dataflow_entry: EntryPoint
    startup: tuple[str, ...]
    header_roots: tuple[tuple[KernelKind, tuple[str, ...]], ...]  # directories (ending in /) and files
    defines: tuple[Define, ...]
    types: tuple[TypeDecl, ...]
    headers: tuple[Header, ...]
    removed: tuple[tuple[str, Removal], ...]
    source: str
    mark: Mark = field(compare=False)
    # The upstream release the level follows (None in a spec tree that pins none).
    release: Release | None = None

    def entry(self, kernel: KernelKind) -> EntryPoint:
        return self.compute_entry if kernel is KernelKind.COMPUTE else self.dataflow_entry

    def all_forms(self) -> Iterator[FunctionForm]:
        for header in self.headers:
            yield from header.forms

    def forms(self, name: str, kernel: KernelKind) -> tuple[FunctionForm, ...]:
        return self._by_name.get((name, kernel), ())

    @functools.cached_property
    def _by_name(self) -> dict[tuple[str, KernelKind], tuple[FunctionForm, ...]]:
        # Every call of every kernel is checked against its level: look forms up, not scan.
        found: dict[tuple[str, KernelKind], list[FunctionForm]] = {}
        for form in self.all_forms():
            found.setdefault((form.name, form.kernel), []).append(form)
        return {key: tuple(forms) for key, forms in found.items()}

    # A compute kernel's calls are asked what they configure and load over and over (in its
    # loops, by each pass): most are of functions that do neither, which these tell without
    # binding a call to its form.
    @functools.cached_property
    def configuring_functions(self) -> dict[KernelKind, frozenset[str]]:
        """Per kind of kernel, the functions with a form that configures some state."""
        return {kernel: frozenset(f.name for f in self.all_forms() if f.kernel is kernel and f.configures) for kernel in KernelKind}

    @functools.cached_property
    def loading_functions(self) -> dict[KernelKind, frozenset[str]]:
        """Per kind of kernel, the functions with a form that loads a data format (``formats``)."""
        return {kernel: frozenset(f.name for f in self.all_forms() if f.kernel is kernel and f.formats) for kernel in KernelKind}

    @functools.cached_property
    def expecting_functions(self) -> dict[KernelKind, frozenset[str]]:
        """Per kind of kernel, the functions with a form that expects the source registers to
        hold some CB's format (``expects``)."""
        return {kernel: frozenset(f.name for f in self.all_forms() if f.kernel is kernel and f.expects) for kernel in KernelKind}

    def type(self, name: str) -> TypeDecl | None:
        return self._types_by_name.get(name)

    @functools.cached_property
    def _types_by_name(self) -> dict[str, TypeDecl]:
        # Checking a call's template arguments and a declaration's type looks types up.
        return {kind.name: kind for kind in self.types}

    def header_of(self, name: str, kernel: KernelKind) -> str | None:
        """The header that declares function ``name`` for ``kernel`` (the include a call needs)."""
        forms = self.forms(name, kernel)
        return forms[0].header if forms else None

    def removal(self, name: str) -> Removal | None:
        return next((r for n, r in self.removed if n == name), None)

    def header(self, path: str) -> Header | None:
        """The header at ``path``, if the level lists one there."""
        return self._headers_by_path.get(path)

    @functools.cached_property
    def _headers_by_path(self) -> dict[str, Header]:
        # Every include of every kernel program is checked against its level.
        return {header.path: header for header in self.headers}

    def names(self) -> Iterator[str]:
        """Every function, type and entry-point name the level declares."""
        for form in self.all_forms():
            yield form.name
        for kind in self.types:
            yield kind.name
            for member in kind.members:
                yield member.name
        for entry in (self.compute_entry, self.dataflow_entry):
            yield entry.function
            if entry.namespace_macro:
                yield entry.namespace_macro

    def check_call(
        self,
        name: str,
        kernel: KernelKind,
        template_args: Sequence[str | None],
        args: int | Sequence[CallArg],
        member_of: str | None = None,
    ) -> tuple[FunctionForm | Signature | None, CallProblem | None]:
        """The form a call binds to, or the problem. ``template_args`` holds each explicit
        template argument's literal text (None for a computed value); ``args`` each function
        argument as far as the caller knows it (:data:`CallArg`), or only their number;
        ``member_of`` names the class whose member function (or, with ``name`` equal to it,
        constructor) is called."""
        typed = (None,) * args if isinstance(args, int) else tuple(args)
        key = (name, kernel, tuple(template_args), typed, member_of)
        found = self._checked.get(key)
        if found is None:
            found = self._checked[key] = self._check_call(name, kernel, template_args, typed, member_of)
        return found

    @functools.cached_property
    def _checked(self) -> dict[tuple[str, KernelKind, tuple[str | None, ...], tuple[CallArg, ...], str | None], tuple[FunctionForm | Signature | None, CallProblem | None]]:
        # A binding depends only on the call's name, kernel kind and argument shape, and the
        # plan asks for the same few dozen calls thousands of times (checks, hoisting, formats).
        return {}

    def _check_call(
        self,
        name: str,
        kernel: KernelKind,
        template_args: Sequence[str | None],
        args: tuple[CallArg, ...],
        member_of: str | None,
    ) -> tuple[FunctionForm | Signature | None, CallProblem | None]:
        if member_of is not None:
            return self._check_member(name, member_of, template_args, args)
        forms = self.forms(name, kernel)
        if not forms:
            kind = self.type(name)
            if kind is not None and not kind.is_enum:
                return self._check_member(name, name, template_args, args)
            return None, CallProblem(self._unknown(name, kernel))
        arg_count = len(args)
        fitting = [f for f in forms if self._fits(f.signature, template_args, args)]
        if not fitting:
            counted = [f for f in forms if f.signature.accepts_template_args(len(template_args)) and f.signature.accepts_args(arg_count)]
            templated = [f for f in counted if self._template_args_fit(f.signature, template_args)]
            if templated:
                return None, CallProblem(self._arg_mismatch(templated[0].signature, args, [f.signature for f in forms], forms[0].header))
            if counted:
                return None, CallProblem(self._template_mismatch(counted[0], template_args))
            shapes = "; ".join(f.signature.shape for f in forms)
            got = f"{len(template_args)} template arguments and " if template_args else ""
            return None, CallProblem(f"no form of {name!r} at API level {self.level!r} takes {got}{arg_count} arguments; declared: {shapes} ({forms[0].header})")
        current = [f for f in fitting if f.deprecated is None]
        if current:
            return current[0], None
        form = fitting[0]
        assert form.deprecated is not None
        return form, CallProblem(f"{name!r} (this form) is deprecated at API level {self.level!r}: {form.deprecated.text}", form.deprecated)

    def call_problem(
        self,
        name: str,
        kernel: KernelKind,
        template_args: Sequence[str | None],
        args: int | Sequence[CallArg],
        member_of: str | None = None,
        deprecated_ok: str | None = None,
    ) -> str | None:
        """What is wrong with a spelled call at this level, or None: :meth:`check_call`'s
        problem, where a deprecated form is allowed with the spelling's ``deprecated_ok`` and
        ``deprecated_ok`` on a form that is not deprecated is a problem of its own."""
        found, problem = self.check_call(name, kernel, template_args, args, member_of)
        if problem is not None:
            return None if problem.deprecated is not None and deprecated_ok else problem.message
        if deprecated_ok and isinstance(found, FunctionForm):
            return f"deprecated_ok, but {name!r} is not deprecated at API level {self.level!r}: write the call alone"
        return None

    def type_problem(self, name: str, template_arg_count: int) -> str | None:
        """What is wrong with naming class ``name`` with that many template arguments, or None."""
        kind = self.type(name)
        if kind is None or kind.is_enum:
            known = [t.name for t in self.types if not t.is_enum]
            return f"unknown type {name!r} at API level {self.level!r}{did_you_mean(name, known)}"
        if template_arg_count > len(kind.template):
            return f"{name!r} takes {len(kind.template)} template arguments at API level {self.level!r}, not {template_arg_count}"
        return None

    def _check_member(
        self, name: str, owner: str, template_args: Sequence[str | None], args: tuple[CallArg, ...]
    ) -> tuple[Signature | None, CallProblem | None]:
        kind = self.type(owner)
        if kind is None:
            return None, CallProblem(f"unknown type {owner!r} at API level {self.level!r}{did_you_mean(owner, [t.name for t in self.types])}")
        if name == owner:
            if template_args and len(template_args) > len(kind.template):
                return None, CallProblem(f"{owner!r} takes {len(kind.template)} template arguments, got {len(template_args)}")
            candidates = kind.constructors
            # A constructor's template arguments are the class's, checked above.
            fits = [c for c in candidates if c.accepts_args(len(args)) and self._args_fit(c, args)]
        else:
            candidates = tuple(m for m in kind.members if m.name == name)
            fits = [m for m in candidates if self._fits(m, template_args, args)]
        if not candidates:
            if name == owner:
                return None, CallProblem(f"{owner!r} declares no constructor at API level {self.level!r}")
            members = [m.name for m in kind.members]
            return None, CallProblem(f"{owner!r} has no member function {name!r} at API level {self.level!r}{did_you_mean(name, members)}")
        if not fits:
            counted = [c for c in candidates if c.accepts_args(len(args))]
            if counted:
                return None, CallProblem(self._arg_mismatch(counted[0], args, candidates, None, f"{owner}::{name}"))
            shapes = "; ".join(c.shape for c in candidates)
            return None, CallProblem(f"no form of {owner}::{name} takes {len(args)} arguments; declared: {shapes}")
        return fits[0], None

    def _fits(self, signature: Signature, template_args: Sequence[str | None], args: Sequence[CallArg]) -> bool:
        if not signature.accepts_template_args(len(template_args)) or not signature.accepts_args(len(args)):
            return False
        return self._template_args_fit(signature, template_args) and self._args_fit(signature, args)

    def _template_args_fit(self, signature: Signature, template_args: Sequence[str | None]) -> bool:
        return all(
            text is None or self.template_arg_fits(param, text)
            for param, text in zip(signature.template, template_args, strict=False)
        )

    def _args_fit(self, signature: Signature, args: Sequence[CallArg]) -> bool:
        return all(self.arg_problem(param, arg) is None for param, arg in zip(signature.params, args, strict=False))

    def arg_problem(self, param: Param, arg: CallArg) -> str | None:
        """Why a function argument cannot bind ``param`` (a phrase following the argument),
        or None when it can or its type is not knowable from the spelling. C++ converts
        between arithmetic types implicitly (so ``1`` or ``true`` binds a ``uint32_t``,
        ``{dst}`` a ``bool``) and an unscoped enumerator to them, but nothing to an
        enumeration and no scoped enumerator to anything else: those the headers reject. A
        parameter of a class or template type takes what its conversions allow, which the
        spec does not state."""
        if arg is None or (isinstance(arg, ArgKind) and arg.value_type is None) or param.type.pointer:
            return None
        named = self._enumerator_of(arg) if isinstance(arg, str) else None
        if isinstance(arg, str) and named is not None and not named[0].has_enumerator(named[1]):
            kind = named[0]
            return f"is no enumerator of {kind.name}{did_you_mean(arg, [f'{kind.name}::{e.name}' for e in kind.enumerators or ()])}"
        target = self.type(param.type.name)
        if target is not None and target.is_enum:
            if isinstance(arg, str) and self.template_arg_fits(TemplateParam(param.name or "", param.type, None), arg):
                return None
            return f"is not a {target.name}, which {_parameter(param)} takes: {', '.join(self._enumerators(target))}"
        if named is not None and named[0].scoped and param.type.name in BUILTIN_TYPES:
            return f"is a {named[0].name} enumerator, and a scoped enumerator does not convert to {param.type.name}, which {_parameter(param)} takes"
        return None

    def _enumerator_of(self, text: str) -> tuple[TypeDecl, str] | None:
        """The level's enumeration a qualified literal (``E::V``) names, and ``V``."""
        scope, _, leaf = text.rpartition("::")
        kind = self.type(scope) if scope else None
        return (kind, leaf) if kind is not None and kind.is_enum else None

    def _enumerators(self, kind: TypeDecl) -> list[str]:
        scope = f"{kind.name}::" if kind.scoped else ""
        return [f"{scope}{e.name}" for e in kind.enumerators or ()]

    def _arg_mismatch(
        self, signature: Signature, args: Sequence[CallArg], forms: Sequence[Signature], header: str | None, name: str | None = None
    ) -> str:
        """The first argument ``signature`` does not take, what its parameter takes, and every form."""
        called = name or signature.name
        for number, (param, arg) in enumerate(zip(signature.params, args, strict=False), 1):
            problem = self.arg_problem(param, arg)
            if problem is None:
                continue
            shown = repr(arg) if isinstance(arg, str) else arg.described if arg is not None else "a computed value"
            declared = "; ".join(f"{called}({', '.join(p.text for p in f.params)})" for f in forms)
            where = f" ({header})" if header else ""
            forms_word = "form" if len(forms) == 1 else "forms"
            return f"argument {number} of {called!r}, {shown}, {problem}; {forms_word} at API level {self.level!r}: {declared}{where}"
        return f"no form of {called!r} at API level {self.level!r} takes these arguments"

    def enumerator_choices(self, param: TemplateParam) -> list[str]:
        """How a template argument of ``param`` may be written: its enum's enumerators, scoped
        as the enum is (none when the parameter is no enum)."""
        kind = self.type(param.type.name) if param.type is not None else None
        return [] if kind is None else self._enumerators(kind)

    def _template_mismatch(self, form: FunctionForm, template_args: Sequence[str | None]) -> str:
        for param, text in zip(form.signature.template, template_args, strict=False):
            if text is None or self.template_arg_fits(param, text):
                continue
            kind = self.type(param.type.name) if param.type is not None else None
            if kind is not None and kind.enumerators is not None:
                valid = ", ".join(self.enumerator_choices(param))
                return f"template argument {text!r} of {form.name!r} is not a {kind.name} ({param.name}); valid: {valid}"
            what = "a type" if param.type is None else f"a {param.type.text}"
            return f"template argument {text!r} of {form.name!r} is not {what} ({param.name})"
        return f"no form of {form.name!r} at API level {self.level!r} takes these template arguments"

    def template_arg_fits(self, param: TemplateParam, text: str) -> bool:
        """Whether a literal template argument can bind ``param`` (an enumerator of its enum,
        true/false for bool, an integer for an integer parameter; a type for a type parameter)."""
        if param.type is None:
            return not text[:1].isdigit()
        kind = self.type(param.type.name)
        if kind is not None and kind.is_enum:
            scope, _, leaf = text.rpartition("::")
            if scope and scope != kind.name:
                return False
            if not scope and kind.scoped:
                return False
            return kind.has_enumerator(leaf)
        if param.type.name == "bool":
            return text in ("true", "false", "0", "1")
        return text[:1].isdigit()

    def _unknown(self, name: str, kernel: KernelKind) -> str:
        removal = self.removal(name)
        if removal is not None:
            return f"{name!r} was removed from tt-metal by {removal.by} (API level {self.level!r}); use {removal.use}"
        other = KernelKind.DATAFLOW if kernel is KernelKind.COMPUTE else KernelKind.COMPUTE
        elsewhere = self.forms(name, other)
        if elsewhere:
            return f"{name!r} is declared for {other.value} kernels ({elsewhere[0].header}), not {kernel.value} kernels, at API level {self.level!r}"
        known = [f.name for f in self.all_forms() if f.kernel is kernel]
        unknown = f"unknown function {name!r} at API level {self.level!r}"
        if self.release is None:
            return f"{unknown}: {self.source} does not declare it{did_you_mean(name, known)}"
        roots = next((paths for k, paths in self.header_roots if k is kernel), ())
        header = release_headers.declaring_header(self.release.sha256, roots, name)
        release = self.release.name
        if isinstance(header, str):
            return (
                f"{unknown}: {self.source} does not declare it, but {release} does ({header}): declare it there "
                f"(`ttlgen upstream import --level {self.level} --add {name}` writes its signature)"
            )
        if header is None:
            return f"{unknown}: neither {self.source} nor {release}'s headers declare it{did_you_mean(name, known)}"
        return (
            f"{unknown}: {self.source} does not declare it{did_you_mean(name, known)}; whether {release} has it is "
            f"unknown here (its headers are not fetched: `ttlgen upstream fetch`)"
        )


def _parameter(param: Param) -> str:
    """A parameter as a message names it."""
    return f"parameter {param.name!r}" if param.name else f"the {param.type.name} parameter"


@dataclass(frozen=True)
class Binding:
    """An API function's body in the emulator: one glue routine call."""

    computes: str | None  # the math the call performs (its reference), if any
    call: CallForm
    mark: Mark = field(compare=False)
    # The bool template parameter of the API function that selects the approximate form of
    # the math (the math spec's `approximate:`), if the binding follows it.
    approximate: str | None = None

    def names(self) -> Iterator[str]:
        """The argument names the binding needs in scope (parameters of the form)."""
        special = _LITERALS | {FUNCTION_NAME, MATH_FUNCTION}
        for arg in (*self.call.template_args, *self.call.args):
            if isinstance(arg, Literal) and arg.integer is None and "::" not in arg.text and arg.text not in special:
                yield arg.text
        if self.approximate is not None:
            yield self.approximate

    @property
    def passes_function(self) -> bool:
        """Whether the call passes ``function``, the math it computes."""
        return any(isinstance(a, Literal) and a.text == MATH_FUNCTION for a in (*self.call.template_args, *self.call.args))

    def applies_to(self, signature: Signature) -> bool:
        return self.needed <= signature.name_set

    @functools.cached_property
    def needed(self) -> frozenset[str]:
        """:meth:`names` as a set: each of the function's forms is asked whether it has them."""
        return frozenset(self.names())


@dataclass(frozen=True)
class Emulation:
    """How the host emulator implements the API: glue headers and a routine per function."""

    namespace: str  # the glue's; bindings name routines relative to it
    glue: tuple[tuple[KernelKind, str], ...]
    defines: tuple[tuple[str, str], ...]
    entry_namespace: str
    entry_function: str
    bindings: tuple[tuple[str, tuple[Binding, ...]], ...]
    source: str
    # The math spec's functions, and the tables (namespaces under <namespace>::math) the
    # generated math header defines them in, by arity: a binding whose routine has the
    # table's last name passes one as `function`.
    math: math_spec.MathModel = math_spec.NO_MATH
    math_tables: tuple[tuple[int, str], ...] = ()

    def glue_header(self, kernel: KernelKind) -> str:
        return dict(self.glue)[kernel]

    def binding(self, form: FunctionForm | Signature) -> Binding | None:
        """The first binding of the function whose names the form has."""
        signature = form.signature if isinstance(form, FunctionForm) else form
        return next((b for b in self._by_name.get(signature.name, ()) if b.applies_to(signature)), None)

    @functools.cached_property
    def _by_name(self) -> dict[str, tuple[Binding, ...]]:
        # Every op call of every kernel and every function of the emulator's headers asks
        # for its binding: look the function up, not scan the functions.
        return dict(self.bindings)

    def computes(self, function: str) -> math_spec.Computation | None:
        """What API function ``function`` computes (the same for all its bindings): a math
        function or a runtime primitive."""
        found = next((b.computes for b in self._by_name.get(function, ()) if b.computes), None)
        return None if found is None else self.math.computation(found)

    def table_arity(self, routine: str) -> int | None:
        """The arity of the math functions routine ``routine`` takes as ``function``, when
        it takes the math spec's (its last name is a math table); None otherwise."""
        leaf = routine.rpartition("::")[2]
        return next((arity for arity, table in self.math_tables if table == leaf), None)

    def table(self, arity: int) -> str | None:
        return next((table for a, table in self.math_tables if a == arity), None)

    def math_function(self, binding: Binding) -> math_spec.MathFunction | None:
        """The math spec's function ``binding`` passes as ``function``, if it passes one."""
        if binding.computes is None or not binding.passes_function or self.table_arity(binding.call.function) is None:
            return None
        return self.math.function(binding.computes)


@dataclass(frozen=True)
class ApiModel:
    """Every API level of the spec tree, and the emulation of them."""

    levels: tuple[ApiLevel, ...]  # sorted by name
    emulation: Emulation | None

    def level(self, name: str) -> ApiLevel | None:
        return next((lv for lv in self.levels if lv.level == name), None)

    @property
    def level_names(self) -> tuple[str, ...]:
        return tuple(lv.level for lv in self.levels)


EMPTY = ApiModel((), None)


# ------------------------------------------------------------------------------- reading


class _LevelReader:
    def __init__(self, doc: SpecDocument, sink: DiagnosticSink, declarations: dict[str, Signature | DeclarationError]) -> None:
        self.doc = doc
        self.sink = sink
        self.declarations = declarations
        self.types: dict[str, TypeDecl] = {}
        self.defines = dict(doc.data.get("defines", {}))
        self.entity = level_entity(doc.data["level"])

    def error(self, mark: Mark, message: str) -> None:
        # A declaration read wrong makes checks of calls against the level meaningless.
        self.sink.error(mark, message, breaks=(self.entity,))

    def signature(self, text: str, path: tuple[str | int, ...]) -> Signature | None:
        parsed = self.declarations.get(text)
        if parsed is None:
            try:
                parsed = parse_declaration(text)
            except DeclarationError as exc:
                parsed = exc
            self.declarations[text] = parsed
        if isinstance(parsed, DeclarationError):
            self.error(self.doc.mark(path), f"{text!r} is not a declaration this spec reads: {parsed}")
            return None
        return parsed

    def read_types(self) -> None:
        for name, raw in self.doc.data.get("types", {}).items():
            path: tuple[str | int, ...] = ("types", name)
            enumerators: tuple[Enumerator, ...] | None = None
            if "enum" in raw:
                values = raw["enum"]
                items = values.items() if isinstance(values, dict) else ((v, None) for v in values)
                enumerators = tuple(Enumerator(n, v) for n, v in items)
                underlying = raw.get("underlying") or "int"
                if underlying not in _UNDERLYING_RANGE:
                    self.error(
                        self.doc.mark((*path, "underlying")),
                        f"{underlying!r} is not an integer type an enumeration can have{did_you_mean(underlying, _UNDERLYING_RANGE)}; "
                        f"types: {', '.join(_UNDERLYING_RANGE)}",
                    )
                low, high = _UNDERLYING_RANGE.get(underlying, _UNDERLYING_RANGE["int"])
                for enumerator in enumerators:
                    if enumerator.value is not None and not low <= enumerator.value <= high:
                        self.error(
                            self.doc.mark((*path, "enum", enumerator.name)),
                            f"value {enumerator.value} of {name}::{enumerator.name} does not fit its underlying type "
                            f"{raw.get('underlying') or 'int'} ({low}..{high})",
                        )
                for key in ("template", "constructors", "members", "fields"):
                    if key in raw:
                        self.error(self.doc.key_mark((*path, key)), f"an enumeration has no {key}")
            elif "scoped" in raw or "underlying" in raw:
                key = "scoped" if "scoped" in raw else "underlying"
                self.error(self.doc.key_mark((*path, key)), f"{key} belongs to an enumeration (give `enum`)")
            template: tuple[TemplateParam, ...] = ()
            if "template" in raw:
                try:
                    template = template_params(raw["template"])
                except DeclarationError as exc:
                    self.error(self.doc.mark((*path, "template")), f"{raw['template']!r} is not a template parameter list: {exc}")
            constructors = []
            for index, text in enumerate(raw.get("constructors", ())):
                sig = self.signature(text, (*path, "constructors", index))
                if sig is not None and (sig.returns is not None or sig.name != name):
                    self.error(self.doc.mark((*path, "constructors", index)), f"a constructor of {name!r} is declared `{name}(...)`")
                elif sig is not None:
                    constructors.append(sig)
            members = [s for i, t in enumerate(raw.get("members", ())) if (s := self.signature(t, (*path, "members", i))) is not None]
            fields = []
            for index, text in enumerate(raw.get("fields", ())):
                kind_text, _, fname = text.rpartition(" ")
                try:
                    sig = parse_declaration(f"void f({kind_text} {fname})")
                except DeclarationError as exc:
                    self.error(self.doc.mark((*path, "fields", index)), f"{text!r} is not `<type> <name>`: {exc}")
                    continue
                fields.append((sig.params[0].type, fname))
            self.types[name] = TypeDecl(
                name, enumerators, bool(raw.get("scoped", False)), raw.get("underlying"), template,
                tuple(constructors), tuple(members), tuple(fields), self.doc.key_mark(path),
            )
        for name, kind in self.types.items():
            path = ("types", name)
            for index, sig in enumerate(kind.constructors):
                self.check_signature(sig, (*path, "constructors", index), kind.template)
            for index, sig in enumerate(kind.members):
                self.check_signature(sig, (*path, "members", index), kind.template)
            for index, (ref, _) in enumerate(kind.fields):
                self.check_type(ref, (*path, "fields", index), kind.template)

    def is_type(self, name: str, scope: Sequence[TemplateParam] = ()) -> bool:
        """Whether ``name`` is a built-in type, one the level declares, or a type parameter in scope."""
        return name in BUILTIN_TYPES or name in self.types or any(p.name == name for p in scope)

    def check_type(self, ref: TypeRef, path: tuple[str | int, ...], scope: Sequence[TemplateParam]) -> None:
        if self.is_type(ref.name, scope):
            kind = self.types.get(ref.name)
            if kind is not None and ref.args and len(ref.args) > len(kind.template):
                self.error(self.doc.mark(path), f"{ref.text!r}: {ref.name} takes {len(kind.template)} template arguments")
            return
        known = sorted({*self.types, *(p.name for p in scope)})
        where = f" in {ref.text!r}" if ref.text != ref.name else ""
        self.error(self.doc.mark(path), f"unknown type {ref.name!r}{where}; declare it under `types`{did_you_mean(ref.name, known)}")

    def check_default(self, text: str, path: tuple[str | int, ...], scope: Sequence[TemplateParam]) -> None:
        # A default may name a type of the level too (Args<A, B>::AlignedPageSize).
        in_scope = {p.name for p in scope}
        for name in identifiers(text):
            scope_name, _, leaf = name.rpartition("::")
            if name in in_scope or name in self.types or name in self.defines or name in _LITERALS:
                continue
            if name in BUILTIN_TYPES or name.startswith(_BUILTIN_PREFIX):
                continue
            kind = self.types.get(scope_name) if scope_name else None
            if kind is not None and kind.has_enumerator(leaf):
                continue
            if not scope_name and any(not t.scoped and t.has_enumerator(name) for t in self.types.values()):
                continue
            self.error(self.doc.mark(path), f"default value {text!r} names {name!r}, which is no enumerator, define (`defines`) or template parameter in scope")

    def check_signature(self, sig: Signature, path: tuple[str | int, ...], outer: Sequence[TemplateParam] = ()) -> None:
        scope: list[TemplateParam] = list(outer)
        for param in sig.template:
            if param.type is not None:
                self.check_type(param.type, path, scope)
            if param.default is not None:
                self.check_default(param.default, path, scope)
            scope.append(param)
        if sig.returns is not None:
            self.check_type(sig.returns, path, scope)
        for arg in sig.params:
            self.check_type(arg.type, path, scope)
            if arg.default is not None:
                self.check_default(arg.default, path, scope)

    def formats(
        self, entry: Mapping[str, Any], sig: Signature, configures: frozenset[State], path: tuple[str | int, ...]
    ) -> tuple[tuple[State, str], ...]:
        """Which parameter's CB each data-format register the form configures is loaded from."""
        raw: Mapping[str, str] = entry.get("formats", {})
        if not raw and not configures:
            return ()  # most forms: nothing to load, nothing to check
        sets = changed_states(configures)
        params = {p.name: p for p in sig.params if p.name is not None}
        found = []
        for state_name, param in raw.items():
            state = State(state_name)
            where = self.doc.mark((*path, "formats", state_name))
            if state not in sets:
                configured = ", ".join(sorted(s.value for s in configures)) or "nothing"
                self.error(where, f"{sig.name!r} does not configure {state_name} (configures: {configured}); add it to `configures` or drop it here")
            elif param not in params:
                self.error(where, f"{param!r} is no parameter of {sig.name!r}{did_you_mean(param, params)}; parameters: {', '.join(params) or 'none'}")
            elif params[param].default is not None:
                self.error(where, f"parameter {param!r} of {sig.name!r} has a default: the CB a register is loaded from is an argument every call passes")
            else:
                found.append((state, param))
        missing = [s.value for s in FORMAT_STATES if s in sets and s.value not in raw]
        if missing:
            at = (*path, "configures")
            self.error(
                self.doc.mark(at),
                f"{sig.name!r} configures {', '.join(missing)}: say which parameter's CB each is loaded from "
                f"(formats: {{{missing[0]}: <parameter>}}; parameters: {', '.join(params) or 'none'})",
            )
        return tuple(found)

    def swap(self, entry: Mapping[str, Any], sig: Signature, path: tuple[str | int, ...]) -> SourceSwap | None:
        raw = entry.get("swap_sources")
        if raw is None:
            return None
        mark = self.doc.mark((*path, "swap_sources"))
        names = [t.name for t in sig.template]
        if raw["parameter"] not in names:
            self.error(
                self.doc.mark((*path, "swap_sources", "parameter")),
                f"{raw['parameter']!r} is no template parameter of {sig.name!r}{did_you_mean(raw['parameter'], names)}; template parameters: {', '.join(names) or 'none'}",
            )
            return None
        loaded = {s for s in entry.get("formats", {})}
        if not {State.SRCA_FORMAT.value, State.SRCB_FORMAT.value} <= loaded:
            self.error(mark, f"{sig.name!r} swaps its sources, so `formats` names the parameters of both srca_format and srcb_format")
            return None
        return SourceSwap(raw["parameter"], raw["value"], mark)

    def expects(
        self, entry: Mapping[str, Any], sig: Signature, path: tuple[str | int, ...]
    ) -> tuple[tuple[tuple[State, str], ...], tuple[tuple[str, tuple[str, ...]], ...]]:
        """The formats the form expects loaded (by parameter), and when SrcA's and SrcB's swap."""
        if "expects" not in entry and "expects_swapped_when" not in entry:
            return (), ()  # most forms
        params = {p.name: p for p in sig.params if p.name is not None}
        expects = []
        for state_name, param in entry.get("expects", {}).items():
            where = self.doc.mark((*path, "expects", state_name))
            if param not in params:
                self.error(where, f"{param!r} is no parameter of {sig.name!r}{did_you_mean(param, params)}; parameters: {', '.join(params) or 'none'}")
            elif params[param].default is not None:
                self.error(where, f"parameter {param!r} of {sig.name!r} has a default: a register is expected to hold the format of a CB every call passes")
            else:
                expects.append((State(state_name), param))
        swaps = []
        template = {t.name for t in sig.template}
        for name, values in entry.get("expects_swapped_when", {}).items():
            if name not in template:
                self.error(
                    self.doc.key_mark((*path, "expects_swapped_when", name)),
                    f"{name!r} is no template parameter of {sig.name!r}{did_you_mean(name, template)}; template parameters: {', '.join(t.name for t in sig.template) or 'none'}",
                )
                continue
            swaps.append((name, tuple(values)))
        if swaps and not {State.SRCA_FORMAT, State.SRCB_FORMAT} <= {s for s, _ in expects}:
            self.error(self.doc.mark((*path, "expects_swapped_when")), f"{sig.name!r} swaps what SrcA and SrcB expect, so `expects` names both srca_format and srcb_format")
        return tuple(expects), tuple(swaps)

    def read_headers(self) -> tuple[Header, ...]:
        headers = []
        seen: dict[tuple[str, KernelKind, tuple[str, ...], tuple[str, ...]], Mark] = {}
        for path_name, raw in self.doc.data["headers"].items():
            kernel = KernelKind(raw["kernel"])
            namespace = raw.get("namespace")
            forms = []
            for index, item in enumerate(raw["functions"]):
                path: tuple[str | int, ...] = ("headers", path_name, "functions", index)
                entry = item if isinstance(item, dict) else {"signature": item}
                sig_path = (*path, "signature") if isinstance(item, dict) else path
                sig = self.signature(entry["signature"], sig_path)
                if sig is None:
                    continue
                if sig.returns is None:
                    self.error(self.doc.mark(sig_path), f"{entry['signature']!r} has no return type (constructors belong to a type)")
                    continue
                self.check_signature(sig, sig_path)
                key = (sig.name, kernel, tuple(p.type.text for p in sig.params), tuple(t.type.text if t.type else 'typename' for t in sig.template))
                mark = self.doc.mark(sig_path)
                if key in seen:
                    self.error(mark, f"{sig.name!r} is declared twice with the same parameter types (first at {seen[key]})")
                seen.setdefault(key, mark)
                configures = frozenset(State(s) for s in entry.get("configures", ()))
                forms.append(
                    FunctionForm(
                        sig, path_name, kernel, namespace, configures,
                        _deprecation(entry.get("deprecated")),
                        self.formats(entry, sig, configures, path),
                        self.swap(entry, sig, path),
                        mark,
                        *self.expects(entry, sig, path),
                    )
                )
            if kernel is KernelKind.DATAFLOW and namespace is not None:
                self.error(self.doc.key_mark(("headers", path_name, "namespace")), "dataflow kernels call their API at global scope; a dataflow header has no namespace")
            headers.append(Header(path_name, kernel, namespace, tuple(forms), self.doc.key_mark(("headers", path_name))))
        return tuple(headers)


def _deprecation(raw: Mapping[str, str] | None) -> Deprecation | None:
    if raw is None:
        return None
    quoted = "quote" in raw
    return Deprecation(" ".join(raw["quote" if quoted else "summary"].split()), raw["source"], quoted)


# The files the emulator writes beside a level's headers (emulator/<level>/), named here so
# that a header the level lists cannot take one's path; the emitters use these names.
EMULATOR_TYPES_HEADER = "ttlemu_api_types.h"
EMULATOR_DESCRIPTOR = "ttlemu_level.json"
EMULATOR_MATH_HEADER = "ttlemu_math.h"
_EMULATOR_FILES = (EMULATOR_TYPES_HEADER, EMULATOR_DESCRIPTOR, EMULATOR_MATH_HEADER)


def _under(path: str, root: str) -> bool:
    return path.startswith(root) if root.endswith("/") else path == root


def _check_headers(level: ApiLevel, sink: DiagnosticSink) -> None:
    """Every header sits under one of its kind's roots: a directory (ending in /) or a file;
    and none takes the path of a file the emulator writes beside them."""
    roots = dict(level.header_roots)
    for header in level.headers:
        under = roots.get(header.kernel, ())
        if not any(_under(header.path, root) for root in under):
            sink.error(
                header.mark,
                f"header {header.path!r} is not under a {header.kernel.value} header root of API level {level.level!r} "
                f"(header_roots.{header.kernel.value}: {', '.join(under)})",
            )
        if header.path in _EMULATOR_FILES:
            sink.error(
                header.mark,
                f"header {header.path!r} of API level {level.level!r} takes the path of a file the emulator generates "
                f"beside the level's headers; a header's path is any but {', '.join(_EMULATOR_FILES)}",
            )


def _check_swaps(level: ApiLevel, sink: DiagnosticSink) -> None:
    for form in level.all_forms():
        # (where to report, what the message starts with, template parameter, its values)
        checks = [(form.mark, "expects_swapped_when: ", name, values) for name, values in form.expects_swapped_when]
        if form.swap is not None:
            checks.append((form.swap.mark, "", form.swap.parameter, (form.swap.value,)))
        for mark, lead, name, values in checks:
            param = next(t for t in form.signature.template if t.name == name)
            for value in values:
                if not level.template_arg_fits(param, value):
                    valid = level.enumerator_choices(param)
                    hint = f"{did_you_mean(value, valid)}; valid: {', '.join(valid)}" if valid else ""
                    sink.error(mark, f"{lead}{value!r} is no value of template parameter {param.text!r} of {form.name!r}{hint}")


def _entry(raw: Mapping[str, str], mark: Mark) -> EntryPoint:
    if "function" in raw:
        return EntryPoint(raw["function"], mark=mark)
    return EntryPoint(raw["function_macro"], raw["namespace"], mark)


def _release(doc: SpecDocument, sink: DiagnosticSink) -> Release | None:
    raw = doc.data.get("release")
    if raw is None:
        return None
    release = Release(raw["package"], raw["version"], raw["wheel"], raw["sha256"], doc.mark(("release",)))
    problem = wheel_problem(release.package, release.version, release.wheel)
    if problem is not None:
        sink.error(doc.mark(("release", "wheel")), problem)
    return release


def read_level(doc: SpecDocument, sink: DiagnosticSink, declarations: dict[str, Signature | DeclarationError] | None = None) -> ApiLevel:
    """One level's spec on its own (``ttlgen upstream`` reads a level without the rest of
    the tree, which a refresh of the level may leave inconsistent until the spellings follow).
    ``declarations``: each declaration text the build has parsed (the levels of a tree share
    most of theirs), its signature or why it is none; filled here."""
    reader = _LevelReader(doc, sink, {} if declarations is None else declarations)
    reader.read_types()
    headers = reader.read_headers()
    data = doc.data
    level = ApiLevel(
        level=data["level"],
        compute_entry=_entry(data["entry"]["compute"], doc.mark(("entry", "compute"))),
        dataflow_entry=_entry(data["entry"]["dataflow"], doc.mark(("entry", "dataflow"))),
        startup=tuple(data["startup"]),
        header_roots=tuple((KernelKind(kind), tuple(roots)) for kind, roots in sorted(data["header_roots"].items())),
        defines=tuple(
            Define(
                name, raw if isinstance(raw, str) else raw["meaning"], None if isinstance(raw, str) else raw.get("constexpr"),
                doc.key_mark(("defines", name)), host=not isinstance(raw, str) and bool(raw.get("host")),
            )
            for name, raw in sorted(data.get("defines", {}).items())
        ),
        types=tuple(reader.types[n] for n in sorted(reader.types)),
        headers=headers,
        removed=tuple(
            (name, Removal(raw["by"], raw["use"], doc.key_mark(("removed", name))))
            for name, raw in sorted(data.get("removed", {}).items())
        ),
        source=doc.source,
        mark=doc.mark(("level",)),
        release=_release(doc, sink),
    )
    for define in level.defines:
        # Printed as the type of a constexpr variable in the emulator's types header.
        if define.constexpr is not None and not reader.is_type(define.constexpr):
            builtin = sorted(BUILTIN_TYPES - {"void"})
            sink.error(
                doc.mark(("defines", define.name, "constexpr")),
                f"define {define.name!r} is a constexpr variable of type {define.constexpr!r}, which is no type"
                f"{did_you_mean(define.constexpr, sorted({*builtin, *reader.types}))}: a built-in type ({', '.join(builtin)}) or one declared under `types`",
            )
    for index, name in enumerate(level.startup):
        forms = level.forms(name, KernelKind.COMPUTE)
        if not forms:
            sink.error(doc.mark(("startup", index)), f"{name!r} is no function of this level's compute headers{did_you_mean(name, [f.name for f in level.all_forms()])}")
        elif not all(State.HARDWARE in f.configures for f in forms):
            sink.error(doc.mark(("startup", index)), f"{name!r} starts a kernel, so every form of it configures [hardware] ({forms[0].mark})")
    first_forms: dict[str, FunctionForm] = {}
    for form in level.all_forms():
        first_forms.setdefault(form.name, form)
    for name, removal in level.removed:
        if name in first_forms:
            sink.error(removal.mark, f"{name!r} is listed as removed but declared at {first_forms[name].mark}")
    _check_headers(level, sink)
    _check_swaps(level, sink)
    return level


def _binding(raw: str | Mapping[str, str], mark: Mark, sink: DiagnosticSink) -> Binding | None:
    text = raw if isinstance(raw, str) else raw["call"]
    computes = None if isinstance(raw, str) else raw["computes"]
    approximate = None if isinstance(raw, str) else raw.get("approximate")
    try:
        call = parse_call(text, mark, {})
    except FormError as exc:
        sink.error(mark, f"{text!r}: {exc}")
        return None
    binding = Binding(computes, call, mark, approximate)
    if binding.passes_function and computes is None:
        sink.error(mark, f"{text!r} passes `{MATH_FUNCTION}`, the math the call computes: write {{computes: <math function>, call: ...}}")
    if approximate is not None and not binding.passes_function:
        sink.error(mark, f"`approximate: {approximate}` selects the form of the math passed as `{MATH_FUNCTION}`, which {text!r} does not pass")
    return binding


def _check_math(binding: Binding, namespace: str, math: math_spec.MathModel, tables: Sequence[tuple[int, str]], sink: DiagnosticSink) -> None:
    """What a binding computes is stated: a function of the math spec (of the arity its
    routine takes, with an approximate form when the binding selects one) or a runtime
    primitive; else the emulator could not run it nor `ttlgen run` reference it."""
    name = binding.computes
    if name is None:
        return
    after = [math_spec.function_entity(name)]
    found = math.computation(name)
    leaf = binding.call.function.rpartition("::")[2]
    arity = next((a for a, table in tables if table == leaf), None)
    if found is None:
        known = [f.name for f in math.functions]
        forms = {0: f'{name}: {{nullary: "<expression>"}}', 1: f'{name}: {{unary: "<expression of x>"}}', 2: f'{name}: {{binary: "<expression of x and y>"}}'}
        wanted = forms[arity] if binding.passes_function and arity in forms else " or ".join(forms.values())
        sink.error(
            binding.mark,
            f"no math is stated for {name!r}{did_you_mean(name, [*known, *math_spec.PRIMITIVE_NAMES])}: add it to {math.file} under "
            f"functions:, as {wanted} (runtime primitives, computed by the emulator's own datapaths: {', '.join(math_spec.PRIMITIVE_NAMES)})",
            after=after,
        )
        return
    if not binding.passes_function:
        return
    if arity is None:
        if binding.approximate is not None:
            tables_text = ", ".join(f"{namespace}::math::{t}" for _, t in tables)
            sink.error(
                binding.mark,
                f"`approximate: {binding.approximate}` selects a form of the math spec's function, but {binding.call.function} "
                f"takes its `{MATH_FUNCTION}` from the glue ({namespace}::math::{leaf}), not from {tables_text}",
                after=(MATH_TABLES,),
            )
        return
    if not isinstance(found, math_spec.MathFunction):
        sink.error(
            binding.mark,
            f"{name!r} is a runtime primitive, not a function of {math.file}: {binding.call.function} takes a {math_spec.FORMS[arity]} function as `{MATH_FUNCTION}`",
            after=(MATH_TABLES,),
        )
        return
    if found.arity != arity:
        sink.error(
            binding.mark,
            f"{name!r} is a {found.kind} function ({found.mark}), but {namespace}::{binding.call.function} takes a "
            f"{math_spec.FORMS[arity]} one as `{MATH_FUNCTION}`",
            after=(*after, MATH_TABLES),
        )
    if binding.approximate is not None and found.approximate is None:
        sink.error(
            binding.mark,
            f"`approximate: {binding.approximate}` selects the approximate form of {name!r}, which {math.file} does not state "
            f"({found.mark}): give it `approximate: <expression>`, or drop `approximate:` to compute the exact form always",
            after=after,
        )


def _check_glue(
    doc: SpecDocument,
    namespace: str,
    glue: Sequence[tuple[KernelKind, str]],
    types: Sequence[str],
    bindings: Sequence[tuple[str, tuple[Binding, ...]]],
    math: math_spec.MathModel,
    tables: Sequence[tuple[int, str]],
    sink: DiagnosticSink,
) -> None:
    """Every name a binding uses exists in the emulator's glue or the generated math header
    (else the generated emulator headers would not compile): glue headers, routines, the
    math a call computes, types."""
    index = emulator_glue.scan(top=namespace)
    for kind, header in glue:
        if header not in index.headers:
            sink.error(doc.mark(("glue", kind.value)), f"no glue header {header!r}{did_you_mean(header, index.headers)}; headers: {', '.join(sorted(index.headers))}")
    for i, name in enumerate(types):
        if not index.declares(f"types::{name}"):
            sink.error(doc.mark(("types", i)), f"the glue implements no type {namespace}::types::{name}{did_you_mean(name, index.members('types'))}")
    for arity, table in tables:
        if index.members(f"math::{table}"):
            sink.error(doc.mark(("math", math_spec.FORMS[arity])), f"the glue declares {namespace}::math::{table} itself; the math header generated from {math.file} defines it")
    routines = sorted(n for n in index.names if not n.startswith(("math::", "types::")))
    _check_tables(doc, tables, bindings, math, routines, sink)
    generated = {table for _, table in tables}
    for _, found in bindings:
        for binding in found:
            routine = binding.call.function
            if not index.declares(routine):
                sink.error(binding.mark, f"the glue declares no routine {namespace}::{routine}{did_you_mean(routine, routines)}")
                continue
            _check_math(binding, namespace, math, tables, sink)
            table = routine.rpartition("::")[2]
            if binding.computes is not None and binding.passes_function and table not in generated:
                # `function` becomes <namespace>::math::<routine>::<computes>, a name of the glue.
                known = index.members(f"math::{table}")
                if binding.computes not in known:
                    sink.error(
                        binding.mark,
                        f"{binding.computes!r} is not a function of {namespace}::math::{table}{did_you_mean(binding.computes, known)}; known: {', '.join(known) or 'none'}",
                        after=(MATH_TABLES,),
                    )


def _check_tables(
    doc: SpecDocument,
    tables: Sequence[tuple[int, str]],
    bindings: Sequence[tuple[str, tuple[Binding, ...]]],
    math: math_spec.MathModel,
    routines: Sequence[str],
    sink: DiagnosticSink,
) -> None:
    """Each `math:` table is the last name of a glue routine that takes functions of its
    arity. A routine's arity is not in the glue's text the scanner reads, but its bindings
    show it: when all of them compute functions of another arity, and that arity's own table
    is no better, the tables are what is wrong (mapped the wrong way round), not each binding."""
    leaves = {r.rpartition("::")[2] for r in routines}
    computed: dict[str, dict[int, list[str]]] = {}  # table -> arity computed -> API functions
    for function, found in bindings:
        for binding in found:
            kind = math.computation(binding.computes) if binding.computes and binding.passes_function else None
            if isinstance(kind, math_spec.MathFunction):
                leaf = binding.call.function.rpartition("::")[2]
                computed.setdefault(leaf, {}).setdefault(kind.arity, []).append(function)
    by_arity = dict(tables)

    def right(arity: int) -> bool:
        return arity in computed.get(by_arity.get(arity, ""), {})

    for arity, table in tables:
        form = math_spec.FORMS[arity]
        if table not in leaves:
            sink.error(
                doc.mark(("math", form)),
                f"no glue routine is named {table!r}, so none takes the {form} functions{did_you_mean(table, leaves)}",
                breaks=(MATH_TABLES,),
            )
            continue
        seen = computed.get(table, {})
        if right(arity) or len(seen) != 1:
            continue
        (other, functions), = seen.items()
        if right(other):
            continue  # the table holds: its bindings compute the wrong functions, each its own error
        owner = by_arity.get(other)
        wanted = math_spec.FORMS[other]
        listed = list(dict.fromkeys(functions))
        sink.error(
            doc.mark(("math", form)),
            f"the routines named {table!r} do not take {form} functions: their bindings ({', '.join(listed[:3])}{', ...' if len(listed) > 3 else ''}) "
            f"compute {wanted} ones, so it belongs under `{wanted}:`{f' (now {owner!r})' if owner else ''}",
            breaks=(MATH_TABLES,),
        )


def _check_glue_enumerators(index: emulator_glue.GlueIndex, levels: Sequence[ApiLevel], sink: DiagnosticSink) -> None:
    """The glue maps API enums by name (``<Enum>::<ENUMERATOR>``): each level must keep them."""
    for level in levels:
        for kind in level.types:
            if kind.enumerators is None:
                continue
            names = [e.name for e in kind.enumerators]
            for type_name, enumerator, header in sorted(index.enumerator_uses):
                if type_name == kind.name and enumerator not in names:
                    sink.error(
                        kind.mark,
                        f"enumeration {kind.name} of level {level.level!r} has no {enumerator}, which the emulator's glue "
                        f"uses ({header}){did_you_mean(enumerator, names)}; enumerators: {', '.join(names)}",
                    )


def _no_enumerator(kind: TypeDecl, shown: str, leaf: str) -> str:
    """What is wrong with ``<enumeration>::leaf`` when ``kind`` has no such enumerator."""
    names = [e.name for e in kind.enumerators or ()]
    return f"enumeration {shown} has no {leaf}{did_you_mean(leaf, names)}; enumerators: {', '.join(names)}"


def _check_binding_enumerators(binding: Binding, levels: Sequence[ApiLevel], sink: DiagnosticSink) -> None:
    """A qualified argument of a binding (``Enum::VALUE``) is an enumerator of an
    enumeration of each level whose form the binding is the body of: the emulator's header
    of that level prints it as written, beside that level's enumerations."""
    reported: set[str] = set()
    for arg in (*binding.call.template_args, *binding.call.args):
        if not isinstance(arg, Literal) or "::" not in arg.text:
            continue
        scope, _, leaf = arg.text.rpartition("::")
        for level in levels:
            kind = level.type(scope)
            if kind is not None and kind.has_enumerator(leaf):
                continue
            if kind is not None and kind.is_enum:
                problem = _no_enumerator(kind, f"{scope} of level {level.level!r}", leaf)
            else:
                enums = [t.name for t in level.types if t.is_enum]
                problem = f"{scope!r} is no enumeration that level {level.level!r} declares under `types`{did_you_mean(scope, enums)}"
            if problem not in reported:
                reported.add(problem)
                sink.error(binding.mark, f"{binding.call.function}(...) passes {arg.text}, but {problem}")


_BOOLEANS = ("true", "false")


def _define_value_problem(literal: Literal, constexpr: str | None, level: ApiLevel) -> str | None:
    """Why ``literal`` cannot be the value of a define of ``level`` whose constexpr type is
    ``constexpr`` (None: a macro), or None when it can."""
    text = literal.text
    if constexpr == "bool" or (constexpr is None and text in _BOOLEANS):
        return None if text in _BOOLEANS else f"a bool is true or false{did_you_mean(text, _BOOLEANS)}"
    if constexpr in BUILTIN_TYPES or (constexpr is None and literal.integer is not None):
        return None if literal.integer is not None else f"a {constexpr} is an integer"
    enums = [t.name for t in level.types if t.is_enum]
    if constexpr is not None and constexpr not in enums:
        return None  # a type that is no type is the level's error; an opaque one takes no literal here
    scope, _, leaf = text.rpartition("::")
    kind = level.type(scope) if scope in enums and constexpr in (None, scope) else None
    if kind is not None and kind.has_enumerator(leaf):
        return None
    if kind is not None:
        return _no_enumerator(kind, scope, leaf)
    if constexpr is not None:
        return f"a {constexpr} is one of its enumerators, written {constexpr}::<enumerator>"
    # The level is named where the message says whose define it is.
    return f"a macro's value is an integer, true, false or an enumerator of one of the level's enumerations, written Enum::VALUE{did_you_mean(scope or text, enums)}"


def _check_define_value(name: str, literal: Literal, levels: Sequence[ApiLevel], mark: Mark, sink: DiagnosticSink) -> None:
    """The emulator's value of a define is one its type at each level takes: true or false
    for a bool, an integer for another built-in type, an enumerator for an enumeration, and
    for a macro any of them (the level's headers print it as written)."""
    reported: set[str] = set()  # the same problem at a second level is not said again
    for level in levels:
        declared = next((d for d in level.defines if d.name == name), None)
        if declared is None:
            continue
        problem = _define_value_problem(literal, declared.constexpr, level)
        if problem is not None and problem not in reported:
            reported.add(problem)
            what = f"a constexpr {declared.constexpr}" if declared.constexpr else "a macro"
            sink.error(mark, f"{literal.text!r} cannot be the value of define {name!r}, {what} at level {level.level!r} ({declared.mark}): {problem}")


def _check_approximate(name: str, binding: Binding, forms: Sequence[tuple[ApiLevel, FunctionForm]], sink: DiagnosticSink) -> None:
    """`approximate: P` names a bool template parameter of every form the binding applies to."""
    if binding.approximate is None:
        return
    for level, form in forms:
        if not binding.applies_to(form.signature):
            continue
        param = next((p for p in form.signature.template if p.name == binding.approximate), None)
        if param is None or param.type is None or param.type.text != "bool":
            if param is None:
                what = "a function parameter" if binding.approximate in form.signature.names() else "no parameter"
            else:
                what = "a type parameter" if param.type is None else f"a template parameter of type {param.type.text}"
            sink.error(
                binding.mark,
                f"`approximate: {binding.approximate}` must name a bool template parameter of {name!r}; at level {level.level!r} "
                f"({form.mark}) it is {what}",
            )
            return


def _math_tables(doc: SpecDocument, sink: DiagnosticSink) -> tuple[tuple[int, str], ...]:
    raw = doc.data["math"]
    tables: list[tuple[int, str]] = []
    for arity, form in sorted(math_spec.FORMS.items()):
        if form not in raw:
            continue
        other = next((math_spec.FORMS[a] for a, t in tables if t == raw[form]), None)
        if other is not None:
            sink.error(doc.mark(("math", form)), f"{other} and {form} functions need tables of their own; both are {raw[form]!r}", breaks=(MATH_TABLES,))
        tables.append((arity, raw[form]))
    return tuple(tables)


def _undeclared(name: str, levels: Sequence[ApiLevel], declared: Mapping[str, object]) -> str:
    """Why a binding's function is unknown: where a fetched pinned release declares it (then
    the fix is to declare it at that level), else the closest declared names."""
    found = []
    for level in levels:
        if level.release is None:
            continue
        roots = next((paths for kind, paths in level.header_roots if kind is KernelKind.COMPUTE), ())
        header = release_headers.declaring_header(level.release.sha256, roots, name)
        if isinstance(header, str):
            found.append(f"{level.source} ({level.release.name} declares it in {header}: `ttlgen upstream import --level {level.level} --add {name}`)")
    if found:
        return f"no API level declares {name!r}: declare it in {'; and in '.join(found)}"
    return f"no API level declares {name!r}{did_you_mean(name, declared)}"


def _emulation(doc: SpecDocument, levels: Sequence[ApiLevel], math: math_spec.MathModel, sink: DiagnosticSink) -> Emulation:
    data = doc.data
    bindings: list[tuple[str, tuple[Binding, ...]]] = []
    declared: dict[str, list[tuple[ApiLevel, FunctionForm]]] = {}
    for level in levels:
        for form in level.all_forms():
            declared.setdefault(form.name, []).append((level, form))
    for name, raw in data["functions"].items():
        path = ("functions", name)
        items = raw if isinstance(raw, list) else [raw]
        found = tuple(
            b for i, item in enumerate(items)
            if (b := _binding(item, doc.mark((*path, i) if isinstance(raw, list) else path), sink)) is not None
        )
        bindings.append((name, found))
        forms = declared.get(name)
        if not forms:
            sink.error(doc.key_mark(path), _undeclared(name, levels, declared))
            continue
        computed = {b.computes for b in found if b.computes}
        if len(computed) > 1:
            sink.error(doc.key_mark(path), f"the bindings of {name!r} compute different functions: {', '.join(sorted(computed))}")
        stray = False
        for binding in found:
            if not any(binding.applies_to(f.signature) for _, f in forms):
                names = ", ".join(sorted(set(binding.names()) - {n for _, f in forms for n in f.signature.names()}))
                sink.error(binding.mark, f"no form of {name!r} has {names}: the binding applies to none of them")
                stray = True
        if stray:
            continue  # the forms it leaves unbound follow from that error
        for binding in found:
            _check_approximate(name, binding, forms, sink)
            _check_binding_enumerators(binding, [level for level, form in forms if binding.applies_to(form.signature)], sink)
        for level, form in forms:
            if not any(b.applies_to(form.signature) for b in found):
                sink.error(doc.key_mark(path), f"no binding of {name!r} applies to its form at level {level.level!r} ({form.mark}); its parameters: {', '.join(form.signature.names()) or 'none'}")
    glue = tuple((KernelKind(kind), header) for kind, header in sorted(data["glue"].items()))
    types = tuple(data["types"])
    tables = _math_tables(doc, sink)
    _check_glue(doc, data["namespace"], glue, types, bindings, math, tables, sink)
    _check_glue_enumerators(emulator_glue.scan(top=data["namespace"]), levels, sink)
    for level in levels:
        for kind in level.types:
            if not kind.is_enum and kind.name not in types:
                sink.error(doc.mark(("types",)), f"type {kind.name!r} of level {level.level!r} ({kind.mark}) is opaque there: list it here as implemented by the glue")
        for define in level.defines:
            if define.host and define.name in data["defines"]:
                sink.error(
                    doc.key_mark(("defines", define.name)),
                    f"define {define.name!r} is passed by the host at level {level.level!r} ({define.mark}): a kernel's build takes its value "
                    "from the kernel's defines (an op's spelling states them); give it no value here",
                )
            elif not define.host and define.name not in data["defines"]:
                sink.error(doc.mark(("defines",)), f"define {define.name!r} of level {level.level!r} has no value here")
    for define, value in data["defines"].items():
        # Printed as the define's expansion in the emulator's headers: one C++ token.
        try:
            literal = parse_value(value)
        except FormError as exc:
            sink.error(doc.mark(("defines", define)), f"{value!r} cannot be what define {define!r} expands to: {exc} (an integer, true, false or a qualified enumerator such as Enum::VALUE)")
            continue
        _check_define_value(define, literal, levels, doc.mark(("defines", define)), sink)
    for index, name in enumerate(types):
        if not any(level.type(name) is not None for level in levels):
            sink.error(doc.mark(("types", index)), f"no API level declares type {name!r}")
    return Emulation(
        namespace=data["namespace"],
        glue=glue,
        defines=tuple(sorted(data["defines"].items())),
        entry_namespace=data["entry"]["namespace"],
        entry_function=data["entry"]["function"],
        bindings=tuple(bindings),
        source=doc.source,
        math=math,
        math_tables=tables,
    )


def build(documents: Sequence[SpecDocument], sink: DiagnosticSink, math: math_spec.MathModel | None = None) -> ApiModel:
    levels: dict[str, ApiLevel] = {}
    declarations: dict[str, Signature | DeclarationError] = {}
    for doc in (d for d in documents if d.kind == KIND):
        level = read_level(doc, sink, declarations)
        if level.level in levels:
            sink.error(level.mark, f"API level {level.level!r} is declared twice (first in {levels[level.level].source})")
            continue
        levels[level.level] = level
    ordered = tuple(levels[n] for n in sorted(levels))
    emulations = [d for d in documents if d.kind == EMULATION_KIND]
    for extra in emulations[1:]:
        sink.error(extra.mark(("spec",)), f"a second {EMULATION_KIND} file; the emulation is declared once (first: {emulations[0].display})")
    emulation = _emulation(emulations[0], ordered, math or math_spec.NO_MATH, sink) if emulations else None
    return ApiModel(ordered, emulation)
