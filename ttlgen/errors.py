"""Located diagnostics: every user-facing error names a file, line, column and key path."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum


class ExitCode(IntEnum):
    """The one exit-code convention of every ttlgen command (README: "Exit codes")."""

    OK = 0
    FAILED = 1  # the command ran and its answer is "no": stale tree, differences, rejected or failing kernel
    BAD_INPUT = 2  # bad specs, arguments or environment: nothing was decided
    INTERNAL = 3  # a bug in ttlgen (the traceback is printed), never mistaken for a "no"
    INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT
    READER_GONE = 141  # the reader of its output went away (a closed pipe), as a shell reports SIGPIPE


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
    """`` (did you mean 'tile_add'?)`` for the closest valid names, or ``""`` when none is close
    (the rule is the resolver library's, which its own messages use too)."""
    # Imported here: only a message that needs a suggestion pays for loading the resolver.
    from ttlgen.resolver.closest import did_you_mean as suggest

    return suggest(str(name), candidates)


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
    if isinstance(value, datetime.date | datetime.time):  # TOML's unquoted dates and times
        kind = "date and time" if isinstance(value, datetime.datetime) else "date" if isinstance(value, datetime.date) else "time"
        return f"the {kind} {value.isoformat()} (quote it to make it text)"
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
    """One located message, with notes pointing at related places."""

    mark: Mark
    message: str
    notes: tuple[Diagnostic, ...] = ()
    # Errors not shown because this one makes their check meaningless (see DiagnosticSink).
    consequences: int = 0

    def format(self) -> str:
        where = str(self.mark)
        head = f"{where}: {format_key_path(self.mark.path)}: {self.message}" if self.mark.path else f"{where}: {self.message}"
        lines = [head]
        lines.extend(f"  note: {note.format()}" for note in self.notes)
        if self.consequences:
            more = "1 more error follows" if self.consequences == 1 else f"{self.consequences} more errors follow"
            lines.append(f"  note: {more} from this one; fix it first")
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
            "consequences": self.consequences,
        }


def error_envelope(records: Iterable[dict[str, object]]) -> dict[str, object]:
    """What every command prints on stdout with --json when it fails: records are
    ``Diagnostic.to_json()`` (a command may add fields of its own, e.g. ``op``)."""
    return {"status": "error", "errors": list(records)}


def json_output(payload: object) -> str:
    """A command's --json output, success or error envelope: strict JSON (RFC 8259 has no
    NaN or infinity, which json.dumps would write as the bare words ``NaN``/``Infinity``
    that strict parsers reject), each non-finite number written as the string ``"nan"``,
    ``"inf"`` or ``"-inf"`` (README "Commands"), which ``float()`` reads back."""
    return json.dumps(_finite(payload), indent=2, allow_nan=False) + "\n"


def emit_json(payload: object) -> None:
    """Print a command's --json output on stdout."""
    sys.stdout.write(json_output(payload))


