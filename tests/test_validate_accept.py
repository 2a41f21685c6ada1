"""The fast validator (ttlgen/validate/accept.py) says yes only where jsonschema, with
ttlgen's stricter rules, says yes too."""

from __future__ import annotations

import copy
import dataclasses
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LONG_TESTS, real_documents
from tests.spec_fuzz import Mutator
from ttlgen.spec.document import SpecDocument
from ttlgen.validate.accept import accepts, plain
from ttlgen.validate.schema import validate_document

REPO = Path(__file__).resolve().parent.parent
# The real specs as loaded once per process (named specs/...); tests copy the data they edit.
SPECS = real_documents()
# Edits the judge below can take as data (nest_deeply leaves a marker for the text writer).
EDITS = ("delete key", "change type", "hostile text", "misspell key", "misspell name",
         "edge number", "duplicate item", "swap values", "empty container")
# Seeded by the file's name: the default run is the first of the trials TTLGEN_LONG_TESTS=1 runs.
TRIALS_PER_FILE = 24 if LONG_TESTS else 8


def _with_data(document: SpecDocument, data: Any) -> SpecDocument:
    return dataclasses.replace(document, data=data)


def _document(display_suffix: str) -> SpecDocument:
    return next(d for d in SPECS if d.display.endswith(display_suffix))


def _python_valid(document: SpecDocument) -> bool:
    return not validate_document(document)


@pytest.mark.parametrize("document", SPECS, ids=lambda d: d.display)
def test_every_real_spec_is_accepted_without_jsonschema(document: SpecDocument) -> None:
    assert accepts(document)


@pytest.mark.parametrize("document", SPECS, ids=lambda d: d.display)
def test_on_mutated_specs_the_fast_verdict_is_jsonschemas(document: SpecDocument) -> None:
    rng = random.Random(document.display)
    text = (REPO / document.display).read_text(encoding="utf-8") if (REPO / document.display).exists() else ""
    mutator = Mutator(rng, document.display, text)
    edits = dict(mutator.data_edits())
    for trial in range(TRIALS_PER_FILE):
        data = copy.deepcopy(document.data)
        described = []
        for name in rng.sample(EDITS, rng.choice((1, 2))):
            data, what, _ = edits[name](data)
            described.append(f"{name}: {what}")
        mutated = _with_data(document, data)
        fast, slow = accepts(mutated), _python_valid(mutated)
        # A fast yes must be jsonschema's yes. A no only costs the slow path; but where the
        # two rule sets are the same, it is jsonschema's no as well.
        assert not fast or slow, f"trial {trial} ({described}): fast yes, jsonschema no"
        if plain(data):
            assert fast == slow, f"trial {trial} ({described}): jsonschema yes, fast no"


def test_an_integral_float_where_an_integer_belongs_is_left_to_jsonschema() -> None:
    document = _document("specs/targets/architectures/blackhole.yaml")
    data = copy.deepcopy(document.data)
    path = _first_integer_path(data)
    _set(data, path, float(_get(data, path)))
    mutated = _with_data(document, data)
    assert not accepts(mutated)
    assert not _python_valid(mutated)


@pytest.mark.parametrize("character", ["\x1c", "\x85", "\ufeff", "\r", "\u2028", "\x00"])
def test_a_string_with_a_character_the_regex_engines_read_differently_is_left_to_jsonschema(character: str) -> None:
    document = _document("specs/kernels/unary.yaml")
    data = copy.deepcopy(document.data)
    data["kernels"]["unary_chain_bf16"]["target"] = f"blackhole{character}"
    assert not accepts(_with_data(document, data))


def test_a_name_ending_in_a_newline_is_refused_by_both() -> None:
    document = _document("specs/kernels/unary.yaml")
    data = copy.deepcopy(document.data)
    data["kernels"]["unary_chain_bf16\n"] = data["kernels"].pop("unary_chain_bf16")
    mutated = _with_data(document, data)
    assert not accepts(mutated)
    assert not _python_valid(mutated)


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, float("nan"), float("inf")])
def test_a_number_beyond_what_the_rust_side_holds_is_left_to_jsonschema(value: float) -> None:
    document = _document("specs/targets/architectures/blackhole.yaml")
    data = copy.deepcopy(document.data)
    _set(data, _first_integer_path(data), value)
    assert not accepts(_with_data(document, data))


def test_a_key_that_is_not_a_string_is_left_to_jsonschema() -> None:
    document = _document("specs/kernels/unary.yaml")
    data = copy.deepcopy(document.data)
    data["kernels"]["unary_chain_bf16"][7] = "seven"
    assert not accepts(_with_data(document, data))


def test_validating_changed_valid_specs_does_not_import_jsonschema(tmp_path: Path) -> None:
    program = (
        "import sys\n"
        "from pathlib import Path\n"
        "from ttlgen.pipeline import validate_specs\n"
        f"validate_specs(Path({str(REPO / 'specs')!r}))\n"
        "assert 'jsonschema' not in sys.modules, 'jsonschema was imported'\n"
    )
    env = {**os.environ, "TTLGEN_NO_CACHE": "1", "TTLGEN_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", program], cwd=REPO, env=env, check=True)


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(data, path[:-1])[path[-1]] = value


def _first_integer_path(data: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...]:
    found = _integer_paths(data, path)
    assert found, "no integer in the document"
    return found[0]


def _integer_paths(data: Any, path: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    if isinstance(data, int) and not isinstance(data, bool):
        return [path]
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    return [p for key, value in items for p in _integer_paths(value, (*path, key))]
