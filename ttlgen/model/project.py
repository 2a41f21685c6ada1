"""The whole validated model of a spec tree, built domain by domain in dependency order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ttlgen.errors import DiagnosticSink
from ttlgen.model import (
    kernels,
    layout,
    math_spec,
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
class SpecInput:
    """A spec file as the model was built from it: the name generated files give it and
    the sha256 of the bytes that were parsed."""

    source: str
    sha256: str


@dataclass(frozen=True)
class Project:
    """Typed model of all specs. Emitters read only this."""

    spec_files: tuple[str, ...]
    inputs: tuple[SpecInput, ...]
    ops: ops.OpsModel
    math: math_spec.MathModel
    api: tt_metal_api.ApiModel
    targets: targets.TargetsModel
    spelling: spelling.SpellingModel
    kernels: kernels.KernelsModel
    layouts: layout.LayoutModel
    programs: programs.ProgramModel


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
    math_model = math_spec.build(documents, sink)
    api_model = tt_metal_api.build(documents, sink, math_model)
    targets_model = targets.build(documents, sink, ops_model.vocabulary, api_model.level_names)
    spelling_model = spelling.build(documents, sink, ops_model, api_model)
    spelling_check.check(spelling_model, api_model, sink)
    kernels_model = kernels.build(documents, sink, ops_model, spelling_model, targets_model)
    layouts_model = layout.build(documents, sink)
    programs_model = programs.build(documents, sink, layouts_model)
    # The layout model keeps no mark of the C prefix, which names files that layouts share.
    c_prefix_marks = {d.data["layout"]: d.mark(("naming", "c_prefix")) for d in documents if d.kind == layout.KIND}
    namespaces.check(layouts_model, programs_model, sink, c_prefix_marks)
    sink.raise_if_any()
    return Project(
        spec_files=tuple(d.display for d in documents),
        inputs=tuple(SpecInput(d.source, d.sha256) for d in documents),
        ops=ops_model,
        math=math_model,
        api=api_model,
        targets=targets_model,
        spelling=spelling_model,
        kernels=kernels_model,
        layouts=layouts_model,
        programs=programs_model,
    )
