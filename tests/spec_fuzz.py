"""A seeded mutator over the real specs, and the judge of what `ttlgen build` does with each.

One trial copies specs/ and generated/ into a fresh directory, applies one or two
mutations a hostile or careless user could make (delete a key, change a value's type,
put hostile text in a string, misspell a key, nest deeply, make a list huge, convert a
file to TOML, truncate it, flip a byte, insert a control character, ...), runs
``ttlgen build --json`` in that directory and classifies the result:

- ``rejected``: exit 2, every error located at a line that exists, in the mutated file
  or in a spec that reads what it declares (``READS``), and the tree untouched;
- ``built``: exit 0, and every generated file the mutation changed compiles (C with gcc,
  C++ with g++, kernels against the emulator's tt-metal headers), parses (JSON) or
  imports (Python packages, with the standard library only).

Everything else is a failure class: a traceback, an unlocated or misplaced error, a
tree changed by a failed build, a run over ``HANG_S``, a generated file that does not
compile or import, another exit code. Two of them are named apart, because they point
at particular work:

- ``injection``: a compile or import failure after hostile text was put in a free-text
  string (free text must be escaped for every output, ``ttlgen/emit/_text.py``);
- ``unknown API name``: a kernel that does not compile because a name in the spelling
  spec is not one the tt-metal API has (every spelled call is checked against its API
  level, ``ttlgen/plan/api_check.py``).

A ``golden broken`` trial is a hole too: goldens are checked at ``validate``
(ttlgen/plan/goldens.py), so a build whose C++ tables fail a golden's ``static_assert``
got past that check. ``table`` counts every kind of hole together.

Kernel spec files also get kernel-body edits: an expression under many unary ops or
spread into a wide tree of binary ops, statements moved into a loop (of 0, 1, a few or
4097 trips) or a conditional, a loop unwrapped.

Run it from the test suite (tests/test_spec_fuzz.py) or alone, e.g. for a long run:
``python -m tests.spec_fuzz --trials 10000 --jobs 2``.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import enum
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
SPECS = REPO / "specs"
GENERATED = REPO / "generated"
DEVICE_INCLUDE = REPO / "ttlgen" / "device" / "include"

HANG_S = 10.0  # no spec may keep a build busy longer than this

# Which spec kinds read names another kind declares. An edit of a spec of kind K may be
# reported in a spec of kind K (duplicates are reported at the second declaration) or of
# any kind that reads K, directly or through another kind; anywhere else it is misplaced.
READS: dict[str, frozenset[str]] = {
    "ttlgen.op_vocabulary": frozenset(),
    "ttlgen.ops": frozenset({"ttlgen.op_vocabulary"}),
    "ttlgen.op_spelling": frozenset({"ttlgen.ops", "ttlgen.op_vocabulary", "ttlgen.tt_metal_api", "ttlgen.tt_metal_emulation"}),
    "ttlgen.relations": frozenset({"ttlgen.op_vocabulary"}),
    "ttlgen.runtime_api": frozenset({"ttlgen.op_vocabulary", "ttlgen.tt_metal_api"}),
    "ttlgen.architecture": frozenset({"ttlgen.op_vocabulary", "ttlgen.target"}),
    "ttlgen.target": frozenset(
        {"ttlgen.architecture", "ttlgen.runtime_api", "ttlgen.relations", "ttlgen.op_vocabulary", "ttlgen.tt_metal_api"}
    ),
    "ttlgen.kernel": frozenset(
        {"ttlgen.ops", "ttlgen.op_vocabulary", "ttlgen.op_spelling", "ttlgen.target", "ttlgen.tt_metal_api", "ttlgen.runtime_api", "ttlgen.architecture"}
    ),
    "ttlgen.tt_metal_api": frozenset(),
    "ttlgen.tt_metal_emulation": frozenset({"ttlgen.tt_metal_api", "ttlgen.op_vocabulary", "ttlgen.ops", "ttlgen.math"}),
    "ttlgen.math": frozenset(),
    "ttlgen.layout": frozenset(),
    "ttlgen.program": frozenset({"ttlgen.layout"}),
}

# Keys whose string values are prose that reaches generated files (comments, docstrings,
# Markdown, JSON strings) rather than names the schema constrains.
FREE_TEXT_KEYS = frozenset({"doc", "summary", "review", "derivation", "rejected", "warning", "description", "why", "message"})

HOSTILE_TEXT = (
    "*/",
    "/* not closed",
    "ends the comment */ int injected_symbol = 1; /* reopen",
    "line one\nint injected_line = 2;",
    "// trailing\n#define INJECTED 3",
    "back\\slash\\",
    "\\n",
    'double "quote"',
    "single 'quote'",
    '"""',
    "'''",
    "nul\x00byte",
    "bidi \u202eevil\u202c text",
    "isolate \u2066x\u2069",
    "esc \x1b[31m red",
    "del \x7f char",
    "vertical \x0b tab",
    "line\u2028separator",
    "next\x85line",
    "carriage\rreturn",
    "| table | cell |",
    "`code` <b>html</b> &amp;",
    "{value} {0} %s %(x)s {{ jinja }} {% raw %}",
    "\ufeffbom",
    "emoji \U0001f600",
    "lone \ud800 surrogate",
    "x" * 5000,
    "",
    " ",
)

