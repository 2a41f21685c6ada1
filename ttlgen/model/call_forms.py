"""Spelled C++ calls: ``function<template_args>(args)`` with ``{placeholders}`` and literals.

The spelling spec writes every kernel-API call this way, and the emulation spec writes its
glue calls the same way (without placeholders). :func:`parse_call` reads exactly one call
into a :class:`CallForm`; anything else raises :class:`FormError` saying what follows or
what was expected. A placeholder's :class:`ArgKind` is fixed by its name.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ttlgen.errors import Mark

# C++ keywords and literals: never a name the spelling spec introduces.
CPP_KEYWORDS = frozenset(
    [
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
        "case", "catch", "char", "char16_t", "char32_t", "char8_t", "class", "co_await",
        "co_return", "co_yield", "compl", "concept", "const", "const_cast", "consteval",
        "constexpr", "constinit", "continue", "decltype", "default", "delete", "do", "double",
        "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
        "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
        "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
        "register", "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
        "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
        "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
        "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    ]
)


class ArgKind(enum.Enum):
    """What a call argument is; every placeholder has exactly one kind."""

    CB = "cb"  # a circular-buffer (dataflow buffer) id
    TILE = "tile"  # a tile of a CB's waited or reserved block, or a page of a DRAM tensor
    DST = "dst"  # a DST slot
    COUNT = "count"  # a number of tiles, or a block dimension in tiles
    FLAG = "flag"  # an on/off switch (0 or 1)
    ENUMERATOR = "enumerator"  # an op attribute's value, as `attributes` spells it
    FLOAT = "float"  # a number attribute's value (ops spec `float`), as an fp32 literal
    INDEX = "index"  # a runtime- or compile-time-argument index
    ADDRESS = "address"  # an L1 or DRAM address
    ACCESSOR = "accessor"  # a DRAM tensor's address generator, or its compile-time arguments
    BYTES = "bytes"  # a size in bytes
    LITERAL = "literal"  # written in the spelling itself: 0, true, an enumerator, uint32_t
    FORMAT = "format"  # a tile data format's numeric code, as the runtime's enumeration numbers it

    @property
    def described(self) -> str:
        """The kind in a message: ``a DST slot``."""
        return _DESCRIBED[self]

    @property
    def value_type(self) -> str | None:
        """What C++ sees when a placeholder of this kind is bound: ``integer`` or ``float``;
        None where the spelling does not fix it (an attribute's enumerator is checked by each
        value its op spells, an accessor is an object, a literal placeholder is any text)."""
        if self in (ArgKind.ENUMERATOR, ArgKind.ACCESSOR, ArgKind.LITERAL):
            return None
        return "float" if self is ArgKind.FLOAT else "integer"


_DESCRIBED = {
    ArgKind.CB: "a circular-buffer id",
    ArgKind.TILE: "a tile index",
    ArgKind.DST: "a DST slot",
    ArgKind.COUNT: "a number of tiles",
    ArgKind.FLAG: "a 0/1 flag",
    ArgKind.ENUMERATOR: "an attribute's value",
    ArgKind.FLOAT: "a number attribute's fp32 value",
    ArgKind.INDEX: "an argument index",
    ArgKind.ADDRESS: "an address",
    ArgKind.ACCESSOR: "an accessor",
    ArgKind.BYTES: "a size in bytes",
    ArgKind.LITERAL: "a literal",
    ArgKind.FORMAT: "a data format's code",
}

# A call argument as a call check sees it: a literal's text (an attribute placeholder's
# spelled value is one), a placeholder's kind, or None for a value only binding computes.
CallArg = str | ArgKind | None


# The kind of each placeholder, by its name (or by the leaf after an operand name).
NAMED_KINDS = {
    "dst": ArgKind.DST,
    "pack": ArgKind.CB,
    "cb": ArgKind.CB,
    "srca": ArgKind.CB,
    "srcb": ArgKind.CB,
    "tile": ArgKind.TILE,
    "page": ArgKind.TILE,
    "rt": ArgKind.COUNT,
    "ct": ArgKind.COUNT,
    "kt": ArgKind.COUNT,
    "tiles": ArgKind.COUNT,
    "enable": ArgKind.FLAG,
    "index": ArgKind.INDEX,
    "l1": ArgKind.ADDRESS,
    "accessor": ArgKind.ACCESSOR,
    "offset": ArgKind.INDEX,
    "args": ArgKind.ACCESSOR,
    "address": ArgKind.ADDRESS,
    "page_size": ArgKind.BYTES,
    "format": ArgKind.FORMAT,
}
OPERAND_LEAVES = {"cb": ArgKind.CB, "tile": ArgKind.TILE, "dst": ArgKind.DST, "format": ArgKind.FORMAT}
OP_PLACEHOLDERS = ("dst", "pack", "rt", "ct", "kt", "format")


@dataclass(frozen=True)
class Placeholder:
    """A ``{key}`` of a spelled call, bound when a kernel is lowered."""

    key: str  # "dst", "lhs.cb", "attr.bcast"
    kind: ArgKind


@dataclass(frozen=True)
class Literal:
    """An argument written in the spelling itself: a number or an identifier."""

    text: str  # an integer, or a (qualified) identifier or keyword literal

    @property
    def integer(self) -> int | None:
        return int(self.text) if self.text.isdigit() else None


FormArg = Placeholder | Literal


@dataclass(frozen=True)
class CallForm:
    """One spelled call: ``function<template_args>(args)``, from the spec at ``mark``."""

    function: str
    template_args: tuple[FormArg, ...]
    args: tuple[FormArg, ...]
    text: str  # as written, for messages
    mark: Mark = field(compare=False)
    deprecated_ok: str | None = field(default=None, compare=False)  # why a deprecated form is used

    @property
    def arg_types(self) -> tuple[CallArg, ...]:
        """The function arguments as a call check sees them (:data:`CallArg`), each
        attribute placeholder by its kind (a caller that knows its spelled values binds them)."""
        return tuple(a.text if isinstance(a, Literal) else a.kind for a in self.args)

    def names(self) -> Iterator[str]:
        """The identifiers this call introduces: its function and literal scopes/names."""
        yield self.function
        for arg in (*self.template_args, *self.args):
            if isinstance(arg, Literal) and arg.integer is None:
                yield from identifiers(arg.text)


@dataclass(frozen=True)
class TypeForm:
    """A C++ type named by the spec, with optional literal template arguments."""

    name: str
    template_args: tuple[Literal, ...]
    mark: Mark = field(compare=False)


# ---------------------------------------------------------------------------- parsing


def identifiers(text: str) -> Iterator[str]:
    word = ""
    for ch in f"{text} ":
        if ch.isalnum() or ch == "_":
            word += ch
            continue
        if word and not word[0].isdigit():
            yield word
        word = ""


class FormError(Exception):
    """A spelled call that is not one call of the allowed shape; the message says why."""


_NAME_CHARS = re.compile(r"[\w:]*")  # \w: what str.isalnum() accepts, and "_"


class _Scanner:
    """Reads one spelled call: name [< args >] ( args ), nothing after it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            found = repr(self.text[self.pos :]) if self.pos < len(self.text) else "the end"
            raise FormError(f"expected {ch!r} at {found}")
        self.pos += 1

    def name(self) -> str:
        self.skip()
        start = self.pos
        found = _NAME_CHARS.match(self.text, start)
        assert found is not None  # it matches "" at least
        self.pos = found.end()
        word = self.text[start : self.pos]
        if not word or word[0].isdigit() or "" in word.split("::"):
            raise FormError(f"expected a name at {self.text[start:]!r}")
        return word

    def argument(self, kinds: Mapping[str, ArgKind] | None) -> FormArg:
        first = self.peek()
        if first == "{":
            self.pos += 1
            end = self.text.find("}", self.pos)
            if end < 0:
                raise FormError("unclosed '{'")
            key = self.text[self.pos : end].strip()
            self.pos = end + 1
            if kinds is not None and key not in kinds:
                allowed = ", ".join(f"{{{k}}}" for k in sorted(kinds)) or "none"
                raise FormError(f"unknown placeholder {{{key}}}; placeholders here: {allowed}")
            kind = kinds[key] if kinds is not None else kind_of(key)
            return Placeholder(key, kind)
        if first.isdigit():
            start = self.pos
            while self.pos < len(self.text) and self.text[self.pos].isdigit():
                self.pos += 1
            return Literal(self.text[start : self.pos])
        return Literal(self.name())

    def arguments(self, close: str, kinds: Mapping[str, ArgKind] | None) -> tuple[FormArg, ...]:
        out: list[FormArg] = []
        if self.peek() == close:
            self.pos += 1
            return ()
        while True:
            out.append(self.argument(kinds))
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect(close)
            return tuple(out)


