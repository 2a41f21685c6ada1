"""Goldens checked where they are written: each pinned answer is asked of the resolver's
own tables at `validate`, and a golden that disagrees is a located error at its line.

The generated C++ table header asserts the same goldens at compile time; that stays the
second line of defence, for a C++ includer. Here a wrong golden, or a relation edit that
changes a guarded answer, fails `validate`, `build` and `check` before anything compiles.
"""

from __future__ import annotations

from collections.abc import Iterable

from ttlgen.errors import DiagnosticSink
from ttlgen.model.goldens import (
    DestWidthGolden,
    DfbCapacityGolden,
    DfbUnpackGolden,
    FullFp32Golden,
    Golden,
)
from ttlgen.model.targets import TargetsModel
from ttlgen.plan.tables import ResolverTables
from ttlgen.resolver import Catalog, DestWidth, TargetEnvironment, UnpackMode


def _widths(widths: Iterable[DestWidth]) -> str:
    return "{" + ", ".join(str(int(w)) for w in sorted(widths)) + "}" if widths else "no width"


def _configurations(found: Iterable[tuple[DestWidth, UnpackMode]]) -> str:
    pairs = sorted((int(w), m.value) for w, m in found)
    return ", ".join(f"{w}-bit/{m}" for w, m in pairs) or "no configuration"


def _disagreement(golden: Golden, environment: TargetEnvironment | None, capacity: int) -> str | None:
    """What the tables answer where the golden pins another answer, or None when it holds."""
    if isinstance(golden, DfbCapacityGolden):
        return None if capacity == golden.capacity else f"the architecture has {capacity} DFB indices, the golden pins {golden.capacity}"
    if environment is None:
        return "a rejected target answers no capability query; only its dfb_capacity can be pinned"
    if isinstance(golden, DestWidthGolden):
        found = environment.dest_widths(golden.primitive, golden.element)
        if found == golden.widths:
            return None
        return (
            f"the relations allow {_widths(found)} DST widths for {golden.primitive} with {golden.element}, "
            f"the golden pins {_widths(golden.widths)}"
        )
    if isinstance(golden, DfbUnpackGolden):
        configurations = environment.dfb_configurations(golden.primitive, golden.element, golden.route)
        pinned = frozenset((w, m) for w in golden.widths for m in golden.modes)
        if configurations == pinned:
            return None
        return (
            f"the relations allow {_configurations(configurations)} for a {golden.route.value} read of {golden.element} "
            f"by {golden.primitive}, the golden pins {_configurations(pinned)}"
        )
    assert isinstance(golden, FullFp32Golden)
    support = environment.full_fp32(golden.kind)
    warns = support.warning is not None
    if support.supported != golden.supported or warns != golden.warns:
        said = "supported" if support.supported else "unsupported" + (" with a warning" if warns else " without a warning")
        pinned_text = "supported" if golden.supported else "unsupported" + (" with a warning" if golden.warns else " without a warning")
        return f"full-fp32 {golden.kind} is {said}, the golden pins {pinned_text}"
    if golden.warning is not None and support.warning != golden.warning:
        return f"the full-fp32 {golden.kind} warning is {support.warning!r}, the golden pins {golden.warning!r}"
    return None


def check(targets: TargetsModel, tables: ResolverTables | None, sink: DiagnosticSink) -> None:
    """Report every golden its target's tables do not answer as pinned."""
    catalog = Catalog(tables.tables) if tables is not None else None
    for target in targets.targets:
        environment = catalog.get_target(target.name) if catalog is not None and target.rejected is None else None
        for golden in target.goldens:
            found = _disagreement(golden, environment, target.dfb_capacity)
            if found is not None:
                sink.error(
                    golden.origin.mark,
                    f"{found} ({golden.origin.why}); change the relation it guards or the golden",
                )