CONTROL_CHARACTERS = ("\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\ufffe", "\uffff", "\u202e", "\u2028", "\r", "\t", "\ufeff")

EDGE_NUMBERS: tuple[Any, ...] = (
    0, -1, 1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 1023, 1024, 4095, 4096,
    2**31 - 1, 2**31, 2**32, 2**63, -(2**63), 10**30, 32.0, 1.5, -0.0, math.inf, -math.inf, math.nan,
)

OTHER_TYPES: tuple[Any, ...] = (
    None, True, False, 0, -1, 1.5, "", "x", "bf16", [], {}, [1, "a"], {"k": 1}, [[1]], {"name": "x"},
)


class Outcome(enum.Enum):
    REJECTED = "rejected"
    BUILT = "built"
    TRACEBACK = "traceback"
    UNLOCATED = "unlocated"
    MISPLACED = "misplaced"
    PARTIAL_WRITE = "partial write"
    HANG = "hang"
    COMPILE_FAILURE = "compile failure"
    IMPORT_FAILURE = "import failure"
    BAD_EXIT = "bad exit code"
    INJECTION = "injection"
    API_NAME = "unknown API name"
    # The C++ tables' static_assert failed on a golden that validate should have refused.
    GOLDEN = "golden broken"
    HARNESS = "fuzzer error"  # the mutator or judge itself failed: fix this module

    @property
    def failed(self) -> bool:
        return self not in (Outcome.REJECTED, Outcome.BUILT)

    @property
    def open_elsewhere(self) -> bool:
        """Failures another piece of work owns: counted and reported without failing the
        suite. None now: free text is escaped for every output and every spelled call is
        checked against its API level."""
        return False


@dataclasses.dataclass(frozen=True)
class Mutation:
    kind: str
    file: str  # path under specs/ of the file mutated (its new name if renamed)
    detail: str
    hostile_text: bool = False  # hostile text was put in a free-text string
    # A character inserted at (line, column) of the file: an error naming it must be there.
    inserted: tuple[str, int, int] | None = None


@dataclasses.dataclass(frozen=True)
class Trial:
    seed: int
    outcome: Outcome
    mutations: tuple[Mutation, ...]
    detail: str
    seconds: float

    def describe(self) -> str:
        edits = "; ".join(f"{m.kind} {m.file}: {m.detail}" for m in self.mutations)
        return f"seed {self.seed}: {self.outcome.value} after [{edits}] ({self.seconds:.1f} s)\n    {self.detail}"


# ----------------------------------------------------------------------------- mutations


def load_data(text: str, suffix: str) -> Any:
    from ttlgen.spec.load import parse_text

    data, _ = parse_text(text, "x", suffix)
    return data


def dump_yaml(data: Any) -> str:
    # A deepened expression nests hundreds of levels; PyYAML's representer recurses per level.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        return str(yaml.dump(data, Dumper=yaml.SafeDumper, sort_keys=False, allow_unicode=True, width=10**9))
    finally:
        sys.setrecursionlimit(limit)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")


def _toml_string(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _toml_key(key: object) -> str:
    text = str(key)
    return text if _BARE_KEY.match(text) else _toml_string(text)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        items = (f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items() if v is not None)
        return "{" + ", ".join(items) + "}"
    return _toml_string(str(value))


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) and v for v in value)


def dump_toml(data: dict[str, Any]) -> str:
    """TOML as a person writes it: [tables] and [[arrays of tables]], inline values below.
    TOML has no null: null values are left out (one more mutation)."""
    lines: list[str] = []

    def table(path: list[str], body: dict[str, Any], header: str | None) -> None:
        if header is not None:
            lines.append("")
            lines.append(header.format(".".join(_toml_key(p) for p in path)))
        nested = []
        for key, value in body.items():
            if value is None:
                continue
            if (isinstance(value, dict) and value) or _is_table_array(value):
                nested.append((key, value))
            else:
                lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
        for key, value in nested:
            if isinstance(value, dict):
                table([*path, key], value, "[{}]")
            else:
                for item in value:
                    table([*path, key], item, "[[{}]]")

    table([], data, None)
    return "\n".join(lines) + "\n"


