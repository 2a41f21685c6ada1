"""A domain model is built once for its documents' names and texts and loaded after that
(ttlgen/model/memo.py); a model whose build reported anything is never recorded."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.conftest import SPECS
from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model import memo, tt_metal_api
from ttlgen.model.project import build_project
from ttlgen.pipeline import validate_specs
from ttlgen.spec.document import SpecDocument


@pytest.fixture(autouse=True)
def own_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def documents() -> list[SpecDocument]:
    return [d for d in validate_specs(SPECS) if d.kind == tt_metal_api.KIND]


class Counted:
    """A builder that returns a fresh model and counts its runs."""

    def __init__(self, error: bool = False) -> None:
        self.runs = 0
        self.error = error

    def __call__(self, sink: DiagnosticSink) -> tuple[str, ...]:
        self.runs += 1
        if self.error:
            sink.error(Mark("specs/x.yaml", 1, 1), "broken")
        return ("model", str(self.runs))


def built(documents: list[SpecDocument], builder: Counted, sink: DiagnosticSink | None = None) -> tuple[str, ...]:
    sink = DiagnosticSink() if sink is None else sink
    return memo.built_once("probe", documents, lambda: builder(sink), sink, tuple)


def test_the_same_documents_load_the_model_built_the_first_time(documents: list[SpecDocument]) -> None:
    builder = Counted()
    first = built(documents, builder)
    assert built(documents, builder) == first
    assert builder.runs == 1


def test_an_edited_document_builds_again(documents: list[SpecDocument]) -> None:
    builder = Counted()
    built(documents, builder)
    edited = [dataclasses.replace(documents[0], data={**documents[0].data, "extra": 1}), *documents[1:]]
    built(edited, builder)
    assert builder.runs == 2


def test_a_document_under_another_name_builds_again(documents: list[SpecDocument]) -> None:
    # Marks in the model print the name a message shows (relative to the working directory).
    builder = Counted()
    built(documents, builder)
    built([dataclasses.replace(documents[0], display="elsewhere/" + documents[0].display), *documents[1:]], builder)
    assert builder.runs == 2


def test_a_build_that_reported_an_error_is_not_recorded(documents: list[SpecDocument]) -> None:
    builder = Counted(error=True)
    for _ in range(2):
        sink = DiagnosticSink()
        built(documents, builder, sink)
        assert sink.count == 1
    assert builder.runs == 2


def test_a_damaged_record_builds_again(documents: list[SpecDocument], tmp_path: Path) -> None:
    builder = Counted()
    built(documents, builder)
    (record,) = (tmp_path / "cache" / "models").iterdir()
    record.write_bytes(record.read_bytes()[:-1] + b"\x00")
    assert built(documents, builder) == ("model", "2")


def test_without_caching_every_call_builds(documents: list[SpecDocument], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_NO_CACHE", "1")
    builder = Counted()
    built(documents, builder)
    built(documents, builder)
    assert builder.runs == 2


def test_the_project_loads_the_api_model_it_would_build(monkeypatch: pytest.MonkeyPatch) -> None:
    documents = validate_specs(SPECS)
    first = build_project(documents)

    def must_not_build(*args: object) -> None:
        raise AssertionError("the API model was built again for unchanged API specs")

    monkeypatch.setattr(tt_metal_api, "build", must_not_build)
    again = build_project(documents)
    assert again == first
    monkeypatch.undo()
    monkeypatch.setenv("TTLGEN_NO_CACHE", "1")
    assert build_project(documents) == again  # the model built afresh equals the one loaded
