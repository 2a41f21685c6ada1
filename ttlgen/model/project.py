"""The whole validated model of a spec tree, built domain by domain in dependency order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ttlgen.errors import DiagnosticSink
from ttlgen.model import (
    kernels,
    layout,
    memo,
    namespaces,
    ops,
    programs,
    spelling,
    spelling_check,
    targets,
    tt_metal_api,
)
from ttlgen.spec.document import SpecDocument

# Validated like a spec (its schema ships with the others) but read by `ttlgen resolve` only.
DESCRIPTION_KIND = "ttlgen.kernel_description"


@dataclass(frozen=True)
class Project:
    """Typed model of all specs. Emitters read only this."""

    spec_files: tuple[str, ...]
    ops: ops.OpsModel
    api: tt_metal_api.ApiModel
    targets: targets.TargetsModel
    spelling: spelling.SpellingModel
    kernels: kernels.KernelsModel
    layouts: layout.LayoutModel
    programs: programs.ProgramModel


@dataclass(frozen=True)
class _LayoutDomain:
    """The runtime's layouts and the programs that use them, checked together: a pure
    function of the layout and program specs alone, so it is built once for their content
    (memo) and a kernel or target edit reuses it."""

    layouts: layout.LayoutModel
    programs: programs.ProgramModel


def _layout_domain(documents: Sequence[SpecDocument], sink: DiagnosticSink) -> _LayoutDomain:
    layouts_model = layout.build(documents, sink)
    programs_model = programs.build(documents, sink, layouts_model)
    namespaces.check(layouts_model, programs_model, sink)
    return _LayoutDomain(layouts_model, programs_model)


def build_project(documents: Sequence[SpecDocument]) -> Project:
    """Build every domain model; raises SpecErrors with all semantic errors found.

    Each builder picks the documents of its own kinds and reports every semantic error
    (dangling reference, duplicate, overlap) to the shared sink, so one run reports the
    errors of all domains together.
    """
    sink = DiagnosticSink()
    for document in documents:
        if document.kind == DESCRIPTION_KIND:
            sink.error(
                document.mark(("spec",)),
                "a kernel description is the input of `ttlgen resolve`, not a spec; keep it outside the spec tree",
            )
    ops_model = ops.build(documents, sink)
    api_documents = [d for d in documents if d.kind in (tt_metal_api.KIND, tt_metal_api.EMULATION_KIND)]
    api_model = memo.built_once(
        "tt_metal_api", api_documents, lambda: tt_metal_api.build(api_documents, sink), sink, tt_metal_api.ApiModel
    )
    targets_model = targets.build(documents, sink, ops_model.vocabulary, api_model.level_names)
    spelling_model = spelling.build(documents, sink, ops_model, api_model)
    spelling_check.check(spelling_model, api_model, sink)
    kernels_model = kernels.build(documents, sink, ops_model, spelling_model, targets_model)
    layout_documents = [d for d in documents if d.kind in (layout.KIND, programs.KIND)]
    layout_domain = memo.built_once(
        "layout", layout_documents, lambda: _layout_domain(layout_documents, sink), sink, _LayoutDomain
    )
    sink.raise_if_any()
    return Project(
        spec_files=tuple(d.display for d in documents),
        ops=ops_model,
        api=api_model,
        targets=targets_model,
        spelling=spelling_model,
        kernels=kernels_model,
        layouts=layout_domain.layouts,
        programs=layout_domain.programs,
    )
