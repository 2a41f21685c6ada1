"""C++ function declarations as the API specs write them, parsed into typed signatures.

A declaration is ``[template <params>] [constexpr] <type> <name>(<params>) [const]`` (a
constructor has no return type). Types are ``[const] name[<arguments>][&|*]``; default
values are kept as the spec writes them and checked by the caller, which knows the names
in scope. Only what tt-metal's kernel API uses is accepted: no function pointers, arrays or
variadic templates. A malformed declaration raises :class:`DeclarationError` with a
message saying where it stopped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

# C++'s own types (and the fixed-width ones every kernel header has): never an API type.
BUILTIN_TYPES = frozenset(
    ["void", "bool", "int", "unsigned", "float", "double", "char", "size_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "int8_t", "int16_t", "int32_t", "int64_t"]
)
_NUMBER = r"0[xX][0-9A-Fa-f]+|\d+(?:\.\d+)?[fFuU]?"
_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*"
_PUNCT = r"::|[<>(),=&*\-+|~!/%^?:]"
# A token of a declaration: a number, a (qualified) name or punctuation.
_TOKEN_TEXT = re.compile(f"{_NUMBER}|{_NAME}|{_PUNCT}")


_COMMA = re.compile(r",\s*")


class DeclarationError(Exception):
    pass


@dataclass(frozen=True)
class TypeRef:
    """A type as written: ``const Generator<DRAM, tile_hw>&``."""

    name: str
    args: tuple[str, ...]  # template arguments as written
    const: bool
    reference: bool
    pointer: bool

    @property
    def text(self) -> str:
        args = f"<{', '.join(self.args)}>" if self.args else ""
        return f"{'const ' if self.const else ''}{self.name}{args}{'&' if self.reference else ''}{'*' if self.pointer else ''}"

    def mentions(self, name: str) -> bool:
        """Whether the type is, or has a template argument, ``name`` (deduction of a parameter)."""
        return self.name == name or name in self.args


@dataclass(frozen=True)
class TemplateParam:
    """A template parameter of a declaration: a type, or a value of a type."""

    name: str
    type: TypeRef | None  # None: a type parameter (typename / class)
    default: str | None

    @property
    def text(self) -> str:
        head = f"typename {self.name}" if self.type is None else f"{self.type.text} {self.name}"
        return head if self.default is None else f"{head} = {self.default}"


@dataclass(frozen=True)
class Param:
    """A function parameter: its type, name and default."""

    type: TypeRef
    name: str | None
    default: str | None

    @property
    def text(self) -> str:
        head = self.type.text if self.name is None else f"{self.type.text} {self.name}"
        return head if self.default is None else f"{head} = {self.default}"


@dataclass(frozen=True)
class Signature:
    """A parsed C++ function or constructor declaration."""

    name: str
    returns: TypeRef | None  # None: a constructor
    template: tuple[TemplateParam, ...]
    params: tuple[Param, ...]
    constexpr: bool = False
    const: bool = False

    @property
    def required_args(self) -> int:
        return sum(1 for p in self.params if p.default is None)

    def deducible(self, param: TemplateParam) -> bool:
        """A template parameter the call's arguments determine."""
        return any(p.type.mentions(param.name) for p in self.params)

    def accepts_template_args(self, count: int) -> bool:
        """Whether ``count`` explicit template arguments leave every other parameter defaulted or deduced."""
        if count > len(self.template):
            return False
        return all(p.default is not None or self.deducible(p) for p in self.template[count:])

    def accepts_args(self, count: int) -> bool:
        return self.required_args <= count <= len(self.params)

    @property
    def shape(self) -> str:
        """The declaration without names or defaults' text, for messages: ``f<2 template>(3..5)``."""
        required = self.required_args
        arity = str(len(self.params)) if required == len(self.params) else f"{required} to {len(self.params)}"
        template = f"<{len(self.template)} template arguments>" if self.template else ""
        return f"{self.name}{template}({arity} arguments)"

    @property
    def text(self) -> str:
        """The declaration as the specs write it (what :func:`parse_declaration` reads back)."""
        template = f"template <{', '.join(t.text for t in self.template)}> " if self.template else ""
        constexpr = "constexpr " if self.constexpr else ""
        returns = f"{self.returns.text} " if self.returns is not None else ""
        params = ", ".join(p.text for p in self.params)
        return f"{template}{constexpr}{returns}{self.name}({params}){' const' if self.const else ''}"

    def names(self) -> Iterator[str]:
        """The parameter and template-parameter names, in scope in a body."""
        for t in self.template:
            yield t.name
        for p in self.params:
            if p.name is not None:
                yield p.name

    @functools.cached_property
    def name_set(self) -> frozenset[str]:
        """:meth:`names` as a set: every binding of the function asks whether it has theirs."""
        return frozenset(self.names())


def _tokenize(text: str) -> list[str]:
    values = _TOKEN_TEXT.findall(text)
    # findall skips what is no token; the tokens cover every character but blanks unless
    # some is none, and then the message quotes the text from the end of the last token
    # that only blanks precede.
    if "".join(values) != "".join(text.split()):
        pos = 0
        for match in _TOKEN_TEXT.finditer(text):
            if text[pos : match.start()].strip():
                break
            pos = match.end()
        raise DeclarationError(f"unexpected {text[pos:].strip()[:20]!r}")
    return values


