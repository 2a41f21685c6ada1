"""One scan of every identifier the ABI and program outputs define, checked for collisions.

A generated identifier lives in a scope: the C header's global names, a C struct's
members, a C++ namespace, a Python module, class or function. This module walks every
layout and the programs built on it once and puts each name the model gives a thing
(:mod:`ttlgen.model.names`) into the scopes the generated files define it in, next to
what those files define on their own (imports, helpers, locals) and what they rely on
there (the language's keywords, builtins and types they use). Every identifier that two
things share is a located error naming both, with the identifier in each language where
they collide.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import NamedTuple

from ttlgen.errors import Diagnostic, DiagnosticSink, Mark
from ttlgen.model.layout import BitField, Layout, LayoutModel, Struct, StructField
from ttlgen.model.names import Names
from ttlgen.model.programs import Program, ProgramModel
from ttlgen.naming import C_KEYWORDS, CPP_KEYWORDS, PYTHON_KEYWORDS

# The kernel-configuration package: python/<it>/, include/<it>/ and tests/<it>_tables_dump.cpp.
# Named here, where layouts' packages are checked against it, and used by its emitters.
KERNEL_CONFIG_PACKAGE = "ttl_kernel_config"

# Names the generated files define whatever the spec says. They state what the templates
# write; tests/abi/test_abi_names.py checks them against the generated files.
PY_LAYOUT_IMPORTS = ("annotations", "IntEnum", "IntFlag", "Field", "Word")
PY_LAYOUT_BUILTINS = ("dict", "int", "str")  # annotations of the printed-name tables
PY_CODEC_IMPORTS = (
    "annotations", "Sequence", "InitVar", "dataclass", "field", "ROUND_CEILING", "Decimal", "InvalidOperation",
    "layout", "WORD_MAX", "AbiError", "bytes_to_words", "check_field", "check_word", "name_of", "pack_word",
    "unpack_word", "words_to_bytes",
)
# Builtins the codec uses; a module-level name would hide them from all of its code.
PY_CODEC_BUILTINS = (
    "bool", "bytes", "classmethod", "enumerate", "float", "int", "len", "object", "property", "staticmethod",
    "str", "tuple",
)
# What the codec's class bodies use themselves (annotations, decorators, defaults), which an
# attribute defined before them would hide. Methods look past the class to the module.
PY_CODEC_CLASS_BODY = ("bool", "bytes", "classmethod", "field", "int", "property", "staticmethod", "str", "tuple")
PY_PROGRAM_IMPORTS = ("annotations", "NamedTuple")
PY_PROGRAM_BUILTINS = ("int",)  # in annotations, of the module and of its classes
_CODEC_BUILTINS = [(name, "a builtin the generated codec uses") for name in PY_CODEC_BUILTINS]
_CODEC_CLASS_BODY = [(name, "a name the generated codec's class bodies use") for name in PY_CODEC_CLASS_BODY]
# A generated function's locals hide the codec's own names and builtins from its body.
_CODEC_GLOBALS = [
    *_CODEC_BUILTINS,
    *((name, "a name of the generated codec") for name in (*PY_CODEC_IMPORTS, "NotLandedError") if name != "annotations"),
]
_PROGRAM_BUILTINS = [(name, "a builtin the generated program module uses") for name in PY_PROGRAM_BUILTINS]


class Source(NamedTuple):
    """What an identifier belongs to: a named thing of a spec, with where its name is
    written, or (without a mark) the generated code itself or the language."""

    what: str
    mark: Mark | None = None


FILES = "file"  # the "language" of a scope of generated file names


class Scope(NamedTuple):
    unit: str  # the layout whose files the scope is in ("" for scopes across layouts)
    language: str  # C, C++, Python, or FILES for the names of generated files
    label: str  # how an identifier of the scope is shown, e.g. "km::{}"

    def show(self, identifier: str) -> str:
        if self.language == FILES:
            return f"the generated file {self.label.format(identifier)}"
        return f"the {self.language} name {self.label.format(identifier)}"


class Numbers(NamedTuple):
    """Where a layout's numbers are defined: the C header, the Python layout module and
    the C++ header's namespace."""

    c: Scope
    py: Scope
    cpp: Scope


