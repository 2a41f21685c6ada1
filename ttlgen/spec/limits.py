"""Size limits of a spec document, checked before the costly or recursive stages run.

Real specs nest a dozen levels, hold lists of a few dozen items and a few thousand values
in all, in at most a few dozen kilobytes. A document nested hundreds of levels deep would exhaust the interpreter's stack
inside ``tomllib`` or in the later stages, which walk data recursively; one with huge lists
would make schema validation (tens of microseconds per value) take minutes, and a file of
many megabytes would take as long to parse. Each is rejected here, at its position, in
time linear in its size.
"""

from __future__ import annotations

NESTING_LIMIT = 100
FILE_BYTES_LIMIT = 1 << 20  # the largest real spec is 15 KB; parsing a MiB takes about a second
ENTRIES_LIMIT = 4096  # items of one list or keys of one mapping
VALUES_LIMIT = 20_000  # values in one document


def toml_nesting_overflow(text: str) -> tuple[int, int] | None:
    """The (line, column) where TOML inline arrays and tables first nest deeper than
    ``NESTING_LIMIT``, or None. Strings and comments are skipped; the text need not be valid."""
    depth = 0
    line, line_start = 1, 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line, line_start = line + 1, i + 1
        elif ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch in "\"'":
            triple = text.startswith(ch * 3, i)
            closing = ch * 3 if triple else ch
            j = i + len(closing)
            while j < n:
                if ch == '"' and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(closing, j):
                    break
                if text[j] == "\n":
                    if not triple:
                        break  # an unterminated one-line string: tomllib reports it
                    line, line_start = line + 1, j + 1
                j += 1
            i = j + len(closing)
            continue
        elif ch in "[{":
            depth += 1
            if depth > NESTING_LIMIT:
                return line, i - line_start + 1
        elif ch in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return None


def size_overflow(data: object) -> tuple[tuple[str | int, ...], str] | None:
    """(key path, message) of the first limit parsed data exceeds, or None. Iterative:
    TOML dotted keys and table headers nest without brackets."""
    stack: list[tuple[object, tuple[str | int, ...]]] = [(data, ())]
    values = 0
    while stack:
        value, path = stack.pop()
        values += 1
        if values > VALUES_LIMIT:
            return path, f"the document holds more than {VALUES_LIMIT} values; split it into several files"
        if len(path) > NESTING_LIMIT:
            return path[: NESTING_LIMIT + 1], f"keys, lists and tables nest more than {NESTING_LIMIT} levels deep"
        if isinstance(value, dict | list):
            crowded = entries_overflow(len(value), "mapping" if isinstance(value, dict) else "list")
            if crowded is not None:
                return path, crowded
        if isinstance(value, dict):
            stack.extend((child, (*path, key)) for key, child in value.items())
        elif isinstance(value, list):
            stack.extend((child, (*path, index)) for index, child in enumerate(value))
    return None


def entries_overflow(count: int, kind: str) -> str | None:
    """The message for a ``kind`` ("list" or "mapping") of ``count`` entries beyond the
    limit, or None within it."""
    return f"more than {ENTRIES_LIMIT} entries in one {kind}" if count > ENTRIES_LIMIT else None


def oversized_at(raw: bytes) -> tuple[int, int] | None:
    """The (line, column) of the first byte past ``FILE_BYTES_LIMIT``, or None for a file within it."""
    if len(raw) <= FILE_BYTES_LIMIT:
        return None
    before = raw[:FILE_BYTES_LIMIT]
    line_start = before.rfind(b"\n") + 1
    return before.count(b"\n") + 1, len(before[line_start:].decode("utf-8", errors="replace")) + 1