def _nodes(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    stack = [(path, data)]
    while stack:
        here, value = stack.pop()
        yield here, value
        if isinstance(value, dict):
            stack.extend(((*here, k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((*here, i), v) for i, v in enumerate(value))


def _get(data: Any, path: Sequence[Any]) -> Any:
    for part in path:
        data = data[part]
    return data


def _set(data: Any, path: Sequence[Any], value: Any) -> Any:
    if not path:
        return value
    _get(data, path[:-1])[path[-1]] = value
    return data


def _typo(rng: random.Random, word: str) -> str:
    if not word:
        return "x"
    i = rng.randrange(len(word))
    choice = rng.randrange(4)
    if choice == 0:
        return word[:i] + word[i + 1 :] or "x"
    if choice == 1:
        return word[:i] + word[i] + word[i:]
    if choice == 2 and len(word) > 1:
        j = min(i + 1, len(word) - 1)
        chars = list(word)
        chars[i], chars[j] = chars[j], chars[i]
        return "".join(chars)
    return word[:i] + rng.choice("abcdefghijklmnopqrstuvwxyz_0") + word[i + 1 :]


DEEP = "__ttlgen_fuzz_deep__"


KERNEL_EDITS = frozenset({"deepen expression", "widen expression", "wrap in loop", "wrap in conditional", "unwrap loop"})


class Mutator:
    """Mutations of one spec file: data edits (written back as YAML or TOML) and text edits."""

    def __init__(self, rng: random.Random, rel: str, text: str) -> None:
        self.rng = rng
        self.rel = rel
        self.text = text
        self.suffix = Path(rel).suffix

    # --- data edits: return the new data and a description

    def data_edits(self) -> list[tuple[str, Callable[[Any], tuple[Any, str, bool]]]]:
        return [
            ("delete key", self.delete_key),
            ("change type", self.change_type),
            ("hostile text", self.hostile_text),
            ("misspell key", self.misspell_key),
            ("misspell name", self.misspell_value),
            ("edge number", self.edge_number),
            ("duplicate item", self.duplicate_item),
            ("swap values", self.swap_values),
            ("nest deeply", self.nest_deeply),
            ("huge list", self.huge_list),
            ("empty container", self.empty_container),
        ]

    def pick(self, data: Any, want: Callable[[tuple[Any, ...], Any], bool]) -> tuple[Any, ...] | None:
        found = [p for p, v in _nodes(data) if want(p, v)]
        return self.rng.choice(found) if found else None

    def delete_key(self, data: Any) -> tuple[Any, str, bool]:
        path = self.pick(data, lambda p, v: bool(p) and isinstance(p[-1], str))
        if path is None:
            return data, "nothing to delete", False
        del _get(data, path[:-1])[path[-1]]
        return data, f"deleted {_show(path)}", False

    def change_type(self, data: Any) -> tuple[Any, str, bool]:
        path = self.pick(data, lambda p, v: bool(p))
        if path is None:
            return data, "nothing to change", False
        old = _get(data, path)
        choices = [v for v in OTHER_TYPES if type(v) is not type(old)]
        new = json.loads(json.dumps(self.rng.choice(choices)))
        return _set(data, path, new), f"{_show(path)}: {old!r:.40} -> {new!r}", False

    def hostile_text(self, data: Any) -> tuple[Any, str, bool]:
        # Prose fields half of the time: they are few, and they are what reaches outputs verbatim.
        prose = self.rng.random() < 0.5
        path = self.pick(
            data,
            lambda p, v: bool(p) and isinstance(v, str) and p[0] != "spec"
            and (not prose or any(isinstance(k, str) and k in FREE_TEXT_KEYS for k in p[-2:])),
        ) or self.pick(data, lambda p, v: bool(p) and isinstance(v, str) and p[0] != "spec")
        if path is None:
            return data, "no string", False
        old = _get(data, path)
        text = self.rng.choice(HOSTILE_TEXT)
        new = self.rng.choice((text, f"{old} {text}", f"{text}{old}"))
        free = any(isinstance(p, str) and p in FREE_TEXT_KEYS for p in path[-2:])
        return _set(data, path, new), f"{_show(path)} = {new!r:.60}", free

    def misspell_key(self, data: Any) -> tuple[Any, str, bool]:
        path = self.pick(data, lambda p, v: bool(p) and isinstance(p[-1], str))
        if path is None:
            return data, "no key", False
        parent = _get(data, path[:-1])
        new_key = _typo(self.rng, path[-1]) if self.rng.random() < 0.8 else self.rng.choice(HOSTILE_TEXT[:12])
        rebuilt = {(new_key if k == path[-1] else k): v for k, v in parent.items()}
        parent.clear()
        parent.update(rebuilt)
        return data, f"key {_show(path)} -> {new_key!r:.40}", False

    def misspell_value(self, data: Any) -> tuple[Any, str, bool]:
        path = self.pick(data, lambda p, v: bool(p) and isinstance(v, str) and bool(v) and len(v) < 40)
        if path is None:
            return data, "no name", False
        new = _typo(self.rng, _get(data, path))
        return _set(data, path, new), f"{_show(path)} -> {new!r}", False

    def edge_number(self, data: Any) -> tuple[Any, str, bool]:
        path = self.pick(data, lambda p, v: bool(p) and isinstance(v, int | float) and not isinstance(v, bool))
        if path is None:
            return data, "no number", False
        new = self.rng.choice(EDGE_NUMBERS)
        return _set(data, path, new), f"{_show(path)} -> {new!r}", False

    def duplicate_item(self, data: Any) -> tuple[Any, str, bool]:
        path = self.pick(data, lambda p, v: isinstance(v, list) and bool(v))
        if path is None:
            return data, "no list", False
        items = _get(data, path)
        items.insert(self.rng.randrange(len(items) + 1), json.loads(json.dumps(self.rng.choice(items))))
        return data, f"duplicated an item of {_show(path)}", False

    def swap_values(self, data: Any) -> tuple[Any, str, bool]:
        path = self.pick(data, lambda p, v: isinstance(v, dict) and len(v) >= 2)
        if path is None:
            return data, "no mapping", False
        body = _get(data, path)
        a, b = self.rng.sample(list(body), 2)
        body[a], body[b] = body[b], body[a]
        return data, f"swapped {_show((*path, a))} and {b!r}", False

    def nest_deeply(self, data: Any) -> tuple[Any, str, bool]:
        path = self.pick(data, lambda p, v: bool(p))
        if path is None:
            return data, "nothing", False
        self.depth = self.rng.choice((20, 99, 100, 101, 150, 600, 1200))
        return _set(data, path, DEEP), f"{_show(path)} nested {self.depth} deep", False

    def huge_list(self, data: Any) -> tuple[Any, str, bool]:
        path = self.pick(data, lambda p, v: isinstance(v, list))
        if path is None:
            return data, "no list", False
        size = self.rng.choice((4096, 4097, 20_000))
        items = _get(data, path)
        pool = items or [1, "x", 2.5]
        return _set(data, path, [pool[i % len(pool)] for i in range(size)]), f"{_show(path)} has {size} items", False

    def empty_container(self, data: Any) -> tuple[Any, str, bool]:
        path = self.pick(data, lambda p, v: bool(p) and isinstance(v, dict | list) and bool(v))
        if path is None:
            return data, "nothing", False
        return _set(data, path, type(_get(data, path))()), f"emptied {_show(path)}", False

    # --- kernel body edits (a ttlgen.kernel file): expressions deeper and wider, statements
    # moved into loops and conditionals or out of them

    def kernel_edits(self) -> list[tuple[str, Callable[[Any], tuple[Any, str, bool]]]]:
        return [
            ("deepen expression", self.deepen_expression),
            ("widen expression", self.widen_expression),
            ("wrap in loop", self.wrap_in_loop),
            ("wrap in conditional", self.wrap_in_conditional),
            ("unwrap loop", self.unwrap_loop),
        ]

    def _stored(self, data: Any) -> tuple[Any, ...] | None:
        """The path of a store's or accumulation's value."""
        return self.pick(data, lambda p, v: len(p) >= 2 and p[-1] == "value" and p[-2] in ("store", "accumulate"))

    def deepen_expression(self, data: Any) -> tuple[Any, str, bool]:
        path = self._stored(data)
        unaries = op_names(1)
        if path is None or not unaries:
            return data, "no store", False
        depth = self.rng.choice((2, 10, 45, 60, 200))
        value = _get(data, path)
        for _ in range(depth):
            value = {"op": self.rng.choice(unaries), "args": [value]}
        return _set(data, path, value), f"{_show(path)} under {depth} unary ops", False

    def widen_expression(self, data: Any) -> tuple[Any, str, bool]:
        path = self._stored(data)
        binaries = op_names(2)
        if path is None or not binaries:
            return data, "no store", False
        value = _get(data, path)
        leaves = [v for p, v in _nodes(value) if isinstance(v, str) and (not p or p[-2:-1] == ("args",) or isinstance(p[-1], int))] or [value]
        width = self.rng.choice((2, 3, 16, 257, 2048, 4096))
        level: list[Any] = [json.loads(json.dumps(leaves[i % len(leaves)])) for i in range(width)]
        op = self.rng.choice(binaries)
        while len(level) > 1:
            paired = [{"op": op, "args": [a, b]} for a, b in zip(level[::2], level[1::2], strict=False)]
            level = paired + (level[-1:] if len(level) % 2 else [])
        return _set(data, path, level[0]), f"{_show(path)} a tree of {width} leaves", False

    def _bodies(self, data: Any) -> list[tuple[Any, ...]]:
        return [p for p, v in _nodes(data) if p and p[-1] in ("body", "then", "else") and isinstance(v, list) and v]

    def wrap_in_loop(self, data: Any) -> tuple[Any, str, bool]:
        bodies = self._bodies(data)
        if not bodies:
            return data, "no body", False
        path = self.rng.choice(bodies)
        body = _get(data, path)
        start = self.rng.randrange(len(body))
        end = self.rng.randrange(start, len(body)) + 1
        count = self.rng.choice((0, 1, 2, 3, 4097))
        body[start:end] = [{"loop": {"var": f"fz{self.rng.randrange(100)}", "count": count, "body": body[start:end]}}]
        return data, f"{_show(path)}[{start}:{end}] in a loop of {count}", False

    def wrap_in_conditional(self, data: Any) -> tuple[Any, str, bool]:
        inside = [p for p in self._bodies(data) if "loop" in p[:-1]]
        if not inside:
            return data, "no body inside a loop", False
        path = self.rng.choice(inside)
        loop = _get(data, path[: len(path) - 1 - path[::-1].index("loop")])
        var = loop.get("var") if isinstance(loop, dict) else None
        if self.rng.random() < 0.1 or not isinstance(var, str):
            var = "no_such_var"
        body = _get(data, path)
        start = self.rng.randrange(len(body))
        end = self.rng.randrange(start, len(body)) + 1
        when = self.rng.choice(("first", "last", "not_first", "not_last"))
        body[start:end] = [{"if": {"var": var, "is": when, "then": body[start:end]}}]
        return data, f"{_show(path)}[{start}:{end}] if {var} is {when}", False

    def unwrap_loop(self, data: Any) -> tuple[Any, str, bool]:
        path = self.pick(data, lambda p, v: isinstance(v, dict) and isinstance(v.get("loop"), dict) and isinstance(p[-1:] and p[-1], int))
        if path is None:
            return data, "no loop", False
        parent = _get(data, path[:-1])
        inner = parent[path[-1]]["loop"].get("body", [])
        parent[path[-1] : path[-1] + 1] = inner if isinstance(inner, list) else [inner]
        return data, f"unwrapped the loop at {_show(path)}", False

    # --- text edits: return the new text

    def text_edits(self) -> list[tuple[str, Callable[[str], tuple[str, str]]]]:
        return [
            ("truncate", self.truncate),
            ("control character", self.control_character),
            ("delete line", self.delete_line),
            ("duplicate line", self.duplicate_line),
            ("reindent line", self.reindent_line),
        ]

    def truncate(self, text: str) -> tuple[str, str]:
        at = self.rng.randrange(len(text) + 1)
        return text[:at], f"cut at {at} of {len(text)}"

    def control_character(self, text: str) -> tuple[str, str]:
        at = self.rng.randrange(len(text) + 1)
        ch = self.rng.choice(CONTROL_CHARACTERS)
        before = text[:at]
        self.inserted = (ch, before.count("\n") + 1, at - (before.rfind("\n") + 1) + 1)
        return text[:at] + ch + text[at:], f"U+{ord(ch):04X} at {at}"

    def delete_line(self, text: str) -> tuple[str, str]:
        lines = text.split("\n")
        i = self.rng.randrange(len(lines))
        del lines[i]
        return "\n".join(lines), f"line {i + 1}"

    def duplicate_line(self, text: str) -> tuple[str, str]:
        lines = text.split("\n")
        i = self.rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return "\n".join(lines), f"line {i + 1}"

    def reindent_line(self, text: str) -> tuple[str, str]:
        lines = text.split("\n")
        i = self.rng.randrange(len(lines))
        lines[i] = lines[i][2:] if lines[i].startswith("  ") and self.rng.random() < 0.5 else "  " + lines[i]
        return "\n".join(lines), f"line {i + 1}"


_OP_NAMES: dict[int, list[str]] = {}


def op_names(arity: int) -> list[str]:
    """Elementwise ops of the real specs with ``arity`` operands (what a kernel body edit
    composes), found in the op specs rather than named here."""
    if not _OP_NAMES:
        for path in sorted((SPECS / "ops").glob("*.yaml")):
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("spec") != "ttlgen.ops/v1":
                continue
            for family in (data.get("families") or {}).values():
                if str(family.get("primitive", "")).startswith("Elementwise") and family.get("result") == "dst":
                    _OP_NAMES.setdefault(len(family.get("operands", ())), []).extend(family.get("names", ()))
    return sorted(_OP_NAMES.get(arity, []))


def _show(path: Sequence[Any]) -> str:
    from ttlgen.errors import format_key_path

    return format_key_path(tuple(path))


def mutate(rng: random.Random, specs: Path, files: Sequence[str]) -> Mutation:
    """Apply one mutation to the tree at ``specs``; return what was done."""
    rel = rng.choice(files)
    path = specs / rel
    if rng.random() < 0.02:
        path.unlink()
        return Mutation("delete file", rel, "removed")
    raw = path.read_bytes()
    if rng.random() < 0.05:
        data = bytearray(raw)
        if data:
            at = rng.randrange(len(data))
            data[at] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(data))
        return Mutation("flip bit", rel, f"byte {len(data) and at}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:  # an earlier bit flip: cut the bytes instead
        at = rng.randrange(len(raw) + 1)
        path.write_bytes(raw[:at])
        return Mutation("truncate bytes", rel, f"cut at {at} of {len(raw)}")
    mutator = Mutator(rng, rel, text)
    if rng.random() < 0.3:
        name, edit = rng.choice(mutator.text_edits())
        new_text, detail = edit(text)
        path.write_text(new_text, encoding="utf-8", errors="surrogatepass")
        return Mutation(name, rel, detail, inserted=getattr(mutator, "inserted", None))
    try:
        data = load_data(text, path.suffix)
    except Exception:  # an earlier mutation broke it: edit the text instead
        new_text, detail = mutator.truncate(text)
        path.write_text(new_text, encoding="utf-8", errors="surrogatepass")
        return Mutation("truncate", rel, detail)
    to_toml = rng.random() < 0.15
    if to_toml and rng.random() < 0.3:
        name, detail, hostile = "convert", "the same data", False
    else:
        kernel = isinstance(data, dict) and data.get("spec") == "ttlgen.kernel/v1" and rng.random() < 0.6
        name, edit = rng.choice(mutator.kernel_edits() if kernel else mutator.data_edits())
        data, detail, hostile = edit(data)
    if to_toml and isinstance(data, dict):
        new_text, new_rel = dump_toml(data), str(Path(rel).with_suffix(".toml"))
        name = f"{name} + TOML"
    else:
        new_text, new_rel = dump_yaml(data), rel
    if DEEP in new_text:
        depth = getattr(mutator, "depth", 200)
        opener, closer = ("[", "]") if rng.random() < 0.5 else ("{a: " if new_rel.endswith(".yaml") else "{a = ", "}")
        nested = opener * depth + "1" + closer * depth
        new_text = new_text.replace(f'"{DEEP}"', nested).replace(DEEP, nested)
    if new_rel != rel:
        path.unlink()
    (specs / new_rel).write_text(new_text, encoding="utf-8", errors="surrogatepass")
    return Mutation(name, new_rel, detail, hostile)


# ------------------------------------------------------------------------------ judging


def tree_state(root: Path) -> dict[str, tuple[int, int, int, int]]:
    """(mode, inode, size, mtime) of every file and directory under root: any write, link
    or rename a build makes changes one of them."""
    state: dict[str, tuple[int, int, int, int]] = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            state[path] = (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns)
    return state


def sync_tree(root: Path, files: dict[str, bytes]) -> None:
    """Make the tree at root hold exactly ``files``, rewriting only what differs."""
    present = {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()} if root.exists() else {}
    for rel, path in present.items():
        if rel not in files:
            path.unlink()
    for rel, data in files.items():
        path = root / rel
        if rel not in present or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    for directory in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        if not any(directory.iterdir()):
            directory.rmdir()


def spec_kind(text: str) -> str | None:
    found = re.search(r"""^\s*"?spec"?\s*[:=]\s*["']?([a-z_.]+)/v\d""", text, re.MULTILINE)
    return found.group(1) if found else None


def readers_of(kinds: set[str]) -> set[str]:
    """Kinds that read any of ``kinds``, directly or through others, and the kinds themselves."""
    found = set(kinds)
    while True:
        more = {k for k, reads in READS.items() if reads & found} - found
        if not more:
            return found
        found |= more


def _line_exists(text: str, line: int, column: int) -> bool:
    lines = text.split("\n")
    return 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) + 1


class Judge:
    """What the pristine tree looks like, to judge a trial against."""

    def __init__(self) -> None:
        self.kinds: dict[str, str] = {}
        self.specs: dict[str, bytes] = {}
        for path in sorted(SPECS.rglob("*")):
            if path.is_file():
                rel = path.relative_to(SPECS).as_posix()
                self.specs[rel] = path.read_bytes()
                self.kinds[rel] = spec_kind(self.specs[rel].decode("utf-8")) or ""
        self.generated = {
            p.relative_to(GENERATED).as_posix(): p.read_bytes()
            for p in GENERATED.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }

    def _kind_of(self, file: str) -> str:
        """The kind of a pristine spec file, or of the one a conversion (YAML to TOML) made it from."""
        stem = file.rsplit(".", 1)[0]
        return self.kinds.get(file) or next((kind for rel, kind in self.kinds.items() if rel.rsplit(".", 1)[0] == stem), "")

    def misplaced(self, root: Path, mutations: Sequence[Mutation], errors: list[dict[str, Any]]) -> str | None:
        mutated = {f"specs/{m.file}" for m in mutations}
        kinds = {self._kind_of(m.file) for m in mutations}
        for m in mutations:
            path = root / "specs" / m.file
            if path.exists():
                kinds.add(spec_kind(path.read_bytes().decode("utf-8", errors="replace")) or "")
        allowed_kinds = readers_of(kinds - {""})
        for error in errors:
            for where in (error, *error.get("notes", ())):
                file, line, column = where.get("file"), where.get("line", 0), where.get("column", 0)
                path = root / str(file)
                if not file or not path.is_file():
                    return f"{file}: not a spec file: {error['message']}"
                text = path.read_bytes().decode("utf-8", errors="replace")
                if not _line_exists(text, line, column):
                    return f"{file}:{line}:{column} does not exist: {error['message']}"
            file = str(error["file"])
            for m in mutations:
                if m.inserted is None or file != f"specs/{m.file}":
                    continue
                ch, line, column = m.inserted
                if f"U+{ord(ch):04X}" in error["message"] and (error["line"], error["column"]) != (line, column):
                    return f"{file}:{error['line']}:{error['column']}: the U+{ord(ch):04X} it names is at {line}:{column}: {error['message']}"
            rel = file.removeprefix("specs/")
            if file not in mutated and self.kinds.get(rel, "") not in allowed_kinds:
                return f"{file}:{error['line']}:{error['column']} is not the mutated file nor a spec reading it: {error['message']}"
        return None

    def check_outputs(self, out: Path) -> tuple[Outcome, str] | None:
        """Compile, parse or import every generated file that differs from the committed tree."""
        changed = [
            p.relative_to(out).as_posix()
            for p in out.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and self.generated.get(p.relative_to(out).as_posix()) != p.read_bytes()
        ]
        packages = set()
        for rel in changed:
            path = out / rel
            if rel.endswith(".json"):
                try:
                    json.loads(path.read_bytes())
                except ValueError as exc:
                    return Outcome.COMPILE_FAILURE, f"{rel}: not JSON: {exc}"
            elif rel.endswith((".h", ".hpp", ".c", ".cpp")):
                problem = _compile(out, rel)
                if problem and "static assertion failed" in problem and " golden." in problem:
                    return Outcome.GOLDEN, f"{rel}: {problem}"
                if problem:
                    return Outcome.COMPILE_FAILURE, f"{rel}: {problem}"
            elif rel.endswith(".py") and rel.startswith("python/"):
                packages.add(rel.split("/")[1])
        if packages:
            code = f"import sys; sys.path.insert(0, {str(out / 'python')!r}); " + "; ".join(f"import {p}" for p in sorted(packages))
            result = subprocess.run([sys.executable, "-I", "-B", "-c", code], capture_output=True, text=True, timeout=60)
            if result.returncode != 0:
                return Outcome.IMPORT_FAILURE, result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "import failed"
        return None


def _compile(out: Path, rel: str) -> str | None:
    from ttlgen.device.program import ProgramError, load_program

    warnings = ["-Wall", "-Wextra", "-Werror", "-fsyntax-only"]
    if rel.startswith("kernels/"):
        # Against the kernel-API headers the same build wrote for the kernel's API level, as
        # the emulator compiles it (tests/kernels/test_api_levels.py does the same).
        kernel_dir = (out / rel).parent
        try:
            prog = load_program(kernel_dir)
        except ProgramError as exc:  # a build that writes a program no runtime takes is a hole
            return f"program.json beside it is not a valid program: {exc}"
        spec = next(k for k in prog.kernels.values() if k.source == Path(rel).name)
        args = spec.emulated_compile_time_args()
        defines = ["-DKERNEL_COMPILE_TIME_ARGS=" + ",".join(map(str, args))] if args else []
        api_dir = out / "emulator" / prog.kernel_api
        if not api_dir.is_dir():
            # The emulation spec is optional (a tree for hardware needs no emulator headers):
            # without it, the kernel is held to the committed tree's headers of its level.
            api_dir = GENERATED / "emulator" / prog.kernel_api
        command = ["g++", "-std=c++17", *warnings, f"-I{api_dir}", f"-I{DEVICE_INCLUDE}", *defines, str(out / rel)]
    elif rel.startswith("emulator/"):
        # An emulator kernel-API header, included as kernels include it at its level.
        _, level, inside = rel.split("/", 2)
        api_dir = out / "emulator" / level
        from tests.conftest import (
            host_define_flags,  # the defines a kernel's build passes at its level
        )

        command = ["g++", "-std=c++17", *warnings, *host_define_flags(level), f"-I{api_dir}", f"-I{DEVICE_INCLUDE}", "-x", "c++", "-"]
        stdin = f'#include "{inside}"\n'
        result = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60)
        return None if result.returncode == 0 else _first_error(result.stderr)
    elif rel.startswith("tests/"):  # a generated check program: a source of its own
        compiler = ["gcc", "-std=c11"] if rel.endswith(".c") else ["g++", "-std=c++17"]
        command = [*compiler, "-pedantic", *warnings, f"-I{out / 'include'}", str(out / rel)]
    elif rel.endswith((".h", ".c")):
        source = rel if rel.endswith(".c") else None
        command = ["gcc", "-std=c11", "-pedantic", *warnings, f"-I{out / 'include'}"]
        command += [str(out / source)] if source else ["-x", "c", "-"]
    else:
        command = ["g++", "-std=c++17", "-pedantic", *warnings, f"-I{out / 'include'}", "-x", "c++", "-"]
    stdin = None if command[-1] != "-" else f'#include "{Path(rel).relative_to("include").as_posix()}"\n'
    result = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60)
    if result.returncode == 0:
        return None
    return _first_error(result.stderr)


