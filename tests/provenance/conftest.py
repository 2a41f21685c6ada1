"""The real specs' generated tree with provenance, traced once per test process.

Tracing the whole tree is the expensive part of every explain test; the tests only read
it (file provenance is frozen), so each xdist worker traces it once, from the model and
plan every test reads (tests.conftest.real_plan), whose files are named ``specs/...``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pytest

from tests.conftest import TEMPLATES, real_documents, real_plan
from ttlgen.emit._base import Templates
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan
from ttlgen.provenance import explain
from ttlgen.provenance.explain import Traced
from ttlgen.provenance.files import trace_files
from ttlgen.provenance.origins import FileProvenance
from ttlgen.spec.document import SpecDocument


@pytest.fixture(scope="session")
def real_traced() -> Traced:
    """Every generated file of the real specs with the origin of each line, and the specs."""
    project, plan = real_plan()
    documents = real_documents()
    return Traced(trace_files(project, plan, documents, Templates(TEMPLATES)), documents)


@pytest.fixture
def traced_once(real_traced: Traced, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ttlgen explain`` of a spec file traces the whole tree; run on the real specs and
    templates, it gets the session's trace of them instead of a second one (tracing is
    deterministic: the same files and origins), and does all the rest as it does."""
    trace = explain.trace_files
    real = [(d.display, d.sha256) for d in real_traced.documents]

    def shared(
        project: Project, plan: ProjectPlan, documents: Sequence[SpecDocument], templates: Templates, emitters: Collection[str] | None = None
    ) -> dict[str, FileProvenance]:
        if emitters is None and templates.root == TEMPLATES and [(d.display, d.sha256) for d in documents] == real:
            return real_traced.files
        return trace(project, plan, documents, templates, emitters)

    monkeypatch.setattr(explain, "trace_files", shared)
