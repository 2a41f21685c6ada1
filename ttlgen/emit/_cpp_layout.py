"""Lays out C++ initializers, string literals and assertions the way clang-format does.

The generated C++ must already be clang-format clean (the repository's .clang-format:
LLVM style, 100 columns, 4-space indent), whatever lengths the specs' names and texts
have. The shapes here are the ones whose layout clang-format keeps: a braced list on one
line when it fits, else one item per line with a trailing comma; a string literal too
long for its line split at spaces into adjacent literals, one per line; a static_assert
whose message continues under its first argument.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import NamedTuple

from ttlgen.emit._text import c_comment_end, c_comment_text, c_string

COLUMNS = 100
INDENT = 4


def literal(text: str) -> str:
    """A C++ narrow string literal (non-ASCII as universal character names)."""
    return c_string(text)


class Braced(NamedTuple):
    """``head{item, ...}``; ``vertical``: one item per line even when it would fit on one.
    ``origin``: the record the item prints (a rule, a target), which the lines it takes
    carry for provenance (:class:`SourcedLines`); it prints nothing."""

    head: str
    items: Sequence[Item]
    vertical: bool = False
    origin: object = None


class Fact(NamedTuple):
    """An ``origin`` that is one value of a record (a target's DFB capacity) rather than the
    whole record: ``ttlgen explain`` names the spec node that value is written at (for a
    target's capacity, its architecture's ``dfb_capacity``), else the record's."""

    owner: object
    attribute: tuple[str, ...]


class Sourced(NamedTuple):
    """``item`` as it prints, its lines carrying ``origin`` (a :class:`Fact` or a record)."""

    item: Item
    origin: object


class SourcedLines(NamedTuple):
    """Lines of C++ and, for each, the record it prints (None: the layout's own text).
    ``ttlgen explain`` reads the records; templates print ``text``."""

    lines: tuple[str, ...]
    origins: tuple[object, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @classmethod
    def of(cls, pairs: Sequence[tuple[str, object]]) -> SourcedLines:
        return cls(tuple(line for line, _ in pairs), tuple(origin for _, origin in pairs))


class Text(NamedTuple):
    """A string literal, split over lines when it does not fit."""

    text: str


Item = str | Braced | Text | Sourced


def _flat(item: Item) -> str | None:
    """The item on one line, or None when it must take several."""
    if isinstance(item, str):
        return item
    if isinstance(item, Text):
        return literal(item.text)
    if isinstance(item, Sourced):
        return _flat(item.item)
    if item.vertical:
        return None
    parts = [_flat(i) for i in item.items]
    if any(p is None for p in parts):
        return None
    return item.head + "{" + ", ".join(p for p in parts if p is not None) + "}"


def text_pieces(text: str, width: int) -> list[str]:
    """``text`` as literals of at most ``width`` characters each (quotes included), split
    after spaces; a word longer than a line is split inside."""
    pieces: list[str] = []
    current = ""
    for word in text.split(" ")[:-1]:
        current = _take(current, word + " ", width, pieces)
    current = _take(current, text.split(" ")[-1], width, pieces)
    if current or not pieces:
        pieces.append(literal(current))
    return pieces


def _take(current: str, word: str, width: int, pieces: list[str]) -> str:
    if len(literal(current + word)) <= width:
        return current + word
    if current:
        pieces.append(literal(current))
    while len(literal(word)) > width:
        cut = width - 2
        while len(literal(word[:cut])) > width:
            cut -= 1
        pieces.append(literal(word[:cut]))
        word = word[cut:]
    return word


Line = tuple[str, object]  # a line and the record it prints


def render(item: Item, indent: int, prefix: str = "", suffix: str = "") -> list[str]:
    """``item`` after ``prefix`` (on the first line) and before ``suffix`` (on the last),
    at ``indent`` spaces."""
    return [line for line, _ in render_sourced(item, indent, prefix, suffix)]


def render_sourced(item: Item, indent: int, prefix: str = "", suffix: str = "", origin: object = None) -> list[Line]:
    """:func:`render`, each line with the ``origin`` of the innermost item it prints."""
    pad = " " * indent
    if isinstance(item, Sourced):
        return render_sourced(item.item, indent, prefix, suffix, item.origin)
    if isinstance(item, Braced) and item.origin is not None:
        origin = item.origin
    flat = _flat(item)
    if flat is not None and len(pad + prefix + flat + suffix) <= COLUMNS:
        return [(pad + prefix + flat + suffix, origin)]
    if isinstance(item, str):
        return [(pad + prefix + item + suffix, origin)]  # nothing to break: longer names than this are not generated
    if isinstance(item, Text):
        # After a prefix (``x =``) the literal continues on the next lines, indented once.
        lines = [pad + prefix.rstrip()] if prefix else []
        inner = " " * (indent + INDENT) if prefix else pad
        pieces = text_pieces(item.text, COLUMNS - len(inner) - len(suffix))
        lines.extend(inner + p for p in pieces)
        lines[-1] += suffix
        return [(line, origin) for line in lines]
    out: list[Line] = [(pad + prefix + item.head + "{", origin)]
    for child in item.items:
        out.extend(render_sourced(child, indent + INDENT, suffix=",", origin=origin))
    out.append((pad + "}" + suffix, origin))
    return out


def declaration_sourced(head: str, item: Item, origin: object = None) -> list[Line]:
    """``head item;`` at namespace scope (``constexpr WidthTable kX{...};``), each line with
    the record it prints (``origin`` for the declaration's own lines). When even the opening
    line is too long, the declarator moves to the next line, indented once, and the items
    with it."""
    lines = render_sourced(item, 0, head, ";", origin)
    if len(lines[0][0]) <= COLUMNS or len(lines) == 1:
        return lines
    if isinstance(item, Braced) and item.head:  # constexpr Type kName{...}
        type_part, declarator = head.rstrip(), ""
    else:  # constexpr Type kName[] = {...}
        type_part, _, name = head.rstrip().removesuffix("=").rstrip().rpartition(" ")
        declarator = f"{name} = "
    lines = render_sourced(item, INDENT, declarator, ";", origin)
    last, last_origin = lines[-1]
    lines[-1] = (last.lstrip(), last_origin)  # clang-format puts the closing brace back at the margin
    return [(type_part, origin), *lines]


def static_assert(function: str, argument: Item, message: str) -> list[str]:
    """``static_assert(function(argument), "message");``: on one line if it fits, else the
    message under the call, and the argument's items (when it does not fit either) under
    the call, indented once from there."""
    head = f"static_assert({function}("
    flat = _flat(argument)
    one = f"{head}{flat}), {literal(message)});" if flat is not None else None
    if one is not None and len(one) <= COLUMNS:
        return [one]
    column = len("static_assert(")
    if flat is not None and len(f"{head}{flat}),") <= COLUMNS:
        lines = [f"{head}{flat}),"]
    else:
        assert isinstance(argument, Braced), argument
        lines = render(Braced(argument.head, argument.items, vertical=True), column, suffix="),")
        lines[0] = head + lines[0].lstrip()
    pieces = text_pieces(message, COLUMNS - column - len(");"))
    lines.extend(" " * column + p for p in pieces)
    lines[-1] += ");"
    return lines


def comment(text: str, indent: int = 0) -> list[str]:
    """``// text`` wrapped at the column limit, each line of the text on lines of its own."""
    pad = " " * indent + "// "
    lines = []
    for line in c_comment_text(text):
        lines += textwrap.wrap(
            line, COLUMNS, initial_indent=pad, subsequent_indent=pad, break_long_words=False, break_on_hyphens=False
        )
    return [c_comment_end(line) for line in lines]


def doc(text: str) -> str:
    """A paragraph of ``//`` comment lines."""
    return "\n".join(comment(text))


def commented_list(head: str, items: Sequence[tuple[str, str]]) -> list[str]:
    """``head{`` and one ``item,`` per line, each with its note, and ``};``. A note on every
    item keeps clang-format from packing short items into columns: after the item, aligned
    as clang-format aligns trailing comments, when every line fits; else on a line of its
    own above the item."""
    codes = [" " * INDENT + item + "," for item, _ in items]
    column = max((len(code) for code in codes), default=0) + 1
    lines = [head + "{"]
    if all(column + len("// " + note) <= COLUMNS for _, note in items):
        lines.extend(code.ljust(column) + "// " + note for code, (_, note) in zip(codes, items, strict=True))
    else:
        for code, (_, note) in zip(codes, items, strict=True):
            lines += [" " * INDENT + "// " + note, code]
    lines.append("};")
    return lines


def assignment(left: str, right: str, indent: int) -> list[str]:
    """``left = right;``, broken after ``=`` (the right side indented once more) when it does
    not fit."""
    pad = " " * indent
    one = f"{pad}{left} = {right};"
    if len(one) <= COLUMNS:
        return [one]
    return [f"{pad}{left} =", f"{pad}{' ' * INDENT}{right};"]


def class_head(name: str, base: str) -> str:
    """``class name final : public base {``, the base list on its own line when too long."""
    one = f"class {name} final : public {base} {{"
    if len(one) <= COLUMNS:
        return one
    return f"class {name} final\n{' ' * INDENT}: public {base} {{"


def return_call(call: str, template_argument: str, indent: int) -> str:
    """``return call<argument>();``, the argument on its own line when it does not fit."""
    pad = " " * indent
    one = f"{pad}return {call}<{template_argument}>();"
    if len(one) <= COLUMNS:
        return one
    return f"{pad}return {call}<\n{pad}{' ' * INDENT}{template_argument}>();"
