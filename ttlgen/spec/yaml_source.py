"""YAML spec parsing that keeps positions and refuses what YAML would silently accept.

PyYAML's defaults are wrong for a source of truth: duplicate keys silently overwrite,
YAML 1.1 turns ``no``/``on``/``0755`` into booleans and octals, and aliases can expand
without bound. This module composes the node graph itself and constructs plain data
under the YAML 1.2 core schema, recording the line and column of every node.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml
from yaml import MappingNode, ScalarNode, SequenceNode

from ttlgen.errors import Diagnostic, KeyPath, Mark, format_key_path
from ttlgen.spec.document import Positions
from ttlgen.spec.limits import NESTING_LIMIT, entries_overflow

# Nodes produced by following aliases, beyond which a document is rejected: enough
# for sharing a few small blocks, far too little for a "billion laughs" expansion.
ALIAS_EXPANSION_LIMIT = 1000

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _CoreSchemaLoader(_BaseLoader):  # type: ignore[misc]
    """Composer that leaves plain scalars untyped: ``_Builder`` types those that are values
    by the YAML 1.2 core schema (no yes/no/on/off booleans); keys need no type.

    The composer calls ``resolve`` for every node it makes, and the two methods below
    around it; PyYAML's versions (path resolvers, a wildcard list of patterns), and typing
    keys too, were a large share of composing a spec."""

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            return _PLAIN if implicit[0] else _STR
        return _SEQ if kind is SequenceNode else _MAP

    # For path resolvers, which this loader has none of.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
# The tag resolve gives a plain scalar, for the builder to replace; no YAML tag holds a space.
_PLAIN = "plain scalar"

_CORE_RESOLVERS = (
    (_NULL, r"^(?:~|null|Null|NULL|)$", "~nN"),
    (_BOOL, r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    (_INT, r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        _FLOAT,
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
)
# The core schema's form of each tag: what a plain scalar must be to resolve to it, and
# so what the text of a scalar tagged with it explicitly must be.
_CORE_FORMS = {tag: re.compile(pattern) for tag, pattern, _ in _CORE_RESOLVERS}
# First character of a plain scalar -> the (tag, pattern) pairs it may match, in order;
# the empty plain scalar is null in the core schema.
_IMPLICIT: dict[str, list[tuple[str, re.Pattern[str]]]] = {"": [(_NULL, re.compile(r"^$"))]}
for _tag, _pattern, _first in _CORE_RESOLVERS:
    for _char in _first:
        _IMPLICIT.setdefault(_char, []).append((_tag, _CORE_FORMS[_tag]))
# What each tag's text may be, for a message refusing an explicitly tagged scalar.
_CORE_FORM_TEXT = {
    _NULL: "a null is null, Null, NULL, ~ or nothing",
    _BOOL: "a bool is true or false (or True, TRUE, False, FALSE)",
    _INT: "an int is decimal digits with an optional sign, or 0o and octal digits, or 0x and hex digits",
    _FLOAT: "a float is a decimal number such as 1.5, -2 or 3e-4, or .inf, -.inf or .nan",
}


class YamlLoadError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        self.diagnostic = diagnostic
        super().__init__(diagnostic.format())


def _plain(text: str) -> Any:
    """The value of a plain scalar under the core schema: of the first form it matches, else a string."""
    for tag, pattern in _IMPLICIT.get(text[:1], ()):
        if pattern.match(text):
            return _scalar(tag, text)
    return text


def _scalar(tag: str, text: str) -> Any:
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return text[0] in "tT"
    if tag == _INT:
        if text.startswith(("0x", "0o")):
            return int(text, 0)
        return int(text, 10)
    if tag == _FLOAT:
        lowered = text.lower()
        if lowered.endswith(".inf"):
            return -math.inf if lowered.startswith("-") else math.inf
        if lowered == ".nan":
            return math.nan
        return float(text)
    return text


def _alias_position(text: str, target: KeyPath) -> tuple[int, int] | None:
    """Line and column of the alias written at ``target``, or None. The composed graph keeps
    only the node an alias names (positioned where its anchor is), so the alias's own place
    is found by reading the events again; only an error pays for it."""
    # Per open collection: its path, and [is a mapping, next index, current key, a key is next].
    stack: list[tuple[KeyPath, list[Any]]] = []
    for event in yaml.parse(text, Loader=_CoreSchemaLoader):
        if isinstance(event, yaml.CollectionEndEvent):
            stack.pop()
            continue
        if not isinstance(event, yaml.NodeEvent):
            continue
        here: KeyPath = ()
        if stack:
            where, state = stack[-1]
            if not state[0]:
                here = (*where, state[1])
                state[1] += 1
            elif state[3]:
                # A key: the path of what it holds is no path of the document's data.
                state[2] = event.value if isinstance(event, yaml.ScalarEvent) else None
                here = (*where, None)  # type: ignore[arg-type]
            else:
                here = (*where, state[2])
            if state[0]:
                state[3] = not state[3]
        if isinstance(event, yaml.AliasEvent) and here == target and event.start_mark is not None:
            return event.start_mark.line + 1, event.start_mark.column + 1
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append((here, [isinstance(event, yaml.MappingStartEvent), 0, None, True]))
    return None


class _Builder:
    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.text = text
        self.values: dict[KeyPath, tuple[int, int]] = {}
        self.keys: dict[KeyPath, tuple[int, int]] = {}
        self.seen: set[int] = set()
        self.active: set[int] = set()
        self.expanded = 0

    def fail(self, node: yaml.Node, path: KeyPath, message: str) -> YamlLoadError:
        mark = node.start_mark
        return YamlLoadError(Diagnostic(Mark(self.file, mark.line + 1, mark.column + 1, path), message))

    def build(self, node: yaml.Node, path: KeyPath, via_alias: bool) -> Any:
        if len(path) > NESTING_LIMIT:
            raise self.fail(node, (), f"mappings and lists nest more than {NESTING_LIMIT} levels deep")
        ident = id(node)
        if ident in self.active:
            at = _alias_position(self.text, path)
            if at is None:
                raise self.fail(node, path, "recursive alias: a node may not contain itself")
            raise YamlLoadError(Diagnostic(Mark(self.file, *at, path), "recursive alias: a node may not contain itself"))
        if ident in self.seen:
            via_alias = True
        if via_alias:
            self.expanded += 1
            if self.expanded > ALIAS_EXPANSION_LIMIT:
                raise self.fail(
                    node,
                    path,
                    f"aliases expand to more than {ALIAS_EXPANSION_LIMIT} nodes; "
                    "write the values out or split the file",
                )
        self.seen.add(ident)
        mark = node.start_mark
        position = (mark.line + 1, mark.column + 1)
        if via_alias:
            self.values.setdefault(path, position)
        else:
            self.values[path] = position

        if isinstance(node, ScalarNode):
            return self.scalar(node, path)
        if isinstance(node, SequenceNode):
            what, tag = "list", _SEQ
        elif isinstance(node, MappingNode):
            what, tag = "mapping", _MAP
        else:
            raise self.fail(node, path, "unsupported YAML node")
        # Refused before its entries are built, which costs up to half again as much
        # as composing them; the same check on the built data covers TOML.
        crowded = entries_overflow(len(node.value), what)
        if crowded is not None:
            line, column = self.keys.get(path, self.values[path])
            raise YamlLoadError(Diagnostic(Mark(self.file, line, column, path), crowded))
        if node.tag != tag:
            raise self.fail(node, path, f"unsupported YAML tag {node.tag!r}; use plain values")
        self.active.add(ident)
        try:
            if isinstance(node, MappingNode):
                return self.mapping(node, path, via_alias)
            return [self.entry(item, (*path, i), via_alias) for i, item in enumerate(node.value)]
        finally:
            self.active.discard(ident)

    def entry(self, node: yaml.Node, path: KeyPath, via_alias: bool) -> Any:
        """``build`` of an entry of a list or mapping. Most entries are scalars met once;
        they take this short path, which records the same position ``build`` would."""
        if type(node) is ScalarNode and not via_alias and len(path) <= NESTING_LIMIT:
            ident = id(node)
            if ident not in self.seen:
                self.seen.add(ident)
                mark = node.start_mark
                self.values[path] = (mark.line + 1, mark.column + 1)
                if node.tag == _PLAIN:
                    return _plain(node.value)
                return node.value if node.tag == _STR else self.scalar(node, path)
        return self.build(node, path, via_alias)

    def scalar(self, node: yaml.ScalarNode, path: KeyPath) -> Any:
        if node.tag == _PLAIN:
            return _plain(node.value)
        if node.tag not in _SCALAR_TAGS:
            raise self.fail(node, path, f"unsupported YAML tag {node.tag!r}; use plain values")
        # A plain scalar gets its tag by matching the form; one tagged explicitly (!!bool yes)
        # does not, and Python's int() and float() take far more than YAML does (3_2, "٣٢").
        form = _CORE_FORMS.get(node.tag)
        if form is not None and not form.fullmatch(node.value):
            name = node.tag.rsplit(":", 1)[-1]
            raise self.fail(node, path, f"invalid !!{name} {node.value!r}; {_CORE_FORM_TEXT[node.tag]}")
        return _scalar(node.tag, node.value)

    def mapping(self, node: yaml.MappingNode, path: KeyPath, via_alias: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        keys = self.keys
        for key_node, value_node in node.value:
            if type(key_node) is not ScalarNode or key_node.tag not in _KEY_TAGS:
                raise self.fail(key_node, path, "mapping keys must be plain scalars")
            key = key_node.value
            child = (*path, key)
            mark = key_node.start_mark
            if key in out:
                raise self.fail(
                    key_node,
                    child,
                    f"duplicate key {key!r} (first defined at line {keys[child][0]})",
                )
            if not via_alias or child not in keys:
                keys[child] = (mark.line + 1, mark.column + 1)
            out[key] = self.entry(value_node, child, via_alias)
        return out


_SCALAR_TAGS = frozenset((_NULL, _BOOL, _INT, _FLOAT, _STR))
_KEY_TAGS = _SCALAR_TAGS | {_PLAIN}


def _within(text: str, line: int, column: int) -> tuple[int, int]:
    """A reader position moved onto the text: the YAML reader puts the end of a file that
    lacks a final newline on the line after it, which an editor cannot show."""
    lines = text.split("\n")
    if line > len(lines):
        return len(lines), len(lines[-1]) + 1
    return line, min(column, len(lines[line - 1]) + 1)


def _line_column(text: str, index: int) -> tuple[int, int]:
    before = text[:index]
    return before.count("\n") + 1, index - (before.rfind("\n") + 1) + 1


# Characters YAML 1.2 does not allow in a stream (its "printable" set, complemented).
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# Line breaks to the YAML reader (YAML 1.1) that not every editor starts a line at: a
# position after one could name a line the user cannot find. Alternatives that each start
# with a literal let the regex engine skip ahead to those characters (a class among them
# makes it try every position, three times slower).
_ODD_LINE_BREAK = re.compile("\r(?!\n)|\x85|\u2028|\u2029")
# Each refused character, and what follows "character U+XXXX" in its message.
_REFUSED_CHARACTERS = (
    (
        _NOT_PRINTABLE,
        "is not allowed in YAML (a control or non-character); "
        "remove it or write it as an escape inside a double-quoted string",
    ),
    (
        _ODD_LINE_BREAK,
        "is a line break to YAML that not every editor or tool counts; "
        "end lines with \\n or \\r\\n, or write it as an escape inside a double-quoted string",
    ),
)


def _indent(line: str) -> int | None:
    """Spaces before a line's content; None for a blank or comment-only line."""
    content = line.lstrip(" ")
    return None if not content.strip() or content.startswith("#") else len(line) - len(content)