def _finite(value: object) -> object:
    if isinstance(value, float):  # numpy's float64 too
        return value if math.isfinite(value) else str(float(value))
    if isinstance(value, dict):
        return {_finite(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


class SpecErrors(Exception):
    """Raised by a pipeline stage that found errors; carries every one of them."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics: tuple[Diagnostic, ...] = tuple(
            sorted(dict.fromkeys(diagnostics), key=Diagnostic.sort_key)
        )
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(d.format() for d in self.diagnostics)


@dataclass(frozen=True)
class Entity:
    """Something a spec declares that other checks rely on: the op vocabulary, an op, a
    family's strategy routes. An error that makes an entity meaningless *breaks* it; a
    check that relies on it reports its errors *after* it (see DiagnosticSink)."""

    kind: str
    name: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.name!r}" if self.name else self.kind


@dataclass(frozen=True)
class _Recorded:
    """A diagnostic with the entities it follows from and the ones it breaks."""

    diagnostic: Diagnostic
    after: tuple[Entity, ...]
    breaks: tuple[Entity, ...]


@dataclass
class DiagnosticSink:
    """Collects errors so a stage can report all of them, not just the first, and only the
    ones that lead to a cause.

    An error that makes later checks meaningless (a missing vocabulary, an op family whose
    strategies are unknown) names the entities it ``breaks``; a check that relies on an
    entity names it in ``after``. When the entity is broken the check's error is not shown
    but counted against the error that broke it ("n more errors follow from this one"),
    whichever order the checks ran in.
    """

    _recorded: list[_Recorded] = field(default_factory=list)
    _broken: dict[Entity, int] = field(default_factory=dict)  # entity -> first error breaking it

    def error(
        self,
        mark: Mark,
        message: str,
        notes: Sequence[Diagnostic] = (),
        *,
        after: Iterable[Entity] = (),
        breaks: Iterable[Entity] = (),
    ) -> None:
        self._record(Diagnostic(mark, message, tuple(notes)), tuple(after), tuple(breaks))

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        for diagnostic in diagnostics:
            self._record(diagnostic, (), ())

    def _record(self, diagnostic: Diagnostic, after: tuple[Entity, ...], breaks: tuple[Entity, ...]) -> None:
        index = len(self._recorded)
        self._recorded.append(_Recorded(diagnostic, after, breaks))
        for entity in breaks:
            self._broken.setdefault(entity, index)

    @property
    def count(self) -> int:
        """Errors recorded so far, shown or not: a stage's "did this step fail?"."""
        return len(self._recorded)

    def _roots(self) -> list[int]:
        """For each recorded error, the index of the error it follows from (itself if none)."""
        roots: list[int | None] = [None] * len(self._recorded)

        def root(index: int, visiting: frozenset[int]) -> int:
            known = roots[index]
            if known is not None:
                return known
            found = index
            for entity in self._recorded[index].after:
                cause = self._broken.get(entity)
                if cause is not None and cause != index and cause not in visiting:
                    found = root(cause, visiting | {index})
                    break
            roots[index] = found
            return found

        return [root(i, frozenset()) for i in range(len(self._recorded))]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """The errors to show: every one that follows from no other, with its count of followers."""
        roots = self._roots()
        followers = collections.Counter(cause for index, cause in enumerate(roots) if cause != index)
        shown = []
        for index, recorded in enumerate(self._recorded):
            if roots[index] == index:
                diagnostic = recorded.diagnostic
                if followers[index]:
                    diagnostic = dataclasses.replace(diagnostic, consequences=diagnostic.consequences + followers[index])
                shown.append(diagnostic)
        return shown

    def __bool__(self) -> bool:
        return bool(self._recorded)

    def raise_if_any(self) -> None:
        if self._recorded:
            raise SpecErrors(self.diagnostics)


class UsageError(Exception):
    """A problem with how ttlgen was invoked (missing directory, bad option): exit code 2."""

    def diagnostic(self) -> Diagnostic:
        """The error as a diagnostic without a location."""
        return Diagnostic(Mark(""), str(self))


def guarded(action: Callable[[], int], as_json: bool, summary: bool = False, writes: bool = False) -> int:
    """Run a command's action: its exit code, or exit 2 for spec and usage errors, printed as
    every command prints them: with ``as_json`` the error envelope on stdout, else the errors
    on stderr, spec errors followed by their count when ``summary`` (saying that nothing was
    written when the command ``writes``)."""
    try:
        return action()
    except (SpecErrors, UsageError) as exc:  # OutputError, TemplateError and FetchError are UsageErrors
        if as_json:
            diagnostics = exc.diagnostics if isinstance(exc, SpecErrors) else (exc.diagnostic(),)
            emit_json(error_envelope(d.to_json() for d in diagnostics))
        elif isinstance(exc, SpecErrors):
            sys.stderr.write(exc.render() + "\n")
            if summary:
                sys.stderr.write(f"ttlgen: {len(exc.diagnostics)} error(s)" + ("; nothing was written" if writes else "") + "\n")
        else:
            sys.stderr.write(f"ttlgen: {exc}\n")
        return ExitCode.BAD_INPUT
