"""Tests for ttlgen.spec.toml_positions."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import LONG_TESTS
from ttlgen.spec.toml_positions import (
    Path,
    Pos,
    Redefinition,
    TomlLocateError,
    TomlPositions,
    locate,
    redefinition,
)

# --------------------------------------------------------------------------
# helpers


def tree_paths(node: object, prefix: Path = ()) -> Iterator[Path]:
    """Every path of a tomllib tree, root included."""
    yield prefix
    if isinstance(node, dict):
        for key, child in node.items():
            yield from tree_paths(child, (*prefix, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from tree_paths(child, (*prefix, index))


def offset_of(text: str, pos: Pos) -> int:
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[: pos.line - 1]) + pos.column - 1


def at(text: str, pos: Pos, length: int) -> str:
    start = offset_of(text, pos)
    return text[start : start + length]


def key_text_at(text: str, pos: Pos) -> str:
    """Decode the single key segment that starts at ``pos``."""
    rest = text[offset_of(text, pos) :]
    match = re.match(r'[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'', rest)
    assert match is not None, f"no key at {pos}: {rest[:20]!r}"
    # Let tomllib decode quoted segments for us.
    (name,) = tomllib.loads(f"{match.group()} = 0")
    return name


def value_parses_at(text: str, pos: Pos, expected: object) -> bool:
    """Some delimiter-bounded slice starting at ``pos`` parses to ``expected``."""
    start = offset_of(text, pos)
    ends = [j for j in range(start + 1, len(text)) if text[j] in " \t\r\n,]}#"]
    for end in [*ends, len(text)]:
        try:
            if tomllib.loads("v = " + text[start:end])["v"] == expected:
                return True
        except tomllib.TOMLDecodeError:
            continue
    return False


def assert_complete(text: str) -> TomlPositions:
    """Positions exist for exactly the tomllib nodes and keys point at keys."""
    data = tomllib.loads(text)
    result = locate(text)
    paths = set(tree_paths(data))
    assert set(result.values) == paths
    assert set(result.keys) == {p for p in paths if p and isinstance(p[-1], str)}
    for path, pos in result.keys.items():
        assert key_text_at(text, pos) == path[-1], path
    return result


# --------------------------------------------------------------------------
# example-based behaviour


def test_root_is_at_line_one_column_one() -> None:
    result = locate("")
    assert result.values == {(): Pos(1, 1)}
    assert result.keys == {}


def test_simple_key_and_value_positions() -> None:
    result = locate("name   =   'x'\n  count=3\n")
    assert result.keys[("name",)] == Pos(1, 1)
    assert result.values[("name",)] == Pos(1, 12)
    assert result.keys[("count",)] == Pos(2, 3)
    assert result.values[("count",)] == Pos(2, 9)


def test_comments_and_blank_lines_are_skipped() -> None:
    text = "# header = 1\n\n  # [table]\nx = 1 # y = 2\n# z = 3\n"
    result = assert_complete(text)
    assert result.keys == {("x",): Pos(4, 1)}


def test_dotted_key_segments_get_their_own_key_positions() -> None:
    result = assert_complete("a.b.c = 1\n")
    assert result.keys[("a",)] == Pos(1, 1)
    assert result.keys[("a", "b")] == Pos(1, 3)
    assert result.keys[("a", "b", "c")] == Pos(1, 5)
    assert result.values[("a", "b", "c")] == Pos(1, 9)


def test_dotted_key_implicit_tables_take_their_segment_position() -> None:
    result = assert_complete("a.b = 1\na.c = 2\n")
    assert result.values[("a",)] == Pos(1, 1)
    assert result.keys[("a",)] == Pos(1, 1)
    assert result.keys[("a", "c")] == Pos(2, 3)


def test_whitespace_around_dots_is_allowed() -> None:
    result = assert_complete("a . b\t.  c = true\n")
    assert result.keys[("a", "b")] == Pos(1, 5)
    assert result.keys[("a", "b", "c")] == Pos(1, 10)


def test_quoted_dotted_segment_is_one_key() -> None:
    result = assert_complete('"x.y".z = 1\n')
    assert ("x.y",) in result.values
    assert result.keys[("x.y", "z")] == Pos(1, 7)


def test_literal_quoted_key() -> None:
    result = assert_complete("'C:\\path' = 1\n")
    assert result.keys[("C:\\path",)] == Pos(1, 1)


def test_basic_quoted_key_escapes_are_decoded() -> None:
    text = '"tab\\there" = 1\n"\\u00e9t\\u00E9" = 2\n"\\U0001F600\\"" = 3\n'
    result = assert_complete(text)
    assert result.keys[("tab\there",)] == Pos(1, 1)
    assert result.keys[("été",)] == Pos(2, 1)
    assert result.keys[('\U0001f600"',)] == Pos(3, 1)


def test_empty_quoted_key() -> None:
    result = assert_complete('"" = 1\n')
    assert result.keys[("",)] == Pos(1, 1)


def test_bare_keys_that_look_like_values() -> None:
    result = assert_complete("1.5 = 1\ntrue = 2\ninf = 3\n1979-05-27 = 4\n")
    assert result.keys[("1", "5")] == Pos(1, 3)
    assert result.keys[("1979-05-27",)] == Pos(4, 1)


def test_columns_count_code_points() -> None:
    result = assert_complete('"ключ" = "😀😀" # 😀\n"😀" = 1\n')
    assert result.values[("ключ",)] == Pos(1, 10)
    assert result.values[("😀",)] == Pos(2, 7)


def test_crlf_line_endings() -> None:
    result = assert_complete("a = 1\r\n[t]\r\nb = 2\r\n")
    assert result.values[("t",)] == Pos(2, 1)
    assert result.keys[("t", "b")] == Pos(3, 1)


def test_table_header_positions() -> None:
    result = assert_complete("x = 1\n\n  [ server ]\nport = 80\n")
    assert result.values[("server",)] == Pos(3, 3)
    assert result.keys[("server",)] == Pos(3, 5)
    assert result.keys[("server", "port")] == Pos(4, 1)


def test_header_implicit_parents_take_the_first_creating_header() -> None:
    text = "[a.b.c]\nx = 1\n[a.d]\ny = 2\n"
    result = assert_complete(text)
    assert result.values[("a",)] == Pos(1, 1)
    assert result.keys[("a",)] == Pos(1, 2)
    assert result.values[("a", "b")] == Pos(1, 1)
    assert result.keys[("a", "b")] == Pos(1, 4)
    assert result.values[("a", "d")] == Pos(3, 1)


def test_explicit_header_after_implicit_creation_wins() -> None:
    result = assert_complete("[a.b]\nx = 1\n[a]\ny = 2\n")
    assert result.values[("a",)] == Pos(3, 1)
    assert result.keys[("a",)] == Pos(3, 2)
    assert result.keys[("a", "y")] == Pos(4, 1)


def test_quoted_header_segments() -> None:
    result = assert_complete("[ 'a.b' . \"c\\u0064\" ]\nx = 1\n")
    assert result.keys[("a.b",)] == Pos(1, 3)
    assert result.keys[("a.b", "cd")] == Pos(1, 11)


def test_sub_table_of_dotted_key_table() -> None:
    text = '[fruit]\napple.color = "red"\n[fruit.apple.texture]\nsmooth = true\n'
    result = assert_complete(text)
    assert result.values[("fruit", "apple")] == Pos(2, 1)
    assert result.values[("fruit", "apple", "texture")] == Pos(3, 1)


def test_array_of_tables_entries_are_indexed() -> None:
    text = '[[item]]\nname = "a"\n\n[[item]]\n\n[[ item ]]\nname = "c"\n'
    result = assert_complete(text)
    assert result.values[("item",)] == Pos(1, 1)
    assert result.keys[("item",)] == Pos(1, 3)
    assert result.values[("item", 0)] == Pos(1, 1)
    assert result.values[("item", 1)] == Pos(4, 1)
    assert result.values[("item", 2)] == Pos(6, 1)
    assert result.keys[("item", 2, "name")] == Pos(7, 1)
    assert ("item", 0) not in result.keys


def test_nested_headers_apply_to_last_array_element() -> None:
    text = (
        "[[fruit]]\n"
        'name = "apple"\n'
        "[fruit.physical]\n"
        'color = "red"\n'
        "[[fruit.variety]]\n"
        'name = "red delicious"\n'
        "[[fruit.variety]]\n"
        'name = "granny smith"\n'
        "[[fruit]]\n"
        'name = "banana"\n'
        "[[fruit.variety]]\n"
        'name = "plantain"\n'
    )
    result = assert_complete(text)
    assert result.values[("fruit", 0, "physical")] == Pos(3, 1)
    assert result.keys[("fruit", 0, "physical")] == Pos(3, 8)
    assert result.values[("fruit", 0, "variety", 1)] == Pos(7, 1)
    assert result.values[("fruit", 1, "variety")] == Pos(11, 1)
    assert result.keys[("fruit", 1, "variety")] == Pos(11, 9)
    assert result.keys[("fruit", 1, "variety", 0, "name")] == Pos(12, 1)


def test_inline_tables_nested() -> None:
    text = "point = { x = 1, y = { z = [ {w = 2} ] }, a.b = 3 }\n"
    result = assert_complete(text)
    assert result.values[("point",)] == Pos(1, 9)
    assert result.keys[("point", "y")] == Pos(1, 18)
    assert result.values[("point", "y")] == Pos(1, 22)
    assert result.values[("point", "y", "z", 0)] == Pos(1, 30)
    assert result.keys[("point", "y", "z", 0, "w")] == Pos(1, 31)
    assert result.keys[("point", "a", "b")] == Pos(1, 45)


def test_empty_inline_table_and_array() -> None:
    result = assert_complete("t = {}\na = [ ]\n")
    assert result.values[("t",)] == Pos(1, 5)
    assert result.values[("a",)] == Pos(2, 5)


def test_multiline_array_with_comments_and_trailing_comma() -> None:
    text = "a = [ # open\n  1,  # one\n\n  # nothing\n  [2, [3]],\n  ]\nb = 4\n"
    result = assert_complete(text)
    assert result.values[("a", 0)] == Pos(2, 3)
    assert result.values[("a", 1)] == Pos(5, 3)
    assert result.values[("a", 1, 1, 0)] == Pos(5, 8)
    assert result.keys[("b",)] == Pos(7, 1)


def test_array_elements_have_no_key_positions() -> None:
    result = assert_complete("a = [1, 2]\n")
    assert ("a", 0) not in result.keys
    assert ("a", 1) in result.values


def test_multiline_string_does_not_shift_following_lines() -> None:
    text = (
        's = """\nline one\n  "quoted" and ""two""\n# not a comment\n[not.a.table]"""\n'
        "t = '''\nit's ''x'' = 1\n'''''\n"
        "u = 1\n"
    )
    result = assert_complete(text)
    assert result.values[("s",)] == Pos(1, 5)
    assert result.keys[("t",)] == Pos(6, 1)
    assert result.keys[("u",)] == Pos(9, 1)


