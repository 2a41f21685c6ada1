"""Spec text in generated files: one escaping function per output syntax.

Free text of the specs (a layout's ``doc``, a target's ``summary`` or ``review``, a golden's
``why``, an API deprecation message, ...) is printed into C and C++ comments and string
literals, Python docstrings and string literals, Markdown and JSON. Whatever the text holds,
what it becomes there stays inside that comment, string, table cell or paragraph, and
shows every character a reader could not otherwise see. The policy, the same in every
output:

- LF, CR LF and CR end a line. Where the output has lines (comments, docstrings) the text
  keeps them; where it has none (a Markdown table cell or paragraph) they become spaces;
  in a string literal they are escapes.
- A character that shows nothing or moves other text (controls such as NUL or ESC, the
  other line and paragraph separators, bidirectional controls, zero-width and other format
  characters, surrogates, private-use and unassigned code points: :func:`hidden`) is
  written as its escape, ``\\x1B`` or ``\\u202E``, so "Trojan Source" text reads as what it is.
- What would end or change the comment or string is escaped: ``*/`` and ``/*`` in C/C++
  comments, a backslash that would end a comment line (C and C++ join the next line to
  it), trigraphs, ``\"\"\"`` and backslashes in docstrings, pipes, backticks, brackets and
  HTML in Markdown, quotes and backslashes in string literals.

Text of the real specs contains none of these, so what they generate reads as written.
"""

from __future__ import annotations

import json
import re
import textwrap
import unicodedata
from typing import Any

# A line ends at LF, CR LF or CR; every other separator (VT, FF, NEL, U+2028, ...) is hidden.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def hidden(ch: str) -> bool:
    """Whether ``ch`` shows nothing by itself or changes how other text shows: C0 and C1
    controls, format characters (bidirectional controls, zero-width characters, the BOM),
    line and paragraph separators, surrogates, private-use and unassigned code points
    (unassigned in the running Python's Unicode database, as for ``repr``)."""
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES


def escape(ch: str) -> str:
    """``ch`` as a C-, C++- and Python-style escape: ``\\x00``, ``\\u202E``, ``\\U000E0001``."""
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02X}"
    if code < 0x10000:
        return f"\\u{code:04X}"
    return f"\\U{code:08X}"


# The hidden characters of ASCII are its controls (category Cc): the one check ASCII text
# (all text of the real specs) needs, instead of a Unicode lookup per character.
_ASCII_HIDDEN = re.compile(r"[\x00-\x1f\x7f]")


def visible(text: str, keep: str = "") -> str:
    """``text`` with every hidden character but those in ``keep`` written as its escape."""
    if text.isascii():
        return _ASCII_HIDDEN.sub(lambda m: m.group() if m.group() in keep else escape(m.group()), text)
    return "".join(escape(ch) if hidden(ch) and ch not in keep else ch for ch in text)


def lines(text: str) -> list[str]:
    """The lines of ``text`` (LF, CR LF and CR end one)."""
    return _LINE_BREAK.split(text)


# ---------------------------------------------------------------------------------- C and C++

# ??= ??/ ??' ??( ??) ??! ??< ??> ??- are trigraphs in C before C23 and C++ before C++17:
# ??/ is a backslash, so it can join lines or end a string early.
_TRIGRAPH = re.compile(r"\?\?(?=[=/'()!<>-])")


def c_comment_text(text: str) -> list[str]:
    """The lines of ``text`` for a C or C++ comment (``/* */`` or ``//``): hidden characters,
    ``*/``, ``/*`` and trigraphs escaped. A line is not yet safe to end a ``//`` comment line
    with: wrap it first if it is to be wrapped, then pass each line to :func:`c_comment_end`."""
    if text.isascii() and text.isprintable() and "*/" not in text and "/*" not in text and "??" not in text:
        return [text]  # nothing to escape (all text of the real specs): one line as it is
    out = []
    for line in lines(text):
        line = visible(line, keep="\t")
        line = line.replace("*/", "*\\/").replace("/*", "/\\*")
        out.append(_TRIGRAPH.sub("?\\\\?", line))
    return out


