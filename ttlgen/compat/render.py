"""The compat report as text: the verdict, then each change under its status, located."""

from __future__ import annotations

from ttlgen.compat.changes import Change, Status
from ttlgen.compat.verdict import Report

SECTIONS = (
    (Status.BREAKING, "breaking, not covered by a major version bump"),
    (Status.ACKNOWLEDGED, "breaking, acknowledged by a major version bump"),
    (Status.COMPATIBLE, "compatible"),
    (Status.REVIEW, "capabilities (not versioned: for review)"),
)


def _change(change: Change) -> list[str]:
    lines = [f"  [{change.category}] {change.subject}: {change.message}"]
    if change.before is not None:
        lines.append(f"      before: {change.before}")
    if change.after is not None:
        lines.append(f"      after:  {change.after}")
    if change.plan is not None:
        for facet, before, after in change.plan.facets:
            lines.append(f"      {facet}: {before} -> {after}")
        for cause in change.plan.causes:
            label = "together with the others" if cause.joint else "caused by"
            lines.append(f"      {label}: {cause.what}")
            if cause.before is not None:
                lines.append(f"        before: {cause.before}")
            if cause.after is not None:
                lines.append(f"        after:  {cause.after}")
    return lines


def text_report(report: Report) -> str:
    lines = [f"ttlgen compat: the specs against {report.against.ref} ({report.against.short})"]
    for check in report.versions:
        moved = f"{check.before} -> {check.after} ({check.bump.value} bump)" if check.before != check.after else f"{check.after} (unchanged)"
        lines.append(f"layout {check.layout}: ABI version {moved}")
    for status, title in SECTIONS:
        found = [c for c in report.changes if c.status is status]
        if found:
            lines += ["", f"{title} ({len(found)}):"]
            for change in found:
                lines += _change(change)
    if report.others is not None and report.others.causes:
        files = len(report.others.files)
        lines += ["", f"templates and ttlgen's code (not versioned: for review): {files} generated file{'s' * (files != 1)} changed"]
        for cause in report.others.causes:
            lines.append(f"  [{cause.title}] " + "; ".join(cause.what).replace("`", ""))
            lines += [f"      {f.path} {f.counts()}" for f in cause.files] or ["      no generated file changed"]
    advice = [check.advice for check in report.versions if check.advice]
    # What was not compared, and why: `--json` and review carry these too.
    advice += list(report.others.notes) if report.others is not None else []
    if advice:
        lines.append("")
        lines += [f"note: {a}" for a in advice]
    lines += ["", f"ttlgen compat: {report.verdict}"]
    return "\n".join(lines) + "\n"