def test_multiline_basic_string_escapes_and_line_continuation() -> None:
    text = 's = """a \\""" b \\\\""" \n'
    text += 't = """x \\\n   y""" # c\n'
    text += 'u = """"quoted"""""\nv = 1\n'
    result = assert_complete(text)
    assert tomllib.loads(text)["u"] == '"quoted""'
    assert result.keys[("t",)] == Pos(2, 1)
    assert result.keys[("v",)] == Pos(5, 1)


def test_single_line_strings_with_delimiters_inside() -> None:
    text = 'a = "x # ] } , \\" y"\nb = \'x # "\'\nc = ["]", \'}\']\n'
    result = assert_complete(text)
    assert result.values[("c", 1)] == Pos(3, 11)


@pytest.mark.parametrize(
    ("literal", "column"),
    [
        ("1979-05-27T07:32:00Z", 5),
        ("1979-05-27 07:32:00.999-07:00", 5),
        ("1979-05-27", 5),
        ("07:32:00", 5),
        ("+1_000", 5),
        ("0xDEAD_beef", 5),
        ("0o755", 5),
        ("0b1010", 5),
        ("-3.14e+10", 5),
        ("6.626E-34", 5),
        ("-inf", 5),
        ("nan", 5),
        ("false", 5),
    ],
)
def test_scalar_values_are_followed_correctly(literal: str, column: int) -> None:
    text = f"v = {literal}\nw = [{literal},{literal}]\n"
    result = assert_complete(text)
    assert result.values[("v",)] == Pos(1, column)
    assert result.values[("w", 1)] == Pos(2, 7 + len(literal))


