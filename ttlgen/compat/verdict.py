"""Hold the changes against each layout's ABI version, and the whole comparison's report.

The policy (README, "Versions"): a change that breaks the wire or callers' source needs a
major bump of the layout it belongs to (programs belong to their layout); an addition
needs a minor bump. A breaking change with a major bump is acknowledged; without one it
fails ``compat``. An addition without a minor bump is a note, not a failure: nothing
breaks, but a peer can no longer tell from the version whether the addition is there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ttlgen.compat.capabilities import compare_capabilities
from ttlgen.compat.causes import OtherCauses, other_causes
from ttlgen.compat.changes import Area, Change, Impact, Location, Status
from ttlgen.compat.git_specs import Revision, specs_at
from ttlgen.compat.layout_diff import compare_layouts
from ttlgen.compat.programs_diff import compare_programs
from ttlgen.compat.sides import Side, SpecPaths
from ttlgen.compat.signatures import compare_signatures
from ttlgen.errors import ExitCode
from ttlgen.model.layout import AbiVersion


class Bump(enum.Enum):
    NONE = "none"
    MINOR = "minor"
    MAJOR = "major"
    BACKWARDS = "backwards"


def bump(old: AbiVersion, new: AbiVersion) -> Bump:
    if (new.major, new.minor) < (old.major, old.minor):
        return Bump.BACKWARDS
    if new.major > old.major:
        return Bump.MAJOR
    return Bump.MINOR if new.minor > old.minor else Bump.NONE


@dataclass(frozen=True)
class VersionCheck:
    """One layout's version at both sides, and the bump its changes need."""

    layout: str
    before: str
    after: str
    bump: Bump
    needed: Bump  # NONE, MINOR or MAJOR
    before_at: Location
    after_at: Location
    next_major: str
    next_minor: str

    @property
    def covered(self) -> bool:
        return self.bump is Bump.MAJOR if self.needed is Bump.MAJOR else self.bump is not Bump.BACKWARDS

    @property
    def advice(self) -> str | None:
        """What to do, if the version does not follow the policy."""
        if self.bump is Bump.BACKWARDS:
            return f"layout {self.layout!r}: the ABI version went back from {self.before} to {self.after}"
        if self.needed is Bump.MAJOR and self.bump is not Bump.MAJOR:
            return f"layout {self.layout!r} has breaking changes: set abi_version to {self.next_major} (at {self.after_at})"
        if self.needed is Bump.MINOR and self.bump is Bump.NONE:
            return f"layout {self.layout!r} has additions: the policy asks for abi_version {self.next_minor} (at {self.after_at})"
        return None

    def to_json(self) -> dict[str, object]:
        return {
            "layout": self.layout,
            "before": self.before,
            "after": self.after,
            "bump": self.bump.value,
            "needed": self.needed.value,
            "covered": self.covered,
            "advice": self.advice,
        }


@dataclass(frozen=True)
class Report:
    against: Revision
    changes: tuple[Change, ...]
    versions: tuple[VersionCheck, ...]
    # The generated files templates and ttlgen's code changed (not versioned, for review;
    # None: not compared).
    others: OtherCauses | None = None

    @property
    def breaking(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.status is Status.BREAKING)

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.FAILED if self.breaking else ExitCode.OK

    @property
    def verdict(self) -> str:
        if self.breaking:
            return f"{len(self.breaking)} breaking change(s) not covered by a major version bump"
        acknowledged = sum(c.status is Status.ACKNOWLEDGED for c in self.changes)
        if acknowledged:
            return f"{acknowledged} breaking change(s), acknowledged by the version bump"
        if any(c.status is Status.COMPATIBLE for c in self.changes):
            return "compatible: additions only"
        return "compatible: no change to the ABI"

    def to_json(self) -> dict[str, object]:
        return {
            "status": "breaking" if self.breaking else "ok",
            "verdict": self.verdict,
            "against": self.against.ref,
            "commit": self.against.commit,
            "versions": [v.to_json() for v in self.versions],
            "changes": [c.to_json() for c in self.changes],
            "other_causes": self.others.to_json() if self.others is not None else None,
        }


