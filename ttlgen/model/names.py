"""The identifiers a layout and its programs get in every generated language, derived here only.

Each named thing of a layout or a program carries one record of its names, made by
:class:`LayoutNamer` or :class:`ProgramNamer` from the language rules of
:mod:`ttlgen.naming`: a C macro, a C++ constant, a Python constant, a class, a function,
a header's include guard. Emitters and templates print these records and derive nothing,
so :mod:`ttlgen.model.namespaces` can check for collisions exactly what the compilers
will see. The records are named tuples: as immutable as frozen dataclasses, and much
cheaper to define, which every run of ttlgen pays for at import.
"""

from __future__ import annotations

from typing import NamedTuple

from ttlgen.naming import CNaming, CppNaming, PythonNaming


class Names(NamedTuple):
    """The names of one number: a C macro, a constant of the Python ``layout`` module and,
    when the C++ header has it, a C++ constant."""

    c: str  # KM_GAVE_LIMIT
    py: str  # GAVE_LIMIT
    cpp: str | None = None  # kGaveLimit


class VersionNames(NamedTuple):
    """The layout's ABI version numbers."""

    major: Names  # KM_ABI_VERSION_MAJOR, ABI_VERSION_MAJOR, kAbiVersionMajor
    minor: Names  # KM_ABI_VERSION_MINOR


class ConstantNames(NamedTuple):
    number: Names
    py_converter: str | None  # limit_units: the codec's seconds-to-units function


class EnumNames(NamedTuple):
    cpp_type: str  # Gave
    py_class: str  # Gave
    py_display_table: str  # GAVE_NAMES: value -> how the runtime prints it


class EnumValueNames(NamedTuple):
    number: Names  # KM_GAVE_LIMIT, GAVE_LIMIT, kGaveLimit
    py_member: str  # LIMIT, in the Python enum class


class EnumRangeNames(NamedTuple):
    min: Names  # KM_HANDLER_USER_MIN
    max: Names  # KM_HANDLER_USER_MAX


class BitFieldNames(NamedTuple):
    value: Names | None  # KM_MAGIC_MARKER: the marker value of a fixed field
    shift: Names  # KM_HDR_SLOT_SHIFT
    mask: Names  # KM_HDR_SLOT_MASK
    # The rest only for fields a caller sets (not fixed markers):
    c_accessor: str | None  # km_hdr_slot(word)
    c_parameter: str | None  # slot, in km_hdr_pack(handler, flags, slot)
    py_attribute: str | None  # slot: attribute of the word's class and of a struct's class
    py_display: str | None  # handler_name: how an enum field is printed (enum fields only)


class WordNames(NamedTuple):
    c_pack: str  # km_hdr_pack
    py_descriptor: str  # HDR: the Word description in the layout module
    py_class: str  # Hdr
    py_decoder: str  # decode_hdr


class StructFieldNames(NamedTuple):
    c_member: str  # hdr
    offset: Names  # KM_COMMAND_HDR_OFFSET, COMMAND_HDR_OFFSET
    py_attribute: str  # sequence: attribute of the struct's class (copied and plain fields)


class StructArrayNames(NamedTuple):
    length: Names  # KM_COMMAND_ARGS
    c_get: str  # km_command_args
    c_set: str  # km_command_set_args
    py_attribute: str  # args


class StructNames(NamedTuple):
    c_tag: str  # km_command
    c_type: str  # km_command_t
    size: Names  # KM_COMMAND_BYTES
    c_landed: str | None  # KM_LANDED: the macro that checks every copy
    py_class: str  # Command


class TableEntryNames(NamedTuple):
    number: Names  # KM_ST_LAST, ST_LAST, kStLast
    py_attribute: str  # last: attribute of the table's class


class TableNames(NamedTuple):
    size: Names  # KM_ST_WORDS: the number of words
    py_class: str  # State
    py_decoder: str  # decode_state


class RegionNames(NamedTuple):
    offset: Names  # KM_CONTROL_RING
    size: Names  # KM_CONTROL_RING_BYTES
    slots: Names | None  # KM_CONTROL_RING_SLOTS
    slot_size: Names | None  # KM_CONTROL_RING_SLOT_BYTES


