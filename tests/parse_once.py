"""Each spec file's bytes parsed once while a module runs, for tests that run many commands
over copies of the same specs.

A command reads every spec file it is given; a test that edits one file of a copy and runs
a command, many times over, has the others parsed again each time, and parsing is most of
what such a command costs (PyYAML composing every node). Within :func:`spec_files_parsed_once`
``ttlgen.spec.load.load_file`` returns the document it made before for the same bytes
under the same names, and parses anything else as it always does, errors included: the
command reads the same documents either way (frozen records, whose data nothing downstream
changes). The documents are dropped when the context ends, so a module's copies do not
stay alive (and be traversed by every garbage collection) for the rest of the run. A test
of loading itself, or of a file read while it changes, does not use it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ttlgen.spec import load
from ttlgen.spec.document import SpecDocument
from ttlgen.spec.files import display_path


@contextlib.contextmanager
def spec_files_parsed_once() -> Iterator[None]:
    # (bytes, source name, name shown, suffix) -> the document load_file made of them.
    parsed: dict[tuple[bytes, str, str, str], SpecDocument] = {}
    load_file = load.load_file

    def load_file_once(path: Path, source: str, display: str | None = None) -> SpecDocument:
        try:
            raw = path.read_bytes()
        except OSError:
            return load_file(path, source, display)  # says why, as a located error
        key = (raw, source, display if display is not None else display_path(path), path.suffix)
        found = parsed.get(key)
        if found is None:
            found = parsed[key] = load_file(path, source, display)
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(load, "load_file", load_file_once)
        yield