_KEYWORDS = {"C": C_KEYWORDS, "C++": CPP_KEYWORDS, "Python": PYTHON_KEYWORDS}


@functools.cache
def _keywords(languages: tuple[str, ...]) -> Mapping[str, Source]:
    """The keywords of ``languages``, each saying which of them keeps it (shared by scopes)."""
    words = sorted({word for lang in languages for word in _KEYWORDS[lang]})
    return MappingProxyType(
        {word: Source("a keyword of " + " and ".join(lang for lang in languages if word in _KEYWORDS[lang])) for word in words}
    )


class Namespaces:
    """Every scope of the generated files, the identifiers defined in each and what each
    belongs to, and the identifiers two things share."""

    def __init__(self) -> None:
        self.owners: dict[Scope, dict[str, Source]] = {}  # what the generated code defines
        self.keywords: dict[Scope, Mapping[str, Source]] = {}
        self.taken: dict[Scope, dict[str, Source]] = {}  # names the code uses (builtins, types)
        # (first owner, second owner) -> the identifiers they share, shown with their scope
        self.collisions: dict[tuple[Source, Source], list[str]] = {}

    def scope(
        self,
        unit: str,
        language: str,
        label: str,
        *,
        keywords: Iterable[str] = (),
        uses: Iterable[tuple[str, str]] = (),
        defines: Iterable[tuple[str, str]] = (),
    ) -> Scope:
        """The scope (made on first use): the keywords of the ``keywords`` languages and the
        names the generated code ``uses`` there (builtins, types) cannot be defined in it;
        ``defines`` are the names the generated code defines there whatever the spec says.
        Both are (identifier, what it is) pairs."""
        scope = Scope(unit, language, label)
        if scope not in self.owners:
            self.owners[scope] = {}
            self.keywords[scope] = _keywords(tuple(keywords))
            self.taken[scope] = {}
        for identifier, what in uses:
            self.taken[scope].setdefault(identifier, Source(what))
        for identifier, what in defines:
            self.claim(scope, identifier, Source(what))
        return scope

    def claim(self, scope: Scope, identifier: str | None, source: Source) -> None:
        if identifier is None:
            return
        other = self.keywords[scope].get(identifier) or self.taken[scope].get(identifier) or self.owners[scope].get(identifier)
        if other is None:
            self.owners[scope][identifier] = source
        elif other.what != source.what:  # the same thing twice is a duplicate name, reported where it is declared
            self.collisions.setdefault((other, source), []).append(scope.show(identifier))

    def number(self, scopes: Numbers, names: Names, source: Source) -> None:
        """A number's names: its C macro, its Python constant and its C++ constant (if any)."""
        self.claim(scopes.c, names.c, source)
        self.claim(scopes.cpp, names.cpp, source)
        self.claim(scopes.py, names.py, source)

    def report(self, sink: DiagnosticSink) -> None:
        for (first, second), shown in self.collisions.items():
            names = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
            if first.mark is None or second.mark is None:
                fixed, named = (first, second) if first.mark is None else (second, first)
                assert named.mark is not None, (first, second)  # two fixed names never meet
                sink.error(named.mark, f"{named.what} gets {names}, which is {fixed.what}; rename it")
                continue
            # Reported at the later of the two in the file, with the earlier one as a note.
            earlier, later = (first, second)
            if _position(second.mark) < _position(first.mark):
                earlier, later = later, earlier
            assert earlier.mark is not None and later.mark is not None
            sink.error(
                later.mark,
                f"{later.what} gets {names}, which {earlier.what} also gets; rename one of them",
                [Diagnostic(earlier.mark, f"{earlier.what} comes from here")],
            )


def _position(mark: Mark) -> tuple[str, int, int]:
    return (mark.file, mark.line, mark.column)


def check(layouts: LayoutModel, programs: ProgramModel, sink: DiagnosticSink, c_prefix_marks: Mapping[str, Mark] | None = None) -> None:
    """Report every identifier that two things of the layouts and programs share."""
    scan(layouts, programs, c_prefix_marks).report(sink)


