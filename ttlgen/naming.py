"""How a spec name becomes an identifier in each generated language, in one place.

Words are the alphanumeric runs of a name, so ``tile_add``, ``tile-add`` and ``TileAdd``
split alike. ``upper_snake``, ``snake`` and ``camel`` are the casings; :class:`CNaming`,
:class:`CppNaming` and :class:`PythonNaming` are the one naming rule of each language, a
method per kind of identifier, which the model applies to every named thing of a layout
and a program. The keyword sets are the names each language keeps for itself, which a
spec name must not take.
"""

from __future__ import annotations

import keyword
import re

_WORD = re.compile(r"[A-Za-z0-9]+")


def words(*parts: str) -> list[str]:
    return [w for part in parts for w in _WORD.findall(part)]


def upper_snake(*parts: str) -> str:
    """``gave`` + ``limit`` -> ``GAVE_LIMIT``."""
    return "_".join(w.upper() for w in words(*parts))


def snake(*parts: str) -> str:
    return "_".join(w.lower() for w in words(*parts))


def camel(*parts: str) -> str:
    """``tile_add`` -> ``TileAdd``."""
    return "".join(w[:1].upper() + w[1:] for w in words(*parts))


class CNaming:
    """C identifiers of a layout with prefix ``KM``: macros ``KM_...``, functions ``km_...``,
    types ``km_..._t``."""

    __slots__ = ("prefix",)

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def macro(self, *parts: str) -> str:
        """``gave`` + ``limit`` -> ``KM_GAVE_LIMIT``."""
        return upper_snake(self.prefix, *parts)

    def function(self, *parts: str) -> str:
        """``hdr`` + ``pack`` -> ``km_hdr_pack``."""
        return snake(self.prefix, *parts)

    def tag(self, *parts: str) -> str:
        """``command`` -> ``km_command`` (``struct km_command``)."""
        return snake(self.prefix, *parts)

    def type(self, *parts: str) -> str:
        """``command`` -> ``km_command_t``."""
        return snake(self.prefix, *parts) + "_t"

    def member(self, name: str) -> str:
        """A struct member or a function parameter: the spec name itself."""
        return snake(name)

    def file_stem(self) -> str:
        """``km``: the stem of the layout's C file names (``km_abi.h``)."""
        return snake(self.prefix)

    @staticmethod
    def include_guard(path: str) -> str:
        """``komorebi/abi/km_abi.h`` -> ``KOMOREBI_ABI_KM_ABI_H``."""
        return upper_snake(path)


class CppNaming:
    """C++ identifiers: constants ``kGaveLimit``, types ``Gave``, functions ``map_src``."""

    @staticmethod
    def constant(*parts: str) -> str:
        """``gave`` + ``limit`` -> ``kGaveLimit``; ``c_arg`` + ``me`` -> ``kCArgMe``."""
        return "k" + camel(*parts)

    @staticmethod
    def type(*parts: str) -> str:
        return camel(*parts)

    @staticmethod
    def function(*parts: str) -> str:
        return snake(*parts)

    @staticmethod
    def namespace(name: str) -> str:
        return snake(name)


class PythonNaming:
    """Python identifiers: constants ``GAVE_LIMIT``, classes ``GaveUp``, functions and
    attributes ``decode_hdr``, modules ``mapcollect``."""

    @staticmethod
    def constant(*parts: str) -> str:
        return upper_snake(*parts)

    @staticmethod
    def class_(*parts: str) -> str:
        return camel(*parts)

    @staticmethod
    def function(*parts: str) -> str:
        return snake(*parts)

    @staticmethod
    def attribute(*parts: str) -> str:
        return snake(*parts)

    @staticmethod
    def module(name: str) -> str:
        return snake(name)


# Keywords of C17 and C23 (the lower-case ones a snake_case spec name can be).
C_KEYWORDS = frozenset(
    {
        "alignas", "alignof", "auto", "bool", "break", "case", "char", "const", "constexpr",
        "continue", "default", "do", "double", "else", "enum", "extern", "false", "float", "for",
        "goto", "if", "inline", "int", "long", "nullptr", "register", "restrict", "return", "short",
        "signed", "sizeof", "static", "static_assert", "struct", "switch", "thread_local", "true",
        "typedef", "typeof", "typeof_unqual", "union", "unsigned", "void", "volatile", "while"
    }
)

# Keywords and alternative tokens of C++20.
CPP_KEYWORDS = frozenset(
    {
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
        "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
        "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
        "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
        "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
        "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
        "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
        "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
        "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
        "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
        "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"
    }
)

PYTHON_KEYWORDS = frozenset(keyword.kwlist)
