"""Load every spec file under a directory into located documents."""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
import unicodedata
from pathlib import Path
from typing import Any

from ttlgen.errors import Diagnostic, DiagnosticSink, Mark, SpecErrors, UsageError, did_you_mean
from ttlgen.spec import kinds
from ttlgen.spec.document import Positions, SpecDocument
from ttlgen.spec.files import display_path, looked_for, source_name, spec_files
from ttlgen.spec.limits import (
    FILE_BYTES_LIMIT,
    NESTING_LIMIT,
    VALUES_LIMIT,
    oversized_at,
    size_overflow,
    toml_nesting_overflow,
)
from ttlgen.spec.toml_positions import locate as locate_toml
from ttlgen.spec.toml_positions import redefinition
from ttlgen.spec.yaml_source import YamlLoadError, parse_yaml

_SPEC_ID = re.compile(r"(?P<kind>[a-z][a-z0-9_.-]*)/(?P<version>v[0-9]+)\Z")
_TOML_ERROR_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
# tomllib's words for a key or table defined twice, which name neither it nor its first definition.
_TOML_REDEFINED = (
    "Cannot overwrite a value",
    "Cannot declare",
    "Duplicate inline table key",
    "Cannot redefine namespace",
    "Cannot mutate immutable namespace",
)


def decode_utf8(raw: bytes, file: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", errors="replace")) + 1
        raise SpecErrors(
            [Diagnostic(Mark(file, line, column), f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})")]
        ) from None
    return text.removeprefix("\ufeff")


# Bidirectional controls reorder how the text around them is displayed, so a reviewer reads
# something other than what the file says ("Trojan Source"); an escape in a string is visible.
_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")


def parse_text(text: str, file: str, suffix: str) -> tuple[Any, Positions]:
    """Parse YAML or TOML text into plain data with positions; raises SpecErrors."""
    # Only non-ASCII text can hold one; isascii() is far cheaper than the scan.
    bidi = None if text.isascii() else _BIDI_CONTROL.search(text)
    if bidi is not None:
        before = text[: bidi.start()]
        line, column = before.count("\n") + 1, bidi.start() - (before.rfind("\n") + 1) + 1
        raise SpecErrors(
            [
                Diagnostic(
                    Mark(file, line, column),
                    f"character U+{ord(bidi.group()):04X} is a bidirectional control: it makes the text display "
                    "differently from what it is; remove it, or write it as an escape inside a double-quoted string",
                )
            ]
        )
    if suffix == ".toml":
        overflow = toml_nesting_overflow(text)
        if overflow is not None:
            raise SpecErrors(
                [Diagnostic(Mark(file, *overflow), f"arrays and tables nest more than {NESTING_LIMIT} levels deep")]
            )
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            found = _TOML_ERROR_AT.search(str(exc))
            if found:
                line, column = int(found.group(1)), int(found.group(2))
            else:  # "(at end of document)"
                lines = text.split("\n")
                line, column = len(lines), len(lines[-1]) + 1
            problem = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc)).strip()
            if problem.startswith(_TOML_REDEFINED):
                twice = redefinition(text)
                if twice is not None:
                    name = twice.path[-1]
                    if twice.closed:
                        message = (
                            f"{name!r} is given its whole value at line {twice.first.line}, so a table header or "
                            "dotted key cannot add to it; write the addition in that value, or make it a [table]"
                        )
                    else:
                        what = "table" if twice.table else "duplicate key"
                        again = " is defined twice" if twice.table else ""
                        message = f"{what} {name!r}{again} (first defined at line {twice.first.line})"
                    raise SpecErrors([Diagnostic(Mark(file, twice.at.line, twice.at.column, twice.path), message)]) from None
            raise SpecErrors([Diagnostic(Mark(file, line, column), f"invalid TOML: {problem}")]) from None
        located = locate_toml(text)
        positions = Positions(
            values={path: (pos.line, pos.column) for path, pos in located.values.items()},
            keys={path: (pos.line, pos.column) for path, pos in located.keys.items()},
        )
        return _within_limits(data, positions, file)
    try:
        data, positions = parse_yaml(text, file)
    except YamlLoadError as exc:
        raise SpecErrors([exc.diagnostic]) from None
    # parse_yaml refuses deep nesting and crowded lists and mappings as it builds, and its
    # positions name each value once: only a document with too many values needs the walk.
    if len(positions.values) <= VALUES_LIMIT:
        return data, positions
    return _within_limits(data, positions, file)


def _within_limits(data: Any, positions: Positions, file: str) -> tuple[Any, Positions]:
    found = size_overflow(data)
    if found is None:
        return data, positions
    path, message = found
    line, column = positions.key(path)
    shown = path if len(path) <= 16 else ()  # a hundred-level key path says nothing
    raise SpecErrors([Diagnostic(Mark(file, line, column, shown), message)])