def scan(layouts: LayoutModel, programs: ProgramModel, c_prefix_marks: Mapping[str, Mark] | None = None) -> Namespaces:
    """Every identifier of the layouts' and programs' generated files, in its scope.

    ``c_prefix_marks``: where each layout (by name) writes its C prefix; a collision of
    the files the prefix names is shown at the layout without it."""
    namespaces = Namespaces()
    # A program's headers are compiled with its layout's, never with another layout's, and
    # each layout has its own Python package: across layouts only package names meet, and
    # the files the layouts' prefixes name in one directory of the tree. The other files
    # of a layout or program are under its own (unique) name.
    packages = namespaces.scope(
        "", "Python", "{}", keywords=["Python"], defines=[(KERNEL_CONFIG_PACKAGE, "the generated kernel-configuration package")]
    )
    cpp_namespaces = namespaces.scope("", "C++", "namespace {}", keywords=["C++"])
    check_programs = namespaces.scope("", FILES, "tests/{}")
    for layout in layouts.layouts:
        namespaces.claim(packages, layout.names.py_package, Source(f"the Python package of layout {layout.name!r}", layout.python_package_mark))
        prefix_mark = (c_prefix_marks or {}).get(layout.name, layout.mark)
        namespaces.claim(check_programs, layout.names.c_check_program, Source(f"the C prefix {layout.c_prefix!r} of layout {layout.name!r}", prefix_mark))
        layout_programs = programs.for_layout(layout.name)
        _layout(namespaces, layout, has_programs=bool(layout_programs))
        # A namespace may be reopened, so only a keyword is wrong for one.
        if layout.names.cpp_namespace in CPP_KEYWORDS:
            namespaces.claim(cpp_namespaces, layout.names.cpp_namespace, Source(f"the C++ namespace of layout {layout.name!r}", layout.cpp_namespace_mark))
        for program in layout_programs:
            _program(namespaces, program)
            if program.names.cpp_namespace in CPP_KEYWORDS:
                namespaces.claim(cpp_namespaces, program.names.cpp_namespace, Source(f"program {program.name!r}", program.mark))
    return namespaces


def _c_global(ns: Namespaces, layout: Layout) -> Scope:
    n = layout.names
    header = f"the {{}} of {n.c_header}"
    return ns.scope(
        layout.name,
        "C",
        "{}",
        keywords=["C", "C++"],
        defines=[
            (n.c_static_assert, header.format("static-assert macro")),
            (n.c_static_assert_join, header.format("static-assert helper macro")),
            (n.c_static_assert_join2, header.format("static-assert helper macro")),
            (n.c_header_guard, header.format("include guard")),
            (n.cpp_header_guard, f"the include guard of {n.cpp_header}"),
        ],
    )