def _first_error(stderr: str) -> str:
    return next((line for line in stderr.splitlines() if "error" in line), stderr[:200]).strip()


# What g++ says of a name the headers do not declare.
_UNKNOWN_NAME = re.compile(
    r"was not declared|is not a member of|does not name a type|No such file or directory|has no member named|"
    r"is not a template|not declared in this scope|no matching function|a declaration of .* must be available"
)

_JUDGE: Judge | None = None


def judge() -> Judge:
    global _JUDGE
    if _JUDGE is None:
        _JUDGE = Judge()
    return _JUDGE


def run_trial(seed: int, workdir: Path) -> Trial:
    """One mutated tree, built in ``workdir``: its specs/ and generated/ are reset to the
    real ones first (only files that differ are rewritten, which keeps a trial cheap)."""
    from typer.testing import CliRunner

    from ttlgen.cli import app

    rng = random.Random(seed)
    the = judge()
    sync_tree(workdir / "specs", the.specs)
    sync_tree(workdir / "generated", the.generated)
    files = sorted(the.specs)
    mutations = [mutate(rng, workdir / "specs", files)]
    if rng.random() < 0.2:
        files = sorted(p.relative_to(workdir / "specs").as_posix() for p in (workdir / "specs").rglob("*") if p.is_file())
        second = mutate(rng, workdir / "specs", files)
        if second.file == mutations[0].file or second.file.rsplit(".", 1)[0] == mutations[0].file.rsplit(".", 1)[0]:
            mutations[0] = dataclasses.replace(mutations[0], inserted=None)  # its position moved
        mutations.append(second)
    before = tree_state(workdir / "generated")
    beside = sorted(p.name for p in workdir.iterdir())
    previous = Path.cwd()
    os.chdir(workdir)
    try:
        start = time.perf_counter()
        result = CliRunner().invoke(app, ["build", "--json", "--no-cache"])
        seconds = time.perf_counter() - start
    finally:
        os.chdir(previous)

    def done(outcome: Outcome, detail: str) -> Trial:
        return Trial(seed, outcome, tuple(mutations), detail, seconds)

    if result.exception is not None and not isinstance(result.exception, SystemExit):
        exc = result.exception
        frames = traceback.extract_tb(exc.__traceback__)
        where = next((f for f in reversed(frames) if "/ttlgen/" in f.filename), frames[-1] if frames else None)
        place = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
        # A build imports the resolver it generates: unescaped text breaks it right there.
        hostile = any(m.hostile_text for m in mutations) and isinstance(exc, SyntaxError | ValueError)
        return done(Outcome.INJECTION if hostile else Outcome.TRACEBACK, f"traceback {type(exc).__name__}: {str(exc)[:200]}{place}")
    if seconds > HANG_S:
        return done(Outcome.HANG, f"build took {seconds:.1f} s")
    if result.exit_code == 2:
        try:
            payload = json.loads(result.stdout)
        except ValueError:
            return done(Outcome.UNLOCATED, f"no JSON result: {result.stdout[:200]!r} {result.stderr[:200]!r}")
        errors = payload.get("errors", [])
        unlocated = [e for e in errors if not e.get("file") or e.get("line", 0) <= 0]
        if not errors or unlocated:
            return done(Outcome.UNLOCATED, json.dumps(unlocated or payload)[:300])
        problem = the.misplaced(workdir, mutations, errors)
        if problem:
            return done(Outcome.MISPLACED, problem)
        if tree_state(workdir / "generated") != before or sorted(p.name for p in workdir.iterdir()) != beside:
            return done(Outcome.PARTIAL_WRITE, "the failed build changed the output tree or left files beside it")
        return done(Outcome.REJECTED, errors[0]["message"][:200])
    if result.exit_code != 0:
        return done(Outcome.BAD_EXIT, f"exit {result.exit_code}: {result.stderr[:200]}")
    found = the.check_outputs(workdir / "generated")
    if found is not None:
        outcome, detail = found
        if outcome in (Outcome.COMPILE_FAILURE, Outcome.IMPORT_FAILURE) and any(m.hostile_text for m in mutations):
            outcome = Outcome.INJECTION
        elif (
            outcome is Outcome.COMPILE_FAILURE
            and any(the.kinds.get(m.file.replace(".toml", ".yaml")) == "ttlgen.op_spelling" for m in mutations)
            and (_UNKNOWN_NAME.search(detail) or any(".entry." in m.detail for m in mutations))
        ):
            outcome = Outcome.API_NAME
        return done(outcome, detail)
    return done(Outcome.BUILT, "")


