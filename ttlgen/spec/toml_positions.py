"""Source positions for TOML documents.

``tomllib`` parses TOML but forgets where things were.  :func:`locate` re-reads
the same text and records, for every node ``tomllib.loads`` produces, where its
value starts and (for mapping entries) where its key starts.

The implementation has two parts:

* :class:`_Lexer` turns source text into :class:`Token` objects carrying their
  offsets.  TOML is not context free at the lexical level (``1.5`` is a float
  as a value but the dotted key ``1``/``5`` on the left of ``=``, and ``[[``
  opens an array-of-tables header only at the start of a line), so the lexer
  is pulled: the walker asks for the kind of token it expects next.
* :class:`_Walker` follows the document structure, tracking the current table
  path and how many elements each ``[[array.of.tables]]`` has, so that paths
  match the tree ``tomllib`` builds.

Input is assumed to be valid TOML (callers run ``tomllib.loads`` first).  Text
that is not valid TOML may produce :class:`TomlLocateError` or arbitrary
positions, but never any other exception type.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

__all__ = ["Path", "Pos", "Redefinition", "TomlLocateError", "TomlPositions", "locate", "redefinition"]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Pos:
    """A position in TOML text."""

    line: int  # 1-based
    column: int  # 1-based, counted in Unicode code points


@dataclass(frozen=True)
class TomlPositions:
    """Where each value and each key of a TOML document starts."""

    values: dict[Path, Pos]
    """Where the value of each node starts.

    Tables defined by a header map to the header's ``[``; tables created
    implicitly map to the first header (its ``[``) or dotted-key segment that
    created them; the root maps to ``(1, 1)``.
    """
    keys: dict[Path, Pos]
    """Where the key introducing each mapping entry starts.

    For dotted keys and header paths, the segment naming that path.  Absent for
    the root and for array elements.
    """


class TomlLocateError(ValueError):
    """Raised when the text is not TOML the locator can follow."""


def locate(text: str) -> TomlPositions:
    """Return value and key positions for every node of the TOML ``text``."""
    walker = _Walker(text)
    walker.run()
    return TomlPositions(values=walker.values, keys=walker.keys)


@dataclass
class Redefinition(Exception):
    """A key or table the text defines a second time: tomllib says only "Cannot overwrite
    a value" or "Cannot declare ('a', 'b') twice"."""

    path: Path
    at: Pos  # the key of the second definition
    first: Pos  # the key of the first
    table: bool  # the second definition makes a table: a header, or a dotted key's prefix
    # The first definition is ``key = value`` and the second adds to it through a header or
    # a dotted key: TOML closes a value (inline table, array, scalar) where it is written.
    closed: bool = False


def redefinition(text: str) -> Redefinition | None:
    """The first key or table ``text`` defines twice, or None (also when the text is not
    TOML the locator can follow that far). For a message about text tomllib refused."""
    walker = _Walker(text, check=True)
    try:
        walker.run()
    except Redefinition as found:
        return found
    except TomlLocateError:
        return None
    return None


# --------------------------------------------------------------------------
# Lexer

@dataclass(frozen=True)
class Token:
    """A lexical token of TOML text and where it starts."""

    text: str  # decoded name for a key segment, raw source text otherwise
    start: int  # offset of the first code point


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
# Numbers, booleans, dates and times: everything up to a delimiter.
_SCALAR = re.compile(r"[^ \t\r\n,\]}#]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# RFC 3339 allows a space instead of "T" between date and time.
_SPACE_TIME = re.compile(r" [0-9]{2}:[0-9]{2}[^ \t\r\n,\]}#]*")
_ESCAPES = {
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",  # TOML 1.1
    '"': '"',
    "\\": "\\",
}
_HEX_ESCAPE_LENGTHS = {"x": 2, "u": 4, "U": 8}  # "x" is TOML 1.1


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    # -- positions ---------------------------------------------------------

    def pos(self, offset: int) -> Pos:
        line = bisect.bisect_right(self._line_starts, offset)
        return Pos(line, offset - self._line_starts[line - 1] + 1)

    def fail(self, message: str, offset: int | None = None) -> TomlLocateError:
        where = self.pos(self.i if offset is None else offset)
        return TomlLocateError(f"{where.line}:{where.column}: {message}")

    # -- trivia ------------------------------------------------------------

    def peek(self, n: int = 1) -> str:
        return self.text[self.i : self.i + n]

    def at_end(self) -> bool:
        return self.i >= len(self.text)

    def skip_blank(self) -> None:
        """Skip spaces and tabs."""
        text, i = self.text, self.i
        while i < len(text) and text[i] in " \t":
            i += 1
        self.i = i

    def skip_comment(self) -> None:
        if self.peek() == "#":
            end = self.text.find("\n", self.i)
            self.i = len(self.text) if end == -1 else end

    def accept_newline(self) -> bool:
        for newline in ("\n", "\r\n"):
            if self.text.startswith(newline, self.i):
                self.i += len(newline)
                return True
        return False

    def skip_trivia(self) -> None:
        """Skip whitespace, comments and newlines."""
        while True:
            self.skip_blank()
            self.skip_comment()
            if not self.accept_newline():
                return

    # -- tokens ------------------------------------------------------------

    def accept(self, punct: str) -> Token | None:
        if not self.text.startswith(punct, self.i):
            return None
        start, self.i = self.i, self.i + len(punct)
        return Token(punct, start)

    def expect(self, punct: str) -> Token:
        token = self.accept(punct)
        if token is None:
            raise self.fail(f"expected {punct!r}")
        return token

    def key_segment(self) -> Token:
        """One segment of a (possibly dotted) key: bare, "basic" or 'literal'."""
        start = self.i
        quote = self.peek()
        if quote == '"':
            name = self._basic_string_body()
        elif quote == "'":
            end = self._find_on_line("'", start + 1)
            name = self.text[start + 1 : end]
            self.i = end + 1
        else:
            match = _BARE_KEY.match(self.text, start)
            if match is None:
                raise self.fail("expected a key")
            name = match.group()
            self.i = match.end()
        return Token(name, start)

    def string(self) -> None:
        """A string value in any of the four forms."""
        start = self.i
        if self.text.startswith('"""', start):
            self.i = self._multiline_end('"', start + 3)
        elif self.text.startswith("'''", start):
            self.i = self._multiline_end("'", start + 3)
        elif self.peek() == '"':
            self._basic_string_body()
        else:
            self.i = self._find_on_line("'", start + 1) + 1

    def scalar(self) -> None:
        """A number, boolean, date, time or date-time."""
        start = self.i
        match = _SCALAR.match(self.text, start)
        if match is None:
            raise self.fail("expected a value")
        end = match.end()
        if _DATE.fullmatch(match.group()):
            time = _SPACE_TIME.match(self.text, end)
            if time is not None:
                end = time.end()
        self.i = end

    # -- string helpers ----------------------------------------------------

    def _find_on_line(self, char: str, offset: int) -> int:
        end = self.text.find(char, offset)
        newline = self.text.find("\n", offset)
        if end == -1 or (newline != -1 and newline < end):
            raise self.fail("unterminated string", offset - 1)
        return end

    def _basic_string_body(self) -> str:
        """Decode a single-line basic string starting at its opening quote."""
        text = self.text
        start = self.i
        i = start + 1
        out: list[str] = []
        while i < len(text) and text[i] not in '"\n':
            char = text[i]
            if char != "\\":
                out.append(char)
                i += 1
                continue
            escape = text[i + 1 : i + 2]
            if escape in _HEX_ESCAPE_LENGTHS:
                digits = text[i + 2 : i + 2 + _HEX_ESCAPE_LENGTHS[escape]]
                try:
                    out.append(chr(int(digits, 16)))
                except (ValueError, OverflowError):
                    raise self.fail("bad escape", i) from None
                i += 2 + len(digits)
            elif escape in _ESCAPES:
                out.append(_ESCAPES[escape])
                i += 2
            else:
                raise self.fail("bad escape", i)
        if i >= len(text) or text[i] != '"':
            raise self.fail("unterminated string", start)
        self.i = i + 1
        return "".join(out)

    def _multiline_end(self, quote: str, offset: int) -> int:
        """Offset just past the closing delimiter of a multi-line string."""
        text = self.text
        delimiter = quote * 3
        if quote == "'":  # literal: no escapes
            i = text.find(delimiter, offset)
        else:
            i = offset
            while i < len(text) and not text.startswith(delimiter, i):
                i += 2 if text[i] == "\\" else 1
        if 0 <= i < len(text):
            # Up to two quotes may directly precede the closing delimiter.
            end = i + 3
            while end < len(text) and text[end] == quote and end - i < 5:
                end += 1
            return end
        raise self.fail("unterminated multi-line string", offset - 3)


# --------------------------------------------------------------------------
# Structural walker


class _Walker:
    def __init__(self, text: str, check: bool = False) -> None:
        self.lex = _Lexer(text)
        self.values: dict[Path, Pos] = {(): Pos(1, 1)}
        self.keys: dict[Path, Pos] = {}
        # Concrete path of each array of tables -> number of elements so far.
        self.aot_lengths: dict[Path, int] = {}
        # With ``check``: each path a key, a header or a dotted key's prefix has defined, and
        # each table a header made only as the parent of another (which a header may still
        # define), -> its first key.
        self.check = check
        self.defined: dict[Path, Pos] = {}
        self.implied: dict[Path, Pos] = {}
        # Paths a ``key = value`` defined, which nothing may add to, and paths a dotted key's
        # prefix made, which only further dotted keys of the same table section may reopen.
        self.values_defined: set[Path] = set()
        self.dotted: set[Path] = set()

    def _define(self, path: Path, key: Pos, table: bool, leaf: bool) -> None:
        first = self.defined.get(path) or (self.implied.get(path) if leaf else None)
        if first is not None:
            raise Redefinition(path, key, first, table, closed=table and path in self.values_defined)
        self.defined[path] = key

    def _extend(self, path: Path, key: Pos, table: bool) -> None:
        """Refuse a header or dotted key that goes through the value defined at ``path``."""
        if path in self.values_defined:
            raise Redefinition(path, key, self.defined[path], table, closed=True)

    def run(self) -> None:
        lex = self.lex
        table: Path = ()
        while True:
            lex.skip_trivia()
            if lex.at_end():
                return
            if lex.peek() == "[":
                table = self._header()
            else:
                self._keyval(table)
            lex.skip_blank()
            lex.skip_comment()
            if not (lex.at_end() or lex.accept_newline()):
                raise lex.fail("expected end of line")

    def _key(self) -> list[Token]:
        lex = self.lex
        segments = [lex.key_segment()]
        while True:
            lex.skip_blank()
            if lex.accept(".") is None:
                return segments
            lex.skip_blank()
            segments.append(lex.key_segment())

    def _header(self) -> Path:
        """Parse ``[a.b]`` or ``[[a.b]]``; return the concrete table path."""
        lex = self.lex
        is_array = lex.peek(2) == "[["
        opener = lex.expect("[[" if is_array else "[")
        lex.skip_blank()
        segments = self._key()
        lex.skip_blank()
        lex.expect("]]" if is_array else "]")

        header = lex.pos(opener.start)
        path: Path = ()
        for n, segment in enumerate(segments):
            path = (*path, segment.text)
            key = lex.pos(segment.start)
            if n < len(segments) - 1:
                # Implicit parent: the first creator wins.
                if self.check:
                    self._extend(path, key, table=True)
                    if path not in self.defined:
                        self.implied.setdefault(path, key)
                self.keys.setdefault(path, key)
                self.values.setdefault(path, header)
                if path in self.aot_lengths:  # descend into the last element
                    path = (*path, self.aot_lengths[path] - 1)
            elif is_array:
                if self.check and path not in self.aot_lengths:
                    self._define(path, key, table=True, leaf=False)
                self.keys.setdefault(path, key)
                self.values.setdefault(path, header)
                index = self.aot_lengths.get(path, 0)
                self.aot_lengths[path] = index + 1
                path = (*path, index)
                self.values[path] = header
            else:
                if self.check:
                    self._define(path, key, table=True, leaf=False)
                # Explicit definition beats an earlier implicit creation.
                self.keys[path] = key
                self.values[path] = header
        return path

    def _keyval(self, table: Path) -> None:
        lex = self.lex
        segments = self._key()
        lex.skip_blank()
        lex.expect("=")
        lex.skip_blank()
        path = table
        for segment in segments[:-1]:
            path = (*path, segment.text)
            key = lex.pos(segment.start)
            if self.check:
                self._extend(path, key, table=False)
                if path in self.defined and path not in self.dotted:
                    # A prefix another dotted key made is reopened; any other table is refused.
                    raise Redefinition(path, key, self.defined[path], table=True)
                self.defined.setdefault(path, key)
                self.dotted.add(path)
            self.keys.setdefault(path, key)
            self.values.setdefault(path, key)
        path = (*path, segments[-1].text)
        if self.check:
            self._define(path, lex.pos(segments[-1].start), table=False, leaf=True)
            self.values_defined.add(path)
        self.keys[path] = lex.pos(segments[-1].start)
        self._value(path)

    def _value(self, path: Path) -> None:
        lex = self.lex
        self.values[path] = lex.pos(lex.i)
        first = lex.peek()
        if first == "[":
            self._array(path)
        elif first == "{":
            self._inline_table(path)
        elif first in ('"', "'"):
            lex.string()
        else:
            lex.scalar()

    def _array(self, path: Path) -> None:
        lex = self.lex
        lex.expect("[")
        index = 0
        while True:
            lex.skip_trivia()
            if lex.accept("]"):
                return
            self._value((*path, index))
            index += 1
            lex.skip_trivia()
            if not lex.accept(","):
                lex.expect("]")
                return

    def _inline_table(self, path: Path) -> None:
        lex = self.lex
        lex.expect("{")
        while True:
            # Newlines and comments are TOML 1.1 only; accepting them is harmless.
            lex.skip_trivia()
            if lex.accept("}"):
                return
            self._keyval(path)
            lex.skip_trivia()
            if not lex.accept(","):
                lex.expect("}")
                return