class BlockNames(NamedTuple):
    size: Names  # KM_CONTROL_BYTES


class LayoutNames(NamedTuple):
    """The layout's files and the names its generated files define whatever the spec says."""

    c_header: str  # komorebi/abi/km_abi.h, relative to the include directory
    c_header_guard: str  # KOMOREBI_ABI_KM_ABI_H
    c_static_assert: str  # KM_STATIC_ASSERT
    c_static_assert_join: str  # KM_STATIC_ASSERT_JOIN (C99 fallback)
    c_static_assert_join2: str  # KM_STATIC_ASSERT_JOIN2
    c_static_assert_typedef: str  # km_static_assert_: stem of the C99 fallback's typedefs
    c_check_program: str  # km_abi_offsets.c: the run-time check of the header
    cpp_header: str  # komorebi/device/km_layout.hpp
    cpp_header_guard: str  # KOMOREBI_DEVICE_KM_LAYOUT_HPP
    cpp_namespace: str  # km
    py_package: str  # komorebi_abi


class HandlerNames(NamedTuple):
    cpp_handler: str  # kHandlerMap
    cpp_flags: str  # kFlagsMap
    py_handler: str  # HANDLER_MAP
    py_flags: str  # FLAGS_MAP
    py_args_class: str  # MapArgs
    py_builder: str  # map_command
    py_args_function: str  # map_args


class ArgumentNames(NamedTuple):
    cpp_accessor: str  # map_src(command)
    py_name: str  # src: a builder parameter and a field of the handler's Args tuple


class ProgramNames(NamedTuple):
    cpp_header: str  # komorebi/programs/mapcollect.hpp
    cpp_header_guard: str  # KOMOREBI_PROGRAMS_MAPCOLLECT_HPP
    cpp_namespace: str  # mapcollect
    py_module: str  # mapcollect, in the layout's package: komorebi_abi.programs.mapcollect


