"""What the emulator's glue declares, so the emulation spec's bindings can be checked.

The emulation spec (``ttlgen.tt_metal_emulation/v1``) binds each API function to a routine
of the emulator's hand-written glue (``ttlgen/device/include/ttlemu/*.hpp``) and names the
math a call computes: a function of the math spec (which the generated math header
defines), or for the FPU's routine an entry of the glue's own table. A name the glue lacks would make every
generated emulator header that uses it fail to compile; reading the glue's declarations
turns that into a located spec error. The glue is C++ the project writes in a plain style,
so a small scanner suffices: it follows ``namespace a::b {`` blocks and collects, at
namespace scope, the names of declared functions and constants, the enumerators of
unscoped enums, and the entries of X-macro tables expanded there.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

GLUE_DIR = Path(__file__).resolve().parent.parent / "device" / "include"

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_MACRO_TABLE = re.compile(r"#define\s+(\w+)\(X\)((?:[^\n]*\\\n)*[^\n]*)")
_TABLE_ENTRY = re.compile(r"\bX\(\s*(\w+)")
_DECLARED = re.compile(r"(\w+)\s*(?:\(|=|;|\{)")
_TEMPLATE = re.compile(r"^\s*template\s*<[^{;]*?>\s*")
_KEYWORDS = frozenset({"return", "if", "for", "while", "switch", "sizeof", "decltype", "static_assert", "alignas"})


@dataclass(frozen=True)
class GlueIndex:
    """Qualified names (``compute::regs_acquire``, ``math::sfpu_unary::exp``) relative to
    the glue's top namespace, and the header files that exist."""

    names: frozenset[str]
    headers: frozenset[str]
    # ``Type::Enumerator`` the glue itself writes: enumerators of the API's enums it maps.
    enumerator_uses: frozenset[tuple[str, str, str]]  # (type, enumerator, header)

    def declares(self, name: str) -> bool:
        return name in self.names

    def members(self, scope: str) -> list[str]:
        prefix = scope + "::"
        return sorted(n[len(prefix):] for n in self.names if n.startswith(prefix) and "::" not in n[len(prefix):])


# What the walk stops at: a namespace opening, or a brace or semicolon. Between them
# nothing changes the walk's state, so it jumps (a character-by-character loop took
# most of a build's model time).
_STOP = re.compile(r"namespace\s+([\w:]+)\s*\{|[{};]")


def _walk(text: str) -> tuple[list[tuple[str, str]], list[tuple[int, int, str]]]:
    """(namespace, statement head) of each statement at namespace scope, and the span of
    every namespace block."""
    heads: list[tuple[str, str]] = []
    spans: list[tuple[int, int, str]] = []
    stack: list[tuple[str, int, int]] = []  # (namespace, brace depth inside it, start)
    depth = head_start = 0
    for found in _STOP.finditer(text):
        scope_depth = stack[-1][1] if stack else 0
        pos = found.end() - 1
        if found.group(1) is not None:
            if depth == scope_depth:
                outer = stack[-1][0] if stack else ""
                name = found.group(1)
                stack.append((f"{outer}::{name}" if outer else name, depth + 1, found.end()))
                depth += 1
                head_start = found.end()
            else:
                depth += 1  # its brace, inside a block: an ordinary one
            continue
        ch = text[pos]
        if ch == "{":
            if depth == scope_depth:
                heads.append((stack[-1][0] if stack else "", text[head_start : pos + 1]))
            depth += 1
        elif ch == "}":
            depth -= 1
            if stack and depth < stack[-1][1]:
                name, _, begin = stack.pop()
                spans.append((begin, pos, name))
            if depth == (stack[-1][1] if stack else 0):
                head_start = pos + 1
        elif depth == scope_depth:  # ";"
            heads.append((stack[-1][0] if stack else "", text[head_start : pos + 1]))
            head_start = pos + 1
    return heads, spans


@functools.cache
def scan(root: Path = GLUE_DIR, top: str = "ttlemu") -> GlueIndex:
    names: set[str] = set()
    headers: set[str] = set()
    uses: set[tuple[str, str, str]] = set()
    tables: dict[str, list[str]] = {}
    sources = sorted(root.rglob("*.hpp"))
    for path in sources:  # tables first: a header may expand another's
        for macro, body in _MACRO_TABLE.findall(path.read_text(encoding="utf-8")):
            tables[macro] = _TABLE_ENTRY.findall(body)
    for path in sources:
        header = path.relative_to(root).as_posix()
        headers.add(header)
        text = _COMMENT.sub(" ", path.read_text(encoding="utf-8"))
        text = "\n".join(" " * len(line) if line.lstrip().startswith("#") else line for line in text.split("\n"))
        heads, spans = _walk(text)
        uses.update((kind, name, header) for kind, name in re.findall(r"\b([A-Z]\w*)::(\w+)", text))

        def relative(namespace: str) -> str | None:
            if namespace == top:
                return ""
            return namespace[len(top) + 2 :] if namespace.startswith(top + "::") else None

        for namespace, raw_head in heads:
            head = _TEMPLATE.sub("", raw_head, count=1)
            scope = relative(namespace)
            if scope is None or (re.match(r"\s*(enum\b|using|typedef)", head) and not re.match(r"\s*enum\s+class", head)):
                continue
            kind = re.match(r"\s*(?:enum\s+class|struct|class)\s+(\w+)", head)
            declared = [kind.group(1)] if kind else [m for m in _DECLARED.findall(head) if m not in _KEYWORDS]
            if declared:
                names.add(f"{scope}::{declared[0]}" if scope else declared[0])
        # An X-macro table expanded inside a namespace (e.g. into an unscoped enum) declares
        # its entries there.
        for macro, entries in tables.items():
            for use in re.finditer(rf"\b{macro}\s*\(", text):
                inner = [s for s in spans if s[0] <= use.start() <= s[1]]
                if inner:
                    scope = relative(max(inner, key=lambda s: s[0])[2])
                    if scope is not None:
                        names.update(f"{scope}::{e}" if scope else e for e in entries)
    return GlueIndex(frozenset(names), frozenset(headers), frozenset(uses))