def c_comment_end(line: str) -> str:
    """A comment line that does not end in a backslash: C and C++ join the next line to a
    line ending in one (even through trailing blanks), so a ``//`` comment would swallow the
    code after it. The backslash is written as its escape instead."""
    line = line.rstrip()
    return line[:-1] + "\\x5C" if line.endswith("\\") else line


def c_comment(text: str, continuation: str = "// ", width: int | None = None) -> str:
    """``text`` for a C or C++ comment the template has opened (``// {{ x | c_comment }}``,
    ``/* {{ x | c_comment(" * ") }} */``): every further line starts with ``continuation``.
    With ``width``, each line is wrapped at that many characters (at spaces and hyphens,
    never inside a word)."""
    pieces: list[str] = []
    for line in c_comment_text(text):
        if width is None or (len(line) <= width and line.strip() == line != ""):
            pieces.append(line)  # a line that fits, with no blank to drop at either end, wraps to itself
        else:
            pieces.extend(textwrap.wrap(line, width, expand_tabs=False, replace_whitespace=False, break_long_words=False) or [""])
    ends = [c_comment_end(piece) for piece in pieces]
    return "\n".join([ends[0], *((continuation + end).rstrip() for end in ends[1:])])


def c_string(text: str) -> str:
    """``text`` as a C or C++ narrow string literal, the same in C99 to C17 and C++11 to C++20:
    quotes, backslashes and the ``?`` of a trigraph escaped, LF/CR/TAB as ``\\n``/``\\r``/``\\t``,
    printable non-ASCII as universal character names, hidden characters as the octal
    escapes of their UTF-8 bytes (a universal character name may not name a control, and
    GCC flags one that names a bidirectional control). A lone surrogate, which has no
    UTF-8, is written as the text of its escape."""
    if _C_PLAIN.fullmatch(text):
        return f'"{text}"'
    out = ['"']
    previous = ""
    for ch in text:
        code = ord(ch)
        if ch in _C_SIMPLE:
            out.append(_C_SIMPLE[ch])
        elif ch == "?" and previous == "?":
            out.append("\\?")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\" + escape(ch))
        elif hidden(ch):
            out.append("".join(f"\\{byte:03o}" for byte in ch.encode("utf-8")))
        elif code < 0x80:
            out.append(ch)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
        previous = ch
    out.append('"')
    return "".join(out)