def test_space_separated_datetime_in_array() -> None:
    result = assert_complete("a = [1979-05-27 07:32:00, 1979-05-27]\n")
    assert result.values[("a", 1)] == Pos(1, 27)


def test_toml_spec_example_document() -> None:
    text = """\
# This is a TOML document

title = "TOML Example"

[owner]
name = "Tom Preston-Werner"
dob = 1979-05-27T07:32:00-08:00

[database]
enabled = true
ports = [ 8000, 8001, 8002 ]
data = [ ["delta", "phi"], [3.14] ]
temp_targets = { cpu = 79.5, case = 72.0 }

[servers]

[servers.alpha]
ip = "10.0.0.1"
role = "frontend"

[servers.beta]
ip = "10.0.0.2"
role = "backend"
"""
    result = assert_complete(text)
    assert result.values[("database", "temp_targets", "case")] == Pos(13, 37)
    assert result.values[("servers",)] == Pos(15, 1)
    assert result.keys[("servers", "beta", "role")] == Pos(23, 1)


VARIED_DOCUMENTS = [
    "",
    "# only a comment",
    "a = 1",  # no trailing newline
    "a = [[1, 2], [], [[{}]]]\n",
    'x = { "a.b" = { c = [1, { d = "}" }] } }\n',
    "[a]\n[a.b]\n[a.c.d]\n[[a.e]]\n[[a.e]]\nf.g = 1\n[a.e.h]\n",
    "[[a]]\n[[a.b]]\n[[a.b]]\n[[a]]\n[a.c]\n[[a.b]]\n",
    "k = '''\n'''\nl = \"\"\"\"\"\"\nm = ''\n",
    "a.b.c.d.e = 1\na.b.x = 2\na.y = [3]\n",
    "a = 1 # \u2028 in comment\n",
    "t = 1979-05-27T00:32:00.999999+07:00\nu = 00:32:00.5\n",
    "'q' = 1\n\"r\" . '' = 2\n",
    "[a.b.c]\n[a]\nb.d = 1\nb.e = 2\n[a.b.f]\n",  # dotted keys may fill a table a header only implied
]