def _layout(ns: Namespaces, layout: Layout, *, has_programs: bool) -> None:
    n = layout.names
    package = n.py_package
    c = _c_global(ns, layout)
    cpp = ns.scope(layout.name, "C++", n.cpp_namespace + "::{}", keywords=["C++"])
    py = ns.scope(
        layout.name,
        "Python",
        f"{package}.layout.{{}}",
        keywords=["Python"],
        uses=[(name, "a builtin the generated layout module uses") for name in PY_LAYOUT_BUILTINS],
        defines=[
            *((name, "a name the generated layout module imports") for name in PY_LAYOUT_IMPORTS),
            ("WORD_BITS", "the word width the generated layout module defines"),
            ("WORD_BYTES", "the word size the generated layout module defines"),
        ],
    )
    # The package's __init__ imports every name of the codec beside its submodules.
    submodules = [("codec", f"the module {package}.codec")]
    if has_programs:
        submodules.append(("programs", f"the package {package}.programs"))
    codec = ns.scope(
        layout.name,
        "Python",
        f"{package}.codec.{{}}",
        keywords=["Python"],
        uses=[*_CODEC_BUILTINS, *submodules],
        defines=[
            *((name, "a name the generated codec imports") for name in PY_CODEC_IMPORTS),
            ("NotLandedError", "the error the generated codec defines"),
        ],
    )
    numbers = Numbers(c=c, py=py, cpp=cpp)

    version = layout.version
    ns.number(numbers, version.names.major, Source(f"the ABI major version of layout {layout.name!r}", version.mark))
    ns.number(numbers, version.names.minor, Source(f"the ABI minor version of layout {layout.name!r}", version.mark))

    for constant in layout.constants:
        source = Source(f"constant {constant.name!r}", constant.mark)
        ns.number(numbers, constant.names.number, source)
        ns.claim(codec, constant.names.py_converter, Source(f"the converter of constant {constant.name!r}", constant.mark))

    for enum in layout.enums:
        ns.claim(cpp, enum.names.cpp_type, Source(f"enum {enum.name!r}", enum.mark))
        ns.claim(py, enum.names.py_class, Source(f"enum {enum.name!r}", enum.mark))
        ns.claim(py, enum.names.py_display_table, Source(f"the printed names of enum {enum.name!r}", enum.mark))
        members = ns.scope(layout.name, "Python", f"{package}.layout.{enum.names.py_class}.{{}}", keywords=["Python"])
        for value in enum.named_values:
            assert value.names is not None
            source = Source(f"value {value.name!r} of enum {enum.name!r}", value.name_mark)
            ns.number(numbers, value.names.number, source)
            ns.claim(members, value.names.py_member, source)
        for rng in enum.ranges:
            of = f"range {rng.name!r} of enum {enum.name!r}"
            ns.number(numbers, rng.names.min, Source(f"the first value of {of}", rng.name_mark))
            ns.number(numbers, rng.names.max, Source(f"the last value of {of}", rng.name_mark))

    for word in layout.words:
        wn = word.names
        ns.claim(c, wn.c_pack, Source(f"the pack function of word {word.name!r}", word.mark))
        ns.claim(py, wn.py_descriptor, Source(f"the description of word {word.name!r}", word.mark))
        ns.claim(codec, wn.py_class, Source(f"word {word.name!r}", word.mark))
        ns.claim(codec, wn.py_decoder, Source(f"the decoder of word {word.name!r}", word.mark))
        params = ns.scope(
            layout.name,
            "C",
            f"{{}} (a parameter of {wn.c_pack})",
            keywords=["C", "C++"],
            uses=[("uint32_t", f"the type {wn.c_pack} uses")],
            defines=[("word", f"the local variable of {wn.c_pack}")],
        )
        attributes = _word_class(ns, layout, word.sequence_follows, wn.py_class)
        for f in word.fields:
            of = f"bit field {f.name!r} of word {word.name!r}"
            fn = f.names
            if fn.value is not None:
                ns.number(numbers, fn.value, Source(f"the value of {of}", f.name_mark))
            ns.number(numbers, fn.shift, Source(f"the shift of {of}", f.name_mark))
            ns.number(numbers, fn.mask, Source(f"the mask of {of}", f.name_mark))
            ns.claim(c, fn.c_accessor, Source(f"the accessor of {of}", f.name_mark))
            ns.claim(params, fn.c_parameter, Source(of, f.name_mark))
            ns.claim(attributes, fn.py_attribute, Source(of, f.name_mark))
            ns.claim(attributes, fn.py_display, Source(f"the printed name of {of}", f.name_mark))

    for struct in layout.structs:
        _struct(ns, layout, struct, numbers, codec)

    for table in layout.tables:
        tn = table.names
        ns.number(numbers, tn.size, Source(f"the size of table {table.name!r}", table.count_mark))
        ns.claim(codec, tn.py_class, Source(f"table {table.name!r}", table.mark))
        ns.claim(codec, tn.py_decoder, Source(f"the decoder of table {table.name!r}", table.mark))
        attributes = ns.scope(layout.name, "Python", f"{package}.codec.{tn.py_class}.{{}}", keywords=["Python"], uses=_CODEC_CLASS_BODY)
        for entry in table.named_entries:
            source = Source(f"entry {entry.name!r} of table {table.name!r}", entry.name_mark)
            ns.number(numbers, entry.names.number, source)
            ns.claim(attributes, entry.names.py_attribute, source)

    for block in layout.blocks:
        ns.number(numbers, block.names.size, Source(f"the size of block {block.name!r}", block.mark))
        for region in block.named_regions:
            assert region.names is not None
            of = f"region {region.name!r} of block {block.name!r}"
            rn = region.names
            ns.number(numbers, rn.offset, Source(f"the offset of {of}", region.name_mark))
            ns.number(numbers, rn.size, Source(f"the size of {of}", region.name_mark))
            if rn.slots is not None and rn.slot_size is not None:
                ns.number(numbers, rn.slots, Source(f"the slot count of {of}", region.name_mark))
                ns.number(numbers, rn.slot_size, Source(f"the slot size of {of}", region.name_mark))