_DEPTH = {"<": 1, "(": 1, ">": -1, ")": -1}


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.values = _tokenize(text)
        self.count = len(self.values)
        # Two empty tokens past the end: what peeking there finds.
        self.values += ["", ""]
        self.index = 0

    def peek(self, offset: int = 0) -> str:
        return self.values[self.index + offset]

    def is_name(self) -> bool:
        # Of the tokens, only a name starts with a letter or _.
        return self.values[self.index][:1].isidentifier()

    def take(self) -> str:
        if self.index >= self.count:
            raise DeclarationError("unexpected end of the declaration")
        self.index += 1
        return self.values[self.index - 1]

    def accept(self, value: str) -> bool:
        """Take the next token if it is ``value``; whether it was."""
        if self.values[self.index] != value:  # not peek(): the parser's most frequent call
            return False
        self.index += 1
        return True

    def expect(self, value: str) -> None:
        if not self.accept(value):
            raise DeclarationError(f"expected {value!r}, found {self.peek() or 'the end'!r}")

    def name(self, what: str) -> str:
        if not self.is_name():
            raise DeclarationError(f"expected {what}, found {self.peek() or 'the end'!r}")
        return self.take()

    def until(self, stops: str) -> str:
        """The tokens up to a stop character at depth 0, joined as an expression."""
        depth = 0
        words: list[str] = []
        while self.peek() and not (depth == 0 and self.peek() in stops):
            token = self.take()
            depth += _DEPTH.get(token, 0)
            words.append(token)
        if not words:
            raise DeclarationError(f"expected a value, found {self.peek() or 'the end'!r}")
        if len(words) == 1:
            return words[0]  # most defaults and template arguments (no token holds a comma)
        text = ""
        for word in words:
            # A name right after `)` follows a cast: `(int)Mode::VALUE`, as clang-format writes it.
            cast = text.endswith(")") and word[:1].isidentifier()
            joined = cast or word in ("<", ">", "(", ")", ",", "&", "*", "::") or (text and (text[-1] in "<(-" or text.endswith("::")))
            text += word if joined or not text else f" {word}"
        return _COMMA.sub(", ", text)


def _type(tokens: _Tokens) -> TypeRef:
    const = tokens.accept("const")
    name = tokens.name("a type")
    args: list[str] = []
    if tokens.accept("<"):
        args.append(tokens.until(",>"))
        while tokens.accept(","):
            args.append(tokens.until(",>"))
        tokens.expect(">")
    reference = tokens.accept("&")
    pointer = not reference and tokens.accept("*")
    return TypeRef(name, tuple(args), const, reference, pointer)


def template_params(text: str) -> tuple[TemplateParam, ...]:
    """``bool DRAM, uint32_t tile_hw = 1024``: a class template's parameters."""
    tokens = _Tokens(text)
    params = _template_params(tokens, end="")
    if tokens.peek():
        raise DeclarationError(f"{tokens.peek()!r} follows the template parameters")
    return params


def _template_params(tokens: _Tokens, end: str) -> tuple[TemplateParam, ...]:
    params: list[TemplateParam] = []
    while True:
        kind = None if tokens.accept("typename") or tokens.accept("class") else _type(tokens)
        name = tokens.name("a template parameter name")
        default = tokens.until("," + end) if tokens.accept("=") else None
        params.append(TemplateParam(name, kind, default))
        if not tokens.accept(","):
            return tuple(params)


def parse_declaration(text: str) -> Signature:
    """One C++ function (or constructor) declaration."""
    tokens = _Tokens(text)
    template: tuple[TemplateParam, ...] = ()
    if tokens.accept("template"):
        tokens.expect("<")
        template = _template_params(tokens, end=">")
        tokens.expect(">")
    constexpr = tokens.accept("constexpr")
    returns: TypeRef | None = None
    if tokens.peek(1) == "(":  # a constructor: the name is the class
        name = tokens.name("the function name")
    else:
        returns = _type(tokens)
        name = tokens.name("the function name")
    tokens.expect("(")
    params: list[Param] = []
    if not tokens.accept(")"):
        while True:
            kind = _type(tokens)
            pname = tokens.take() if tokens.is_name() else None
            default = tokens.until(",)") if tokens.accept("=") else None
            if params and params[-1].default is not None and default is None:
                raise DeclarationError(f"parameter {pname or len(params) + 1!r} has no default after one that has")
            params.append(Param(kind, pname, default))
            if not tokens.accept(","):
                break
        tokens.expect(")")
    const = tokens.accept("const")
    if tokens.peek():
        raise DeclarationError(f"{tokens.peek()!r} follows the declaration; write one declaration")
    if "::" in name:
        raise DeclarationError(f"declare {name!r} without a qualifier (its header gives the namespace)")
    return Signature(name, returns, template, tuple(params), constexpr, const)


def identifiers(expression: str) -> Iterator[str]:
    """The names an expression (a default argument) uses; a member named through a type
    (``Args<A, B>::AlignedPageSize``) is the type's, not a name of its own."""
    member = False
    for token in _TOKEN_TEXT.findall(expression):
        if not member and token[:1].isidentifier():  # a name
            yield token
        member = token == "::"