@pytest.mark.parametrize("text", VARIED_DOCUMENTS)
def test_every_tomllib_node_has_a_position(text: str) -> None:
    assert_complete(text)


def test_values_point_at_the_value_text() -> None:
    text = "a = \"x\"\nb.c = 1979-05-27 07:32:00\nd = [ 1.5, true, '''\nz''' ]\ne = { f = +1_0 }\n"
    data = tomllib.loads(text)
    result = assert_complete(text)
    for path in [("a",), ("b", "c"), ("d", 0), ("d", 1), ("d", 2), ("e", "f")]:
        expected: Any = data
        for part in path:
            expected = expected[part]
        assert value_parses_at(text, result.values[path], expected), path


@pytest.mark.parametrize("text", VARIED_DOCUMENTS)
def test_valid_toml_redefines_nothing(text: str) -> None:
    assert redefinition(text) is None


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("a = 1\nb = 2\na = 3\n", Redefinition(("a",), Pos(3, 1), Pos(1, 1), table=False)),
        ("[t]\nx = 1\n[u]\n[t]\n", Redefinition(("t",), Pos(4, 2), Pos(1, 2), table=True)),
        ("[[t]]\nx = 1\n[[t]]\nx = 1\nx = 2\n", Redefinition(("t", 1, "x"), Pos(5, 1), Pos(4, 1), table=False)),
        ("a.b = 1\na.b = 2\n", Redefinition(("a", "b"), Pos(2, 3), Pos(1, 3), table=False)),
        ("[t]\nx.y = 1\n[t.x]\n", Redefinition(("t", "x"), Pos(3, 4), Pos(2, 1), table=True)),
        ("a = {b = 1}\n[a]\n", Redefinition(("a",), Pos(2, 2), Pos(1, 1), table=True, closed=True)),
        ("x = {a = 1, a = 2}\n", Redefinition(("x", "a"), Pos(1, 13), Pos(1, 6), table=False)),
        ("[x.b.c]\n[x]\nb = 1\n", Redefinition(("x", "b"), Pos(3, 1), Pos(1, 4), table=False)),
        ("a.b = 1\n[a.b]\n", Redefinition(("a", "b"), Pos(2, 4), Pos(1, 3), table=True, closed=True)),
        ("[a.b]\nc = 1\n[a]\nb.d = 2\n", Redefinition(("a", "b"), Pos(4, 1), Pos(1, 4), table=True)),
        ("[x]\n[[x]]\n", Redefinition(("x",), Pos(2, 3), Pos(1, 2), table=True)),
        ("x = [1]\n[[x]]\n", Redefinition(("x",), Pos(2, 3), Pos(1, 1), table=True, closed=True)),
        ("a = {b = 1}\n[a.c]\n", Redefinition(("a",), Pos(2, 2), Pos(1, 1), table=True, closed=True)),
        ("a = {b = 1}\n[[a.c]]\n", Redefinition(("a",), Pos(2, 3), Pos(1, 1), table=True, closed=True)),
        ("a = {b = 1}\na.c = 2\n", Redefinition(("a",), Pos(2, 1), Pos(1, 1), table=False, closed=True)),
        ("[t]\nx = 1\nx.y = 2\n", Redefinition(("t", "x"), Pos(3, 1), Pos(2, 1), table=False, closed=True)),
        ("[[x]]\ny = 1\n[x.y.z]\n", Redefinition(("x", 0, "y"), Pos(3, 4), Pos(2, 1), table=True, closed=True)),
    ],
    ids=["key", "table", "key_in_array_of_tables", "dotted_key", "table_of_dotted_key", "table_of_inline_table",
         "inline_table_key", "key_of_implied_table", "table_of_dotted_key_value", "dotted_key_through_table",
         "array_of_tables_after_table", "array_of_tables_after_array", "sub_table_of_inline_table",
         "array_of_tables_in_inline_table", "dotted_key_into_inline_table", "dotted_key_through_value",
         "sub_table_of_key_in_array_of_tables"],
)
def test_a_key_or_table_defined_twice_is_found_with_its_first_definition(text: str, found: Redefinition) -> None:
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)
    assert redefinition(text) == found