def _word_class(ns: Namespaces, layout: Layout, sequence_follows: bool, py_class: str) -> Scope:
    defines = [("checked", "the decoding switch of the generated classes"), ("pack", "the method that packs the word")]
    if sequence_follows:
        defines.append(("sequence", "the sequence number that follows the word"))
    return ns.scope(layout.name, "Python", f"{layout.names.py_package}.codec.{py_class}.{{}}", keywords=["Python"], uses=_CODEC_CLASS_BODY, defines=defines)


def _struct(ns: Namespaces, layout: Layout, struct: Struct, numbers: Numbers, codec: Scope) -> None:
    c = numbers.c
    sn = struct.names
    package = layout.names.py_package
    source = Source(f"struct {struct.name!r}", struct.mark)
    ns.claim(c, sn.c_tag, source)
    ns.claim(c, sn.c_type, source)
    ns.claim(codec, sn.py_class, source)
    ns.number(numbers, sn.size, Source(f"the size of struct {struct.name!r}", struct.mark))
    ns.claim(c, sn.c_landed, Source(f"the landing check of struct {struct.name!r}", struct.landed_mark))
    members = ns.scope(layout.name, "C", f"{{}} (a member of {sn.c_type})", keywords=["C", "C++"])
    in_class = f"{package}.codec.{sn.py_class}"
    defines = [
        ("checked", "the decoding switch of the generated classes"),
        ("pack", "the method that packs the struct"),
        ("unpack", "the method that unpacks the struct"),
    ]
    if struct.copies:
        defines.append(("landed", "the method that checks the struct's copies"))
    attributes = ns.scope(layout.name, "Python", in_class + ".{}", keywords=["Python"], uses=_CODEC_CLASS_BODY, defines=defines)
    checks = ns.scope(
        layout.name,
        "Python",
        f"{{}} (a local of {in_class}.__post_init__)",
        keywords=["Python"],
        uses=_CODEC_GLOBALS,
        defines=[(name, f"a local of {in_class}.__post_init__") for name in ("self", "checked", "index", "value")],
    )
    words = {w.name: w for w in layout.words}
    decoders = [
        (words[f.word].names.py_decoder, f"the decoder of word {f.word!r}, which {in_class}.unpack calls")
        for f in struct.word_fields
        if f.word in words
    ]
    unpack = ns.scope(
        layout.name,
        "Python",
        f"{{}} (a local of {in_class}.unpack)",
        keywords=["Python"],
        uses=[*_CODEC_GLOBALS, *decoders],
        defines=[(name, f"a local of {in_class}.unpack") for name in ("cls", "data", "words")],
    )
    for f in struct.fields:
        of = Source(f"field {f.name!r} of struct {struct.name!r}", f.name_mark)
        ns.claim(members, f.names.c_member, of)
        ns.number(numbers, f.names.offset, Source(f"the offset of field {f.name!r} of struct {struct.name!r}", f.name_mark))
    for f in (*struct.copied, *struct.plain_fields):
        ns.claim(attributes, f.names.py_attribute, Source(f"field {f.name!r} of struct {struct.name!r}", f.name_mark))
    for holder in struct.word_fields:
        ns.claim(unpack, holder.names.py_attribute, Source(f"field {holder.name!r} of struct {struct.name!r}", holder.name_mark))
        word = words.get(holder.word or "")
        if word is None:
            continue  # the layout's own error names the unknown word
        # The struct's class takes these attributes because the field holds the word.
        for bits in word.free_fields:
            held = f"bit field {bits.name!r} of word {word.name!r}, held by field {holder.name!r} of struct {struct.name!r}"
            ns.claim(attributes, bits.names.py_attribute, Source(held, holder.name_mark))
    for array in struct.arrays:
        an = array.names
        of = Source(f"array {array.name!r} of struct {struct.name!r}", array.name_mark)
        ns.number(numbers, an.length, Source(f"the length of array {array.name!r} of struct {struct.name!r}", array.name_mark))
        ns.claim(c, an.c_get, Source(f"the reader of array {array.name!r} of struct {struct.name!r}", array.name_mark))
        ns.claim(c, an.c_set, Source(f"the writer of array {array.name!r} of struct {struct.name!r}", array.name_mark))
        ns.claim(attributes, an.py_attribute, of)
        ns.claim(checks, an.py_attribute, of)