def _tab_indent(text: str, line: int, column: int, problem: str) -> int | None:
    """The column of the tab in ``line``'s indentation when that tab is why the parser gave
    up at ``line``:``column`` (it may say only "found character that cannot start any
    token"), else None."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    content = lines[line - 1]
    indent = len(content) - len(content.lstrip(" \t"))
    tab = content.find("\t", 0, indent)
    return tab + 1 if tab != -1 and (column <= indent or "tab" in problem) else None


def _misindented(text: str, line: int, column: int, block: int | None) -> tuple[int, int, str] | None:
    """Where the indentation went wrong when the parser gave up at ``line``:``column``.

    A line indented less than its neighbours (``  dfbs:`` among keys at four spaces) ends
    their block; the parser only complains lines later, where the block continues at its
    old indentation. Walking back from there to the nearest line at that indentation, the
    first line between them indented less is the one to fix: (its line, its indentation,
    the message), or None when no such line explains the error. ``block``: the line where
    the block the parser was reading started, when it says so."""
    lines = text.split("\n")
    if not 1 < line <= len(lines) or _indent(lines[line - 1]) != column - 1:
        return None
    expected = column - 1
    if block is not None and block < line and all(_indent(lines[n - 1]) is None for n in range(block + 1, line)):
        opened = _indent(lines[block - 1])
    else:
        opened = None
    if opened is not None and block is not None and opened < expected:
        # The line right after a block's first entry is deeper than that entry.
        return line, expected, (
            f"invalid YAML: this line is indented {expected} spaces, but the entry before it, "
            f"line {block}, is at {opened}; indent the entries of one block alike"
        )
    shallower = None
    for number in range(line - 1, 0, -1):
        indent = _indent(lines[number - 1])
        if indent is None:
            continue
        if indent == expected:
            if shallower is None:
                return None
            found = _indent(lines[shallower - 1])
            message = (
                f"invalid YAML: this line is indented {found} spaces, which ends the block above it, "
                f"yet line {line} continues that block at {expected}; indent this line as the lines around it"
            )
            return shallower, found or 0, message
        if indent < expected:
            shallower = number
    return None


def parse_yaml(text: str, file: str) -> tuple[Any, Positions]:
    """Parse one YAML document into plain data and positions; raises YamlLoadError."""
    # Checked here because the YAML reader reports such a character by its byte offset
    # in the whole stream, which is not a line and column.
    for pattern, why in _REFUSED_CHARACTERS:
        found = pattern.search(text)
        if found is not None:
            line, column = _line_column(text, found.start())
            raise YamlLoadError(Diagnostic(Mark(file, line, column), f"character U+{ord(found.group()):04X} {why}"))
    try:
        documents = list(yaml.compose_all(text, Loader=_CoreSchemaLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = _within(text, *((mark.line + 1, mark.column + 1) if mark is not None else (1, 1)))
        tab = _tab_indent(text, line, column, exc.problem or "")
        if tab is not None:
            raise YamlLoadError(
                Diagnostic(
                    Mark(file, line, tab),
                    "invalid YAML: a tab in this line's indentation; YAML indentation must use spaces",
                )
            ) from None
        start = exc.context_mark
        culprit = _misindented(text, line, column, start.line + 1 if start is not None and start is not mark else None)
        if culprit is not None:
            raise YamlLoadError(Diagnostic(Mark(file, culprit[0], culprit[1] + 1), culprit[2])) from None
        context = exc.context or ""
        if exc.context_mark is not None and exc.context_mark is not mark and context:
            start = exc.context_mark
            context += f" started at line {start.line + 1}, column {start.column + 1}"
        problem = ": ".join(part for part in (context, exc.problem) if part)
        raise YamlLoadError(Diagnostic(Mark(file, line, column), f"invalid YAML: {problem}")) from None
    except yaml.YAMLError as exc:
        raise YamlLoadError(Diagnostic(Mark(file, 1, 1), f"invalid YAML: {exc}")) from None
    if len(documents) != 1:
        if not documents:
            raise YamlLoadError(Diagnostic(Mark(file, 1, 1), "empty file: expected a mapping starting with 'spec:'"))
        second = documents[1].start_mark
        raise YamlLoadError(
            Diagnostic(Mark(file, second.line + 1, second.column + 1), "a spec file holds exactly one YAML document")
        )
    builder = _Builder(file, text)
    data = builder.build(documents[0], (), False)
    return data, Positions(values=builder.values, keys=builder.keys)


__all__ = ["ALIAS_EXPANSION_LIMIT", "NESTING_LIMIT", "YamlLoadError", "format_key_path", "parse_yaml"]
