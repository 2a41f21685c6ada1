"""Where one generated line comes from, and how the model objects behind it are named."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from ttlgen.errors import KeyPath, Mark, format_key_path
from ttlgen.spec.document import SpecDocument


class OriginKind(enum.Enum):
    SPEC = "spec"  # a value of a spec is on the line
    TEMPLATE = "template"  # the line is a template's text alone
    HEADER = "header"  # the "generated" header every file starts with
    FILE = "file"  # copied or computed from whole files, with no finer map


@dataclass(frozen=True)
class SpecSource:
    """A model object as the spec states it: the node's location and the object's name."""

    mark: Mark
    what: str

    def __str__(self) -> str:
        path = f" {format_key_path(self.mark.path)}:" if self.mark.path else ""
        return f"{self.mark}:{path} {self.what}"

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.mark.file,
            "line": self.mark.line,
            "column": self.mark.column,
            "path": format_key_path(self.mark.path) if self.mark.path else None,
            "object": self.what,
        }


@dataclass(frozen=True)
class TemplateLine:
    template: str  # templates/c/km_abi.h.j2, whatever the template directory (review matches by it)
    line: int
    shown: str = ""  # the template's file from the current directory, as every path is printed

    @property
    def file(self) -> str:
        return self.shown or self.template

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class LineOrigin:
    kind: OriginKind
    sources: tuple[SpecSource, ...] = ()  # the first is the one that produced the line
    template: TemplateLine | None = None
    files: tuple[str, ...] = ()  # the files a header names, or a copy came from
    printed: bool = False  # the template line prints a value here (rather than being the text)

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "sources": [s.to_json() for s in self.sources],
            "template": {"file": self.template.file, "line": self.template.line} if self.template else None,
            "files": list(self.files),
        }


@dataclass(frozen=True)
class FileProvenance:
    """A generated file as written, with the origin of each of its lines."""

    path: str
    lines: tuple[str, ...]
    origins: tuple[LineOrigin, ...]

    def __post_init__(self) -> None:
        assert len(self.lines) == len(self.origins), self.path


_KINDS = {"AbiVersion": "ABI version", "Dfb": "DFB", "OpSemantics": "op"}


def describe(obj: object) -> str:
    """``enum value 'limit'``: the kind of a model object and its name."""
    kind = type(obj).__name__
    words = _KINDS.get(kind) or re.sub(r"(?<!^)(?=[A-Z])", " ", kind).lower()
    if kind == "AbiVersion":
        return f"{words} {obj}"
    name = getattr(obj, "name", None) if "name" in getattr(type(obj), "__dataclass_fields__", {}) else None
    if isinstance(name, str):
        return f"{words} {name!r}"
    value = getattr(obj, "value", None)
    return f"reserved {words} {value}" if getattr(obj, "reserved", False) and isinstance(value, int) else words


def node_path(path: KeyPath) -> KeyPath:
    """The spec node a mark belongs to: a mark on one key of a list item (``fields[3].offset``)
    stands for the item."""
    if len(path) >= 2 and isinstance(path[-2], int) and isinstance(path[-1], str):
        return path[:-1]
    return path


def node_mark(document: SpecDocument, path: KeyPath) -> Mark:
    """Where the node at ``path`` is shown: a mapping entry at its key (the value of a
    mapping starts at its first child, a line below the key that was edited), a list item
    or the root at its value."""
    return document.key_mark(path) if path in document.positions.keys else document.mark(path)


@dataclass(frozen=True)
class Locator:
    """Marks of model objects turned into the spec nodes they belong to."""

    documents: tuple[SpecDocument, ...]
    by_file: dict[str, SpecDocument] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_file", {d.display: d for d in self.documents})

    def node(self, mark: Mark) -> Mark:
        document = self.by_file.get(mark.file)
        path = node_path(mark.path)
        if document is None or path not in document.positions.values:
            return mark
        return node_mark(document, path)


def entry_path(path: KeyPath) -> KeyPath:
    """The top-level entry of a spec a key path is in (``enums.gave``, ``constants[1]``)."""
    return path[:2]