def _program(ns: Namespaces, program: Program) -> None:
    layout = program.layout
    pn = program.names
    package = layout.names.py_package
    shape = program.command
    module = f"{package}.programs.{pn.py_module}"
    program_source = Source(f"program {program.name!r}", program.mark)
    c = _c_global(ns, layout)
    ns.claim(c, pn.cpp_header_guard, Source(f"the include guard of program {program.name!r}'s header", program.mark))
    modules = ns.scope(layout.name, "Python", f"{package}.programs.{{}}", keywords=["Python"])
    ns.claim(modules, pn.py_module, program_source)
    cpp = ns.scope(layout.name, "C++", pn.cpp_namespace + "::{}", keywords=["C++"])
    py = ns.scope(
        layout.name,
        "Python",
        module + ".{}",
        keywords=["Python"],
        uses=_PROGRAM_BUILTINS,
        defines=[(name, "a name the generated program module imports") for name in PY_PROGRAM_IMPORTS],
    )
    ns.claim(py, shape.struct.names.py_class, Source(f"struct {shape.struct.name!r}", shape.struct.mark))
    callers = [(f.names.py_attribute, _caller_source(program, f)) for f in shape.caller_fields]
    flags = shape.flags_field
    flags_source = _caller_source(program, flags)
    for handler in program.handlers:
        hn = handler.names
        of = f"handler {handler.name!r} of program {program.name!r}"
        ns.claim(cpp, hn.cpp_handler, Source(f"the id of {of}", handler.name_mark))
        ns.claim(cpp, hn.cpp_flags, Source(f"the flags of {of}", handler.name_mark))
        ns.claim(py, hn.py_handler, Source(f"the id of {of}", handler.name_mark))
        ns.claim(py, hn.py_flags, Source(f"the flags of {of}", handler.name_mark))
        ns.claim(py, hn.py_args_class, Source(f"the arguments of {of}", handler.name_mark))
        ns.claim(py, hn.py_builder, Source(f"the builder of {of}", handler.name_mark))
        ns.claim(py, hn.py_args_function, Source(f"the argument reader of {of}", handler.name_mark))
        parameters = ns.scope(layout.name, "Python", f"{{}} (a parameter of {module}.{hn.py_builder})", keywords=["Python"])
        fields = ns.scope(layout.name, "Python", f"{module}.{hn.py_args_class}.{{}}", keywords=["Python"], uses=_PROGRAM_BUILTINS)
        for name, source in callers:
            ns.claim(parameters, name, source)
        for arg in handler.args:
            source = Source(f"argument {arg.name!r} of {of}", arg.mark)
            ns.claim(cpp, arg.names.cpp_accessor, Source(f"the accessor of argument {arg.name!r} of {of}", arg.mark))
            ns.claim(parameters, arg.names.py_name, source)
            ns.claim(fields, arg.names.py_name, source)
        ns.claim(parameters, flags.names.py_attribute, flags_source)


def _caller_source(program: Program, field: StructField | BitField) -> Source:
    """A field of the command struct, or a bit field of a word it holds."""
    if isinstance(field, StructField):
        return Source(f"field {field.name!r} of struct {program.command.struct.name!r}", field.name_mark)
    word = next(w.name for w in program.layout.words if any(f is field for f in w.fields))
    return Source(f"bit field {field.name!r} of word {word!r}", field.name_mark)