def kind_of(key: str) -> ArgKind:
    root, _, leaf = key.partition(".")
    if root == "attr":
        return ArgKind.ENUMERATOR
    if leaf:
        return OPERAND_LEAVES.get(leaf, ArgKind.LITERAL)
    return NAMED_KINDS.get(key, ArgKind.LITERAL)


def parse_call(text: str, mark: Mark, kinds: Mapping[str, ArgKind] | None) -> CallForm:
    """``text`` as one call; ``kinds`` is the placeholders allowed there (None: any)."""
    scanner = _Scanner(text)
    function = scanner.name()
    template_args: tuple[FormArg, ...] = ()
    if scanner.peek() == "<":
        scanner.pos += 1
        template_args = scanner.arguments(">", kinds)
    scanner.expect("(")
    args = scanner.arguments(")", kinds)
    scanner.skip()
    if scanner.pos != len(scanner.text):
        raise FormError(f"{scanner.text[scanner.pos:]!r} follows the call; write exactly one call, without ';'")
    return CallForm(function, template_args, args, text, mark)


def parse_value(text: str) -> Literal:
    """``text`` as one literal value (an integer, ``true``, or a name such as
    ``Enum::VALUE``), as a define's expansion; anything else raises FormError."""
    scanner = _Scanner(text)
    value = scanner.argument({})
    if not isinstance(value, Literal):  # unreachable: no placeholder is allowed
        raise FormError(f"{text!r} is a placeholder")
    scanner.skip()
    if scanner.pos != len(scanner.text):
        raise FormError(f"{scanner.text[scanner.pos:]!r} follows the value")
    return value


def parse_define_value(text: str, kinds: Mapping[str, ArgKind]) -> FormArg:
    """``text`` as a define's value an op's spelling states: one placeholder of ``kinds`` or
    one literal (an integer, ``true``, ``Enum::VALUE``); anything else raises FormError."""
    scanner = _Scanner(text)
    value = scanner.argument(kinds)
    scanner.skip()
    if scanner.pos != len(scanner.text):
        raise FormError(f"{scanner.text[scanner.pos:]!r} follows the value; a define's value is one placeholder or one literal")
    return value
