"""The pipeline reads the documents it is given and never changes them.

So parsed spec data may be shared: by the commands of one process (compat plans two sides,
review renders twice) and by the tests, which parse each spec text once per module
(tests/parse_once.py).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from ttlgen.emit._base import EmitContext, Templates
from ttlgen.emit._templates import default_templates_dir
from ttlgen.model.project import build_project
from ttlgen.pipeline import render
from ttlgen.plan.project import plan_project
from ttlgen.spec.load import load_specs
from ttlgen.validate.documents import validate_documents


@pytest.fixture(scope="module", autouse=True)
def spec_texts_parsed_once() -> Iterator[None]:
    """Parsed afresh here: the documents must be this test's alone."""
    yield


def test_validating_modelling_planning_and_rendering_leave_the_spec_documents_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)
    documents = load_specs(Path("specs"))
    before = copy.deepcopy([(d.data, d.positions) for d in documents])
    assert validate_documents(documents) == []
    project = build_project(documents)
    planned = plan_project(project)
    render(project, planned, EmitContext(Templates(default_templates_dir()), cached=False))
    after = [(d.data, d.positions) for d in documents]
    for (data, positions), (data_before, positions_before), document in zip(after, before, documents, strict=True):
        assert data == data_before, f"{document.file}: its data changed"
        assert positions == positions_before, f"{document.file}: its positions changed"
