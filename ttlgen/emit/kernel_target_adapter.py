"""The MLIR adapter for TT-Lang's compiler: ``include/ttl_kernel_config/
KernelTargetEnvironments.gen.inc``.

Implements TT-Lang's ``KernelTargetEnvironment`` (the interface generation the vocabulary
spec pins: one template per generation) on top of the generated table header: a
``final`` class per target spec answering the three virtual queries from the tables the
target names, the architecture switch of ``KernelTargetEnvironment::get`` with TT-Lang's
error texts, and the DFB-capacity lookup. It prints the plan's ``KernelTargetCpp``, the
same record the table header is printed from.
"""

from __future__ import annotations

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit._cpp_layout import (
    Text,
    assignment,
    class_head,
    comment,
    doc,
    literal,
    render,
    return_call,
)
from ttlgen.model.project import Project
from ttlgen.plan.kernel_target_cpp import CppTarget, KernelTargetCpp
from ttlgen.plan.project import ProjectPlan

TEMPLATES = "cpp/ttl_kernel_config"
INTERFACE = "KernelTargetEnvironment"

# The three virtual queries of the generation B interface, as clang-format lays them out.
_QUERIES = """\
  public:
    bool supportsDestinationElementWidth(Primitive primitive, Type elementType,
                                         Width width) const override {
        return supportsWidth(kDestWidth, primitive, elementType, width);
    }

    FullFp32AccumulationSupport getFullFp32AccumulationSupport(Kind kind) const override {
        return fullFp32Support(kTarget, kind);
    }

    SmallVector<DFBHardwareConfiguration, 4>
    getSupportedDFBConfigurations(Primitive primitive, Route route,
                                  Type elementType) const override {
        return dfbConfigurations(kDfbUnpack, primitive, route, elementType);
    }

  private:"""


def _environment_class(c: KernelTargetCpp, t: CppTarget) -> list[str]:
    assert t.environment_class is not None and t.dest_width is not None and t.dfb_unpack is not None
    tables = c.tables_alias
    lines = comment(f"{t.name} ({t.source}): {t.summary}")
    lines += class_head(t.environment_class, INTERFACE).split("\n")
    lines += _QUERIES.split("\n")
    for query, table, review, kind, member in (
        ("dest_width", t.dest_width, t.dest_width_review, "WidthTable", "kDestWidth"),
        ("dfb_unpack", t.dfb_unpack, t.dfb_unpack_review, "UnpackTable", "kDfbUnpack"),
    ):
        note = f"{query}: {table.table.origin}" + (f", reviewed: {review}" if review else " (the target's own rules)")
        lines += comment(note, 4)
        lines += assignment(f"static constexpr const {tables}::{kind}& {member}", f"{tables}::{table.ident}", 4)
    lines += assignment(f"static constexpr const {tables}::TargetRecord& kTarget", f"{tables}::{t.ident}", 4)
    lines.append("};")
    return lines


def adapter(c: KernelTargetCpp, ctx: EmitContext) -> str:
    classes = [_environment_class(c, t) for t in c.targets if t.environment_class is not None]
    before, after = c.unimplemented_architecture
    return ctx.render(
        f"{TEMPLATES}/KernelTargetEnvironments.generation_{c.interface}.inc.j2",
        c=c,
        lit=literal,
        doc=doc,
        classes=classes,
        make=lambda environment_class: return_call("environment", environment_class, 8),
        message_head=render(Text(before), 4, "std::string message = ", ";"),
        message_tail=render(Text(after), 4, "message += ", ";"),
    )


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    c = plan.kernel_target_cpp
    if c is None:
        return []
    return [GeneratedFile(path=f"include/{c.adapter}", body=adapter(c, ctx), sources=c.sources)]
