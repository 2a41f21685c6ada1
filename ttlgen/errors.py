"""Located diagnostics: every user-facing error names a file, line, column and key path."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum


class ExitCode(IntEnum):
    """The one exit-code convention of every ttlgen command."""

    OK = 0
    FAILED = 1  # the command ran and its answer is "no": stale tree, rejected or failing kernel
    BAD_INPUT = 2  # bad specs, arguments or environment: nothing was decided


PathPart = str | int
KeyPath = tuple[PathPart, ...]

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")


def format_key_path(path: KeyPath) -> str:
    """Render a key path the way users write it: ``ops.tile_add.strategies[1]``."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY.match(part):
            out.append(f".{part}" if out else part)
        else:
            # Keys with dots or spaces would make the path ambiguous; quote them.
            out.append(f"[{part!r}]")
    return "".join(out) or "<root>"


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'tile_add'?)`` for the closest valid names, or ``""`` when none is close."""
    close = difflib.get_close_matches(str(name), sorted({str(c) for c in candidates}), n=3, cutoff=0.7)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


def describe_value(value: object) -> str:
    """A value as an error message shows it: scalars as literals, containers by kind."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


@dataclass(frozen=True, order=True)
class Mark:
    """Where a value came from. ``file`` is a display path relative to the project."""

    file: str
    line: int = 0
    column: int = 0
    path: KeyPath = ()

    def child(self, part: PathPart) -> Mark:
        return Mark(self.file, self.line, self.column, (*self.path, part))

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    mark: Mark
    message: str
    notes: tuple[Diagnostic, ...] = ()

    def format(self) -> str:
        where = str(self.mark)
        head = f"{where}: {format_key_path(self.mark.path)}: {self.message}" if self.mark.path else f"{where}: {self.message}"
        lines = [head]
        lines.extend(f"  note: {note.format()}" for note in self.notes)
        return "\n".join(lines)

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.mark.file, self.mark.line, self.mark.column, self.message)

    def to_json(self) -> dict[str, object]:
        """The one error record of every command's JSON output; an unknown location
        (no file, line 0) is null."""
        return {
            "file": self.mark.file or None,
            "line": self.mark.line or None,
            "column": self.mark.column or None,
            "path": format_key_path(self.mark.path) if self.mark.path else None,
            "message": self.message,
            "notes": [note.to_json() for note in self.notes],
        }


def error_envelope(records: Iterable[dict[str, object]]) -> dict[str, object]:
    """What every command prints on stdout with --json when it fails: records are
    ``Diagnostic.to_json()`` (a command may add fields of its own, e.g. ``op``)."""
    return {"status": "error", "errors": list(records)}


class SpecErrors(Exception):
    """Raised by a pipeline stage that found errors; carries every one of them."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics: tuple[Diagnostic, ...] = tuple(
            sorted(dict.fromkeys(diagnostics), key=Diagnostic.sort_key)
        )
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(d.format() for d in self.diagnostics)


@dataclass
class DiagnosticSink:
    """Collects errors so a stage can report all of them, not just the first."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def error(self, mark: Mark, message: str, notes: Sequence[Diagnostic] = ()) -> None:
        self.diagnostics.append(Diagnostic(mark, message, tuple(notes)))

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics.extend(diagnostics)

    def __bool__(self) -> bool:
        return bool(self.diagnostics)

    def raise_if_any(self) -> None:
        if self.diagnostics:
            raise SpecErrors(self.diagnostics)


class UsageError(Exception):
    """A problem with how ttlgen was invoked (missing directory, bad option): exit code 2."""

    def diagnostic(self) -> Diagnostic:
        """The error as a diagnostic without a location."""
        return Diagnostic(Mark(""), str(self))


def diagnostics_of(exc: SpecErrors | UsageError) -> tuple[Diagnostic, ...]:
    return exc.diagnostics if isinstance(exc, SpecErrors) else (exc.diagnostic(),)