def _needed(changes: Sequence[Change]) -> Bump:
    if any(c.impact.breaking for c in changes):
        return Bump.MAJOR
    return Bump.MINOR if any(c.impact is Impact.COMPATIBLE for c in changes) else Bump.NONE


def judge(changes: Sequence[Change], old: Side, new: Side, against: Revision) -> Report:
    """Each change's status under the version bumps, and the version checks."""
    old_layouts = {layout.name: layout for layout in old.project.layouts.layouts}
    checks: dict[str, VersionCheck] = {}
    extra: list[Change] = []
    for layout in new.project.layouts.layouts:
        before = old_layouts.get(layout.name)
        if before is None:
            continue
        mine = [c for c in changes if c.layout == layout.name and c.area is not Area.CAPABILITIES]
        version = layout.version
        check = VersionCheck(
            layout.name, str(before.version), str(version), bump(before.version, version), _needed(mine),
            old.locate(before.version.mark), new.locate(version.mark),
            f"{before.version.major + 1}.0", f"{before.version.major}.{before.version.minor + 1}",
        )
        checks[layout.name] = check
        if check.bump is Bump.BACKWARDS:
            extra.append(
                Change(
                    Area.LAYOUT, Impact.WIRE, "version-backwards", f"the ABI version of layout {layout.name!r}",
                    f"{before.version} -> {version}: a version never goes back", check.before_at, check.after_at,
                    layout=layout.name, status=Status.BREAKING,
                )
            )
    judged = []
    for change in changes:
        if change.impact is Impact.REVIEW:
            status = Status.REVIEW
        elif change.impact is Impact.COMPATIBLE:
            status = Status.COMPATIBLE
        else:
            covering = checks.get(change.layout or "")
            status = Status.ACKNOWLEDGED if covering is not None and covering.bump is Bump.MAJOR else Status.BREAKING
        judged.append(dataclasses.replace(change, status=status))
    return Report(against, tuple(extra + judged), tuple(checks[name] for name in sorted(checks)))


def compare(old: Side, new: Side, against: Revision) -> Report:
    """Compare the models (and, for capabilities, the plans) of two spec trees."""
    changes = [*compare_layouts(old, new), *compare_signatures(old, new), *compare_programs(old, new)]
    if _capability_inputs_differ(old, new):
        changes += compare_capabilities(old, new)
    return judge(changes, old, new, against)


def _capability_inputs_differ(old: Side, new: Side) -> bool:
    """Whether anything a plan is made from differs. Plans are made from the op, target,
    spelling and kernel documents only, so when all of them are equal so are the plans,
    and neither side needs planning."""
    abi = ("ttlgen.layout", "ttlgen.program")

    def inputs(side: Side) -> dict[str, object]:
        return {d.source: d.data for d in side.documents if d.kind not in abi}

    return inputs(old) != inputs(new)


@contextlib.contextmanager
def sides(ref: str, specs_dir: Path) -> Iterator[tuple[Side, Side, Revision]]:
    """The specs at ``ref`` and in the working tree at ``specs_dir``, loaded and modelled."""
    paths = SpecPaths(specs_dir)
    new = Side.load(specs_dir, "in the working tree", paths)
    with specs_at(ref, specs_dir) as (old_dir, revision):
        yield Side.load(old_dir, f"at {ref} ({revision.short})", paths), new, revision


def compare_against(ref: str, specs_dir: Path, templates_dir: Path | None = None, out_dir: Path | None = None) -> Report:
    """The report of the working tree's specs at ``specs_dir`` against their version at
    ``ref``, its files named from the current directory; with ``templates_dir`` and
    ``out_dir``, also the generated files the templates and ttlgen's code changed."""
    from ttlgen.emit._base import Templates

    with sides(ref, specs_dir) as (old, new, revision):
        report = compare(old, new, revision)
        if templates_dir is not None and out_dir is not None:
            others = other_causes(old, revision, specs_dir, Templates(templates_dir), out_dir)
            report = dataclasses.replace(report, others=others)
        return new.paths.relocated(report)