class LayoutNamer:
    """The names of every kind of thing in one layout."""

    def __init__(self, layout: str, c_prefix: str, cpp_namespace: str, python_package: str) -> None:
        self.layout = layout
        self.c = CNaming(c_prefix)
        self.cpp = CppNaming()
        self.py = PythonNaming()
        self.cpp_namespace = cpp_namespace
        self.python_package = python_package

    def number(self, *parts: str, cpp: bool = True) -> Names:
        """A number that the C header and the Python layout module (and the C++ header, if
        ``cpp``) define."""
        return Names(c=self.c.macro(*parts), py=self.py.constant(*parts), cpp=self.cpp.constant(*parts) if cpp else None)

    def layout_names(self) -> LayoutNames:
        stem = self.c.file_stem()
        c_header = f"{self.layout}/abi/{stem}_abi.h"
        cpp_header = f"{self.layout}/device/{stem}_layout.hpp"
        return LayoutNames(
            c_header=c_header,
            c_header_guard=self.c.include_guard(c_header),
            c_static_assert=self.c.macro("static", "assert"),
            c_static_assert_join=self.c.macro("static", "assert", "join"),
            c_static_assert_join2=self.c.macro("static", "assert", "join2"),
            c_static_assert_typedef=self.c.function("static", "assert") + "_",
            c_check_program=f"{stem}_abi_offsets.c",
            cpp_header=cpp_header,
            cpp_header_guard=self.c.include_guard(cpp_header),
            cpp_namespace=self.cpp.namespace(self.cpp_namespace),
            py_package=self.py.module(self.python_package),
        )

    def version(self) -> VersionNames:
        return VersionNames(major=self.number("abi", "version", "major"), minor=self.number("abi", "version", "minor"))

    def constant(self, name: str, converter: str | None) -> ConstantNames:
        return ConstantNames(self.number(name), self.py.function(converter) if converter is not None else None)

    def enum(self, name: str) -> EnumNames:
        return EnumNames(cpp_type=self.cpp.type(name), py_class=self.py.class_(name), py_display_table=self.py.constant(name, "names"))

    def enum_value(self, prefix: str, name: str) -> EnumValueNames:
        return EnumValueNames(self.number(prefix, name), py_member=self.py.constant(name))

    def enum_range(self, prefix: str, name: str) -> EnumRangeNames:
        return EnumRangeNames(min=self.number(prefix, name, "min"), max=self.number(prefix, name, "max"))

    def bit_field(self, word: str, name: str, *, fixed: bool, enum: bool) -> BitFieldNames:
        free = not fixed
        return BitFieldNames(
            value=self.number(word, name) if fixed else None,
            shift=self.number(word, name, "shift"),
            mask=self.number(word, name, "mask"),
            c_accessor=self.c.function(word, name) if free else None,
            c_parameter=self.c.member(name) if free else None,
            py_attribute=self.py.attribute(name) if free else None,
            py_display=self.py.attribute(name, "name") if free and enum else None,
        )

    def word(self, name: str) -> WordNames:
        return WordNames(
            c_pack=self.c.function(name, "pack"),
            py_descriptor=self.py.constant(name),
            py_class=self.py.class_(name),
            py_decoder=self.py.function("decode", name),
        )

    def struct_field(self, struct: str, name: str) -> StructFieldNames:
        return StructFieldNames(
            c_member=self.c.member(name), offset=self.number(struct, name, "offset", cpp=False), py_attribute=self.py.attribute(name)
        )

    def struct_array(self, struct: str, name: str) -> StructArrayNames:
        return StructArrayNames(
            length=self.number(struct, name, cpp=False),
            c_get=self.c.function(struct, name),
            c_set=self.c.function(struct, "set", name),
            py_attribute=self.py.attribute(name),
        )

    def struct(self, name: str, landed: str | None) -> StructNames:
        return StructNames(
            c_tag=self.c.tag(name),
            c_type=self.c.type(name),
            size=self.number(name, "bytes", cpp=False),
            c_landed=self.c.macro(landed) if landed is not None else None,
            py_class=self.py.class_(name),
        )

    def table_entry(self, prefix: str, name: str) -> TableEntryNames:
        return TableEntryNames(self.number(prefix, name), py_attribute=self.py.attribute(name))

    def table(self, name: str, count_name: str) -> TableNames:
        return TableNames(size=self.number(count_name), py_class=self.py.class_(name), py_decoder=self.py.function("decode", name))

    def region(self, block_prefix: str, name: str, *, slotted: bool) -> RegionNames:
        return RegionNames(
            offset=self.number(block_prefix, name, cpp=False),
            size=self.number(block_prefix, name, "bytes", cpp=False),
            slots=self.number(block_prefix, name, "slots", cpp=False) if slotted else None,
            slot_size=self.number(block_prefix, name, "slot", "bytes", cpp=False) if slotted else None,
        )

    def block(self, prefix: str) -> BlockNames:
        return BlockNames(size=self.number(prefix, "bytes", cpp=False))


class ProgramNamer:
    """The names of a program's header, its handlers and their arguments."""

    def __init__(self, program: str, layout: str) -> None:
        self.program = program
        self.layout = layout
        self.cpp = CppNaming()
        self.py = PythonNaming()

    def program_names(self) -> ProgramNames:
        header = f"{self.layout}/programs/{self.program}.hpp"
        return ProgramNames(
            cpp_header=header,
            cpp_header_guard=CNaming.include_guard(header),
            cpp_namespace=self.cpp.namespace(self.program),
            py_module=self.py.module(self.program),
        )

    def handler(self, name: str) -> HandlerNames:
        return HandlerNames(
            cpp_handler=self.cpp.constant("handler", name),
            cpp_flags=self.cpp.constant("flags", name),
            py_handler=self.py.constant("handler", name),
            py_flags=self.py.constant("flags", name),
            py_args_class=self.py.class_(name, "args"),
            py_builder=self.py.function(name, "command"),
            py_args_function=self.py.function(name, "args"),
        )

    def argument(self, handler: str, name: str) -> ArgumentNames:
        return ArgumentNames(cpp_accessor=self.cpp.function(handler, name), py_name=self.py.attribute(name))
