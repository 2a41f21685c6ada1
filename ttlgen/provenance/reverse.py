"""``ttlgen explain SPEC[:LINE]``: the generated files and lines a spec node produces.

The reverse of explaining a generated line: the whole tree is rendered with provenance
(:func:`ttlgen.provenance.files.trace_files`), and every generated line whose sources name
the node, or a node inside it, is listed. A generated line names the node it prints
first and the nodes that also decided it (the relation rules behind a plan value); both
count, the second marked as such.

The node at a line is the outermost node that starts there (``- loop:`` is the list item,
loop included). A comment or blank line documents the node after it; any other line that
starts no node continues the value of the node before it (a folded string).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ttlgen.errors import KeyPath, UsageError, did_you_mean, format_key_path
from ttlgen.provenance.origins import FileProvenance, node_mark, node_path
from ttlgen.spec.document import SpecDocument
from ttlgen.spec.files import SPEC_SUFFIXES


def spec_document(given: str, documents: Sequence[SpecDocument], generated: bool) -> SpecDocument | None:
    """The spec file ``given`` names (from the current directory), if it is one of the tree's;
    None for another path. A spec file's name (by its suffix) that is neither one of the
    tree's nor ``generated`` (the path of a generated file) is bad input."""
    wanted = Path(given).resolve()
    found = next((d for d in documents if Path(d.display).resolve() == wanted), None)
    if found is None and Path(given).suffix in SPEC_SUFFIXES and not generated:
        specs = [d.display for d in documents]
        raise UsageError(f"{given!r} is not a spec file of the tree nor a file the specs generate{did_you_mean(given, specs)}")
    return found


def _starts(document: SpecDocument) -> dict[int, list[KeyPath]]:
    """Each line and the paths of the nodes that start on it (their key, or their value
    when they have no key: a list item)."""
    found: dict[int, list[KeyPath]] = {}
    for path, (line, _) in document.positions.values.items():
        if path:
            key = document.positions.keys.get(path)
            found.setdefault(key[0] if key is not None else line, []).append(path)
    return found


def node_at(document: SpecDocument, line: int) -> KeyPath:
    """The node the user means by ``line`` of ``document`` (see the module's doc)."""
    text = Path(document.display).read_text(encoding="utf-8").split("\n")
    count = len(text) - (1 if text and text[-1] == "" else 0)
    if line > count:
        raise UsageError(f"{document.display} has {count} lines, not {line}")
    starts = _starts(document)
    if line not in starts:
        lines = sorted(starts)
        if not lines:
            return ()
        stripped = text[line - 1].strip()
        if not stripped or stripped.startswith("#"):  # a comment documents what follows
            at = bisect.bisect_right(lines, line)
            line = lines[at] if at < len(lines) else lines[-1]
        else:  # the continuation of a value
            at = bisect.bisect_left(lines, line)
            line = lines[at - 1] if at else lines[0]
    return min(starts[line], key=lambda p: (len(p), document.positions.values[p]))


@dataclass
class Produced:
    """The generated lines of one spec node: path -> line number -> whether the node (or
    one inside it) is the line's first source, rather than only a node that decided it."""

    node: KeyPath
    what: str = ""  # the model object at the node, when a line names it
    lines: dict[str, dict[int, bool]] = field(default_factory=dict)

    def add(self, path: str, line: int, first: bool) -> None:
        found = self.lines.setdefault(path, {})
        found[line] = found.get(line, False) or first

    @property
    def count(self) -> int:
        return sum(len(lines) for lines in self.lines.values())


def produced(files: dict[str, FileProvenance], document: SpecDocument, node: KeyPath | None) -> list[Produced]:
    """The generated lines of ``node`` and the nodes inside it; with None, of each node of
    the document that some generated line names, in the order of the file."""
    by_node: dict[KeyPath, Produced] = {}
    for path in sorted(files):
        file = files[path]
        for number, origin in enumerate(file.origins, 1):
            for index, source in enumerate(origin.sources):
                mark = source.mark
                if mark.file != document.display:
                    continue
                own = node_path(mark.path)
                if node is not None and own[: len(node)] != node:
                    continue
                key = node if node is not None else own
                entry = by_node.setdefault(key, Produced(key))
                if own == key and not entry.what:
                    entry.what = source.what
                entry.add(path, number, index == 0)
    if node is not None:
        return [by_node.get(node, Produced(node))]
    values = document.positions.values
    return sorted(by_node.values(), key=lambda p: (values.get(p.node, (0, 0)), p.node))


def _ranges(numbers: Iterable[int]) -> str:
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in spans)


def _where(document: SpecDocument, node: KeyPath) -> str:
    mark = node_mark(document, node)
    return f"{mark.file}:{mark.line}:{mark.column}: {format_key_path(node) if node else '<root>'}"


def _summary(found: Produced) -> str:
    if not found.lines:
        return "no generated line"
    files = len(found.lines)
    return f"{found.count} generated line{'s' * (found.count != 1)} in {files} file{'s' * (files != 1)}"


def explain_spec(document: SpecDocument, nodes: list[Produced], out: Path, one: bool) -> str:
    """The text: each node, its counts, and per generated file the lines it produces."""
    lines: list[str] = []
    if not one:
        total = sum(p.count for p in nodes)
        lines.append(f"{document.display}: {len(nodes)} node{'s' * (len(nodes) != 1)} produce {total} generated lines")
    for found in nodes:
        what = f" ({found.what})" if found.what else ""
        lines.append(f"{_where(document, found.node)}{what}: {_summary(found)}")
        indent = "  " if one else "    "
        for path, numbers in found.lines.items():
            own = [n for n, first in numbers.items() if first]
            decided = [n for n, first in numbers.items() if not first]
            text = f"{indent}{(out / path).as_posix()}: {_ranges(own)}" if own else f"{indent}{(out / path).as_posix()}:"
            if decided:
                text += f"{';' if own else ''} decided: {_ranges(decided)}"
            lines.append(text)
    return "\n".join(lines) + "\n"


def spec_json(document: SpecDocument, nodes: list[Produced], files: dict[str, FileProvenance], out: Path) -> dict[str, object]:
    def node_json(found: Produced) -> dict[str, object]:
        mark = node_mark(document, found.node)
        return {
            "line": mark.line,
            "column": mark.column,
            "path": format_key_path(found.node) if found.node else None,
            "object": found.what or None,
            "generated": [
                {
                    "file": (out / path).as_posix(),
                    "lines": [
                        {"line": n, "text": files[path].lines[n - 1], "first": first}
                        for n, first in numbers.items()
                    ],
                }
                for path, numbers in found.lines.items()
            ],
        }

    return {"spec": document.display, "nodes": [node_json(p) for p in nodes]}


def stale(files: dict[str, FileProvenance], nodes: list[Produced], out: Path) -> list[str]:
    """The listed generated files whose copy on disk is not what ``build`` writes."""
    found = []
    for path in sorted({p for n in nodes for p in n.lines}):
        on_disk = out / path
        written = ("\n".join(files[path].lines) + "\n").encode("utf-8")
        if not on_disk.is_file() or on_disk.read_bytes() != written:
            found.append((out / path).as_posix())
    return found