def run_trials(seeds: Sequence[int], workdir: Path | None = None) -> list[Trial]:
    """Trials in this process (the environment's cache directory is used as is)."""
    with tempfile.TemporaryDirectory(prefix="ttlgen-fuzz-") as scratch:
        where = workdir or Path(scratch)
        trials = []
        for seed in seeds:
            try:
                trials.append(run_trial(seed, where))
            except Exception as exc:  # a bug here must not end a long campaign unseen
                frame = traceback.extract_tb(exc.__traceback__)[-1]
                detail = f"{type(exc).__name__}: {exc} at {Path(frame.filename).name}:{frame.lineno}"
                trials.append(Trial(seed, Outcome.HARNESS, (), detail, 0.0))
        return trials


def run_campaign(trials: int, first_seed: int = 0, jobs: int = 1, batch: int = 100) -> list[Trial]:
    """Many trials in fresh worker processes (a build imports the resolver generated from
    its specs, so a process that met many would keep them all: it is retired after one
    batch), with a cache directory of their own, removed at the end."""
    seeds = list(range(first_seed, first_seed + trials))
    batches = [seeds[i : i + batch] for i in range(0, len(seeds), batch)]
    results: list[Trial] = []
    saved = os.environ.get("TTLGEN_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="ttlgen-fuzz-cache-") as cache:
        os.environ["TTLGEN_CACHE_DIR"] = cache
        try:
            with ProcessPoolExecutor(max_workers=jobs, max_tasks_per_child=1) as pool:
                for batch_trials in pool.map(run_trials, batches):
                    results.extend(batch_trials)
        finally:
            if saved is None:
                os.environ.pop("TTLGEN_CACHE_DIR", None)
            else:
                os.environ["TTLGEN_CACHE_DIR"] = saved
    return results


# A hole: specs that validate and build, yet give output that does not compile or import.
HOLES = frozenset({Outcome.COMPILE_FAILURE, Outcome.IMPORT_FAILURE, Outcome.INJECTION, Outcome.API_NAME, Outcome.GOLDEN})


def table(trials: Sequence[Trial]) -> str:
    counts = collections.Counter(t.outcome for t in trials)
    slowest = max(trials, key=lambda t: t.seconds, default=None)
    lines = [f"{len(trials)} trials", f"slowest: {slowest.describe() if slowest else '-'}", f"{'outcome':<18}{'trials':>8}"]
    lines += [f"{o.value:<18}{counts.get(o, 0):>8}" for o in Outcome]
    lines.append(f"{'holes (all kinds)':<18}{sum(counts.get(o, 0) for o in HOLES):>8}")
    kernel_edits = [t for t in trials if any(m.kind in KERNEL_EDITS for m in t.mutations)]
    lines.append(f"{'kernel-body edits':<18}{len(kernel_edits):>8} ({sum(t.outcome.failed for t in kernel_edits)} failed)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--show", type=int, default=20, help="failures to describe")
    args = parser.parse_args(argv)
    trials = run_campaign(args.trials, args.seed, args.jobs)
    print(table(trials))
    failures = [t for t in trials if t.outcome.failed]
    for trial in failures[: args.show]:
        print(trial.describe())
    return 1 if any(t.outcome.failed and not t.outcome.open_elsewhere for t in trials) else 0


if __name__ == "__main__":
    sys.exit(main())