NOT_TOML = [
    "a",
    "a =",
    "a = [1,",
    "a = {b = 1",
    'a = "x',
    "a = '''x",
    "[a",
    "[[a]",
    "a = 1 b",
    "= 1",
]


@pytest.mark.parametrize("text", NOT_TOML)
def test_text_that_is_not_toml_raises_locate_error(text: str) -> None:
    with pytest.raises(TomlLocateError):
        locate(text)


# --------------------------------------------------------------------------
# property test: random documents serialised in varied styles

BARE = re.compile(r"[A-Za-z0-9_-]+")


def basic_escape(s: str, multiline: bool = False) -> str:
    out = []
    for char in s:
        if char == '"' or char == "\\":
            out.append("\\" + char)
        elif char == "\n" and multiline:
            out.append("\n")
        elif char in "\b\t\n\f\r":
            out.append(json.dumps(char)[1:-1])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        elif ord(char) > 0xFFFF and char.isalpha():
            out.append(f"\\U{ord(char):08X}")
        else:
            out.append(char)
    return "".join(out)


def literal_ok(s: str) -> bool:
    return "'" not in s and all(c == "\t" or (ord(c) >= 0x20 and ord(c) != 0x7F) for c in s)


class Writer:
    """Serialise a dict to TOML, picking styles at random."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd

    def ws(self) -> str:
        return self.rnd.choice(["", " ", " ", "  ", "\t"])

    def comment(self) -> str:
        return self.rnd.choice(["", "", " # note", "  #", " # [x] = 'y'"])

    def key(self, name: str) -> str:
        choices = []
        if BARE.fullmatch(name):
            choices.append(name)
        if literal_ok(name):
            choices.append(f"'{name}'")
        choices.append('"' + basic_escape(name) + '"')
        return self.rnd.choice(choices)

    def dotted(self, names: list[str]) -> str:
        return "".join(
            (self.ws() + "." + self.ws() if i else "") + self.key(n) for i, n in enumerate(names)
        )

    def scalar(self, value: object) -> str:
        rnd = self.rnd
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            if value >= 0 and rnd.random() < 0.3:
                return rnd.choice([hex(value), oct(value), bin(value)])
            if rnd.random() < 0.2:
                return f"{value:_}"
            return str(value)
        if isinstance(value, float):
            return repr(value)
        if isinstance(value, dt.datetime):
            return value.isoformat(sep=rnd.choice("T "))
        if isinstance(value, (dt.date, dt.time)):
            return value.isoformat()
        assert isinstance(value, str)
        forms = ['"' + basic_escape(value) + '"']
        if literal_ok(value):
            forms.append(f"'{value}'")
        # A newline right after the opening delimiter is trimmed by TOML.
        opening = "\n" if value.startswith("\n") else rnd.choice(["", "\n"])
        forms.append('"""' + opening + basic_escape(value, multiline=True) + '"""')
        if literal_ok(value.replace("\n", "")) and not value.endswith("'"):
            forms.append("'''\n" + value + "'''")
        return rnd.choice(forms)

    def inline(self, value: object) -> str:
        if isinstance(value, dict):
            if not value:
                return "{" + self.ws() + "}"
            items = [
                self.ws() + self.key(k) + self.ws() + "=" + self.ws() + self.inline(v)
                for k, v in value.items()
            ]
            return "{" + ",".join(items) + self.ws() + "}"
        if isinstance(value, list):
            if self.rnd.random() < 0.5:
                items = [self.ws() + self.inline(v) for v in value]
                trailing = "," if value and self.rnd.random() < 0.3 else ""
                return "[" + ",".join(items) + trailing + self.ws() + "]"
            lines = ["[" + self.comment()]
            lines += ["  " + self.inline(v) + "," + self.comment() for v in value]
            return "\n".join(lines) + "\n]"
        return self.scalar(value)

    def body(self, table: dict[str, Any], header: list[str], out: list[str]) -> None:
        """Write key/values of ``table`` then its header-style sub-tables."""
        deferred: list[tuple[str, Any]] = []
        for name, value in table.items():
            style = self.rnd.random()
            is_aot = isinstance(value, list) and value and all(isinstance(v, dict) for v in value)
            if (isinstance(value, dict) and style < 0.4) or (is_aot and style < 0.6):
                deferred.append((name, value))
            elif isinstance(value, dict) and value and style < 0.7:
                self.dotted_entries([name], value, out)
            else:
                out.append(
                    self.ws()
                    + self.key(name)
                    + self.ws()
                    + "="
                    + self.ws()
                    + self.inline(value)
                    + self.comment()
                )
            if self.rnd.random() < 0.1:
                out.append(self.comment())
        for name, value in deferred:
            path = [*header, name]
            if isinstance(value, dict):
                out.append(
                    self.ws()
                    + "["
                    + self.ws()
                    + self.dotted(path)
                    + self.ws()
                    + "]"
                    + self.comment()
                )
                self.body(value, path, out)
            else:
                for element in value:
                    out.append("[[" + self.ws() + self.dotted(path) + self.ws() + "]]")
                    self.body(element, path, out)

    def dotted_entries(self, prefix: list[str], table: dict[str, Any], out: list[str]) -> None:
        for name, value in table.items():
            if isinstance(value, dict) and value and self.rnd.random() < 0.5:
                self.dotted_entries([*prefix, name], value, out)
            else:
                out.append(
                    self.dotted([*prefix, name]) + self.ws() + "=" + self.ws() + self.inline(value)
                )

    def document(self, data: dict[str, Any]) -> str:
        out: list[str] = []
        self.body(data, [], out)
        return "\n".join(out) + self.rnd.choice(["", "\n", "\r\n"])


key_names = st.one_of(
    st.from_regex(BARE, fullmatch=True),
    st.text(max_size=6),
    st.sampled_from(["a.b", "", "'", '"', "\\", "a b", "é", "😀", "1.5", "true"]),
)
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=True),
    st.text(max_size=12),
    st.dates(),
    st.times(),
    st.datetimes(timezones=st.sampled_from([None, dt.UTC])),
)


def nodes(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(key_names, children, max_size=4),
    )


documents = st.dictionaries(key_names, st.recursive(scalars, nodes, max_leaves=20), max_size=6)


@settings(
    max_examples=200 if LONG_TESTS else 50,
    derandomize=not LONG_TESTS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=documents, rnd=st.randoms(use_true_random=False))
def test_random_documents_locate_every_node_and_key(
    data: dict[str, Any], rnd: random.Random
) -> None:
    text = Writer(rnd).document(data)
    assert tomllib.loads(text) == data, text  # the writer itself is sound
    result = assert_complete(text)
    assert redefinition(text) is None
    for path, pos in result.values.items():
        if not path:
            continue
        value: Any = data
        for part in path:
            value = value[part]
        if isinstance(value, (dict, list)):
            assert at(text, pos, 1) in "[{" or key_text_at(text, pos) == path[-1]
        else:
            assert value_parses_at(text, pos, value), (path, pos, text)