def identify(data: Any, positions: Positions, file: str) -> kinds.SpecKind:
    """Check the ``spec: kind/version`` header and return the kind; raises SpecErrors."""
    if not isinstance(data, dict) or not data:
        raise SpecErrors([Diagnostic(Mark(file, 1, 1), "a spec file is a mapping whose first key is 'spec'")])
    first_key = next(iter(data))
    if "spec" not in data:
        line, column = positions.key((first_key,))
        raise SpecErrors(
            [Diagnostic(Mark(file, line, column), "missing 'spec: <kind>/<version>' as the first key")]
        )
    line, column = positions.value(("spec",))
    mark = Mark(file, line, column, ("spec",))
    if first_key != "spec":
        key_line, key_column = positions.key(("spec",))
        raise SpecErrors([Diagnostic(Mark(file, key_line, key_column, ("spec",)), "'spec' must be the first key of the file")])
    value = data["spec"]
    match = _SPEC_ID.match(value) if isinstance(value, str) else None
    supported = ", ".join(k.kind_id for k in kinds.spec_kinds())
    if match is None:
        raise SpecErrors([Diagnostic(mark, f"{value!r} is not '<kind>/<version>'; supported: {supported}")])
    name, version = match.group("kind"), match.group("version")
    kind = kinds.find_kind(name, version)
    if kind is not None:
        return kind
    versions = kinds.versions_of(name)
    if versions:
        raise SpecErrors(
            [Diagnostic(mark, f"unsupported version {version!r} of {name!r}; supported versions: {', '.join(versions)}")]
        )
    names = {k.name for k in kinds.spec_kinds()}
    raise SpecErrors([Diagnostic(mark, f"unknown spec kind {name!r}; supported: {supported}{did_you_mean(name, names)}")])


def read_bytes(path: Path, file: str) -> bytes:
    """The bytes of a spec file (or of anything read like one, e.g. a kernel description),
    refused when over the size limit; raises SpecErrors located in ``file``, the name
    messages give it."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SpecErrors([Diagnostic(Mark(file, 1, 1), f"cannot read the file: {exc.strerror or exc}")]) from None
    oversized = oversized_at(raw)
    if oversized is not None:
        raise SpecErrors(
            [Diagnostic(Mark(file, *oversized), f"the file is larger than {FILE_BYTES_LIMIT >> 20} MiB; split it into several files")]
        )
    return raw


def load_file(path: Path, source: str, display: str | None = None) -> SpecDocument:
    """One spec file; ``source`` is the name generated headers give it, ``display`` the one
    messages give it (default: the path from the current directory)."""
    file = display if display is not None else display_path(path)
    raw = read_bytes(path, file)
    data, positions = parse_text(decode_utf8(raw, file), file, path.suffix)
    kind = identify(data, positions, file)
    return SpecDocument(file, source, kind.name, kind.version, data, positions, hashlib.sha256(raw).hexdigest())


def _breaks_a_line(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Zl", "Zp") or _BIDI_CONTROL.match(char) is not None


def name_problem(name: str) -> str | None:
    """What makes ``name`` (a path as the file system gave it) unusable as the name of an
    input, or None. Input names are written into MANIFEST (one line per input) and into
    generated headers, and printed in messages: they must encode as UTF-8 and hold no
    character that breaks or hides a line (a control, a line or paragraph separator, a
    bidirectional control)."""
    raw = os.fsencode(name)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"is not valid UTF-8 (byte 0x{raw[exc.start]:02x})"
    bad = next((char for char in name if _breaks_a_line(char)), None)
    return None if bad is None else f"holds the control character U+{ord(bad):04X}"


def shown_name(name: str) -> str:
    """``name`` as a message can print it on one line: undecodable bytes as ``\\xff``,
    controls as escapes (``\\n``)."""
    text = os.fsencode(name).decode("utf-8", "backslashreplace")
    return "".join(c.encode("unicode_escape").decode("ascii") if _breaks_a_line(c) else c for c in text)


def load_specs(specs_dir: Path, by_source: bool = False) -> list[SpecDocument]:
    """Load all spec files; every file's errors are reported together. ``by_source``:
    messages name each file by its source name too (a tree read out of git into a
    temporary directory has no path worth showing)."""
    paths = spec_files(specs_dir)
    shown_dir = shown_name(display_path(specs_dir))
    if not paths:
        # Nothing to load is never what was meant: a mistyped --specs would otherwise
        # validate, and a build would replace the whole tree with an empty one.
        raise UsageError(f"spec directory '{shown_dir}' holds no spec file: looked for {looked_for()}; pass --specs DIR")
    # Every source name starts with the directory's own name (source_name).
    problem = name_problem(specs_dir.resolve().name)
    if problem is not None:
        raise UsageError(
            f"the name of spec directory '{shown_dir}' {problem}; rename it: "
            "it starts the spec file names written into MANIFEST and generated headers"
        )
    sink = DiagnosticSink()
    documents = []
    for path in paths:
        source = source_name(specs_dir, path)
        problem = name_problem(path.relative_to(specs_dir).as_posix())
        if problem is not None:
            file = source if by_source else display_path(path)
            sink.error(Mark(shown_name(file)), f"the file's path {problem}; rename it: spec file names are written into MANIFEST and generated headers")
            continue
        try:
            documents.append(load_file(path, source, source if by_source else None))
        except SpecErrors as exc:
            sink.extend(exc.diagnostics)
    sink.raise_if_any()
    return documents
