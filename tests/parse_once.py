"""Each spec file's bytes parsed once per test process, for tests that run many commands
over copies of the same specs.

A command reads every spec file it is given; a test that edits one file of a copy and runs
a command, many times over, has the others parsed again each time, and parsing is most of
what such a command costs (PyYAML composing every node). Within :func:`spec_files_parsed_once`
``ttlgen.spec.load.load_file`` returns the document it made before for the same bytes
under the same names, and parses anything else as it always does, errors included: the
command reads the same documents either way (frozen records, whose data nothing downstream
changes). A test of loading itself, or of a file read while it changes, does not use it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ttlgen.spec import load
from ttlgen.spec.document import SpecDocument
from ttlgen.spec.files import display_path

# (bytes, source name, name shown, suffix) -> the document load_file made of them.
_PARSED: dict[tuple[bytes, str, str, str], SpecDocument] = {}
_load_file = load.load_file


def _load_file_once(path: Path, source: str, display: str | None = None) -> SpecDocument:
    try:
        raw = path.read_bytes()
    except OSError:
        return _load_file(path, source, display)  # says why, as a located error
    key = (raw, source, display if display is not None else display_path(path), path.suffix)
    found = _PARSED.get(key)
    if found is None:
        found = _PARSED[key] = _load_file(path, source, display)
    return found


@contextlib.contextmanager
def spec_files_parsed_once() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(load, "load_file", _load_file_once)
        yield
