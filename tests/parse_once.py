"""Each spec text parsed once while a test module runs.

Most tests run commands over the real specs or over copies with a file or two changed, and
parsing every file again (PyYAML composing every node) was a fifth of the suite's CPU.
Within :func:`spec_texts_parsed_once` ``ttlgen.spec.load.parse_text`` returns what it
returned before for the same text, file name and suffix, the whole of its input, and parses
anything else as it always does, errors included (an error is raised again, never kept).
Callers share the data and positions it returns, which is safe because nothing downstream
changes them (tests/test_pipeline_purity.py). What a command reads, checks and reports
around the parse (the file's bytes, size, encoding, kind and digest) runs every time.

tests/conftest.py turns it on for every test module; the memo ends with the module, so no
module's copies stay alive (and get walked by every garbage collection) for the rest of the
run. A module whose tests change how parsing itself works (a patched parser, a parse that
must fail twice) turns it off by defining its own fixture ``spec_texts_parsed_once`` that
yields without it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from ttlgen.spec import load
from ttlgen.spec.document import Positions


@contextlib.contextmanager
def spec_texts_parsed_once() -> Iterator[None]:
    parsed: dict[tuple[str, str, str], tuple[Any, Positions]] = {}
    parse_text = load.parse_text

    def parse_text_once(text: str, file: str, suffix: str) -> tuple[Any, Positions]:
        key = (text, file, suffix)
        found = parsed.get(key)
        if found is None:
            found = parsed[key] = parse_text(text, file, suffix)
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(load, "parse_text", parse_text_once)
        yield