_C_SIMPLE = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Printable ASCII with nothing to escape (no quote, backslash or "?" that could start a
# trigraph) is its own literal.
_C_PLAIN = re.compile(r"[ !#->@-\[\]-~]*")


# ------------------------------------------------------------------------------------ Python


def py_docstring(text: str, indent: str = "") -> str:
    """``text`` inside a ``\"\"\"`` docstring the template has opened and closes: backslashes
    doubled (no escape, no line joining), hidden characters as escapes, a quote that would
    close the docstring escaped; every further line indented with ``indent``."""
    body = "\n".join(visible(line.replace("\\", "\\\\"), keep="\t") for line in lines(text))
    # Three quotes in a row would close the docstring, and so would quotes at its end.
    body = re.sub(r'"{3,}|"+\Z', lambda run: '\\"' * len(run.group()), body)
    rows = body.split("\n")
    return "\n".join([rows[0], *(indent + row if row else "" for row in rows[1:])])


# ---------------------------------------------------------------------------------- Markdown

_MD_HTML = re.compile(r"<(?=[A-Za-z/!?])")  # a tag, comment, declaration or autolink would start
_MD_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")  # an entity or numeric reference would start
_MD_BLOCK_START = re.compile(r"^(?:[#>+\-*=_~]|\d+(?=[.)]))")  # a heading, quote, list, rule, fence


def md_cell(text: str) -> str:
    """``text`` as the contents of a Markdown table cell: one line, no pipe that would end
    the cell, no code span, link, HTML or entity of its own; it renders as written."""
    text = text.replace("\\", "\\\\")
    text = " ".join(visible(text, keep="\t\n\r").split())
    for ch in "`|[]":
        text = text.replace(ch, "\\" + ch)
    return _MD_HTML.sub("&lt;", _MD_ENTITY.sub("&amp;", text))  # in this order: "&lt;" is no text


def md_text(text: str) -> str:
    """``text`` as (part of) a Markdown paragraph: as :func:`md_cell`, and it cannot start a
    heading, quote, list, rule or fence where it starts a line."""
    text = md_cell(text)
    found = _MD_BLOCK_START.match(text)
    if found is None:
        return text
    if found.group()[0].isdigit():
        return found.group() + "\\" + text[found.end() :]
    return "\\" + text


def md_code(text: str, in_table: bool = False) -> str:
    """``text`` as a Markdown code span, backticks included: on one line, fenced by more
    backticks than it holds in a row. In a table cell a pipe is escaped (GFM splits cells
    before it reads code spans); elsewhere a backslash would show, so none is added."""
    text = " ".join(visible(text, keep="\t\n\r").split())
    if in_table:
        # Backslashes before a pipe doubled: no reading of the row can take the pipe's escape
        # for an escaped backslash.
        text = re.sub(r"(\\*)\|", lambda m: m.group(1) * 2 + "\\|", text)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""  # `` is no span
    return f"{fence}{pad}{text}{pad}{fence}"


# -------------------------------------------------------------------------------------- JSON


def json_text(value: Any, indent: int | None = None) -> str:
    """``value`` as JSON: printable non-ASCII as itself, hidden characters (and lone
    surrogates, which UTF-8 cannot hold) as ``\\u`` escapes."""
    text = json.dumps(value, ensure_ascii=False) if indent is None else _indented(value, indent)
    if text.isascii() and "\x7f" not in text:
        return text  # json.dumps escaped the other ASCII controls; DEL is the one it keeps
    return "".join(_json_escape(ch) if hidden(ch) and ch != "\n" else ch for ch in text)


_string = json.encoder.encode_basestring  # a string as json.dumps(..., ensure_ascii=False) writes it
_scalar = json.JSONEncoder(ensure_ascii=False).encode


class _NotTextKeys(Exception):
    """A mapping with a key that is not a string (json.dumps writes it as one)."""


def _indented(value: Any, indent: int) -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=False)``: with an indent json.dumps
    lays out in Python, through a generator per value; this lays out the same text about
    twice as fast (a program.json per kernel is rendered). Mappings with keys other than
    strings are left to json.dumps."""
    try:
        return _laid_out(value, " " * indent, "")
    except _NotTextKeys:
        return json.dumps(value, indent=indent, ensure_ascii=False)


def _laid_out(value: Any, step: str, indent: str) -> str:
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = indent + step
        items = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotTextKeys
            items.append(inner + _string(key) + ": " + _laid_out(item, step, inner))
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        inner = indent + step
        return "[\n" + ",\n".join([inner + _laid_out(item, step, inner) for item in value]) + "\n" + indent + "]"
    return json_scalar(value)


def json_scalar(value: Any) -> str:
    """A value that is no list or mapping as ``json.dumps(value, ensure_ascii=False)`` writes
    it; strings, None, booleans and integers without the encoder's per-call set-up."""
    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, bool):
        return "null" if value is None else "true" if value else "false"
    if type(value) is int:
        return str(value)
    return _scalar(value)  # a float, or what json.dumps refuses


def _json_escape(ch: str) -> str:
    # Outside strings JSON holds only ASCII punctuation, digits, letters, blanks and the
    # line breaks of indentation; inside them json.dumps has escaped every C0 control.
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
