"""``ttlgen review``: a pull request's spec changes summarised in Markdown for a PR comment.

The compat verdict and its changes; each changed spec entry with the generated files and
lines it changes (both trees are emitted with provenance, with the working tree's
templates, and each added or removed generated line is charged to the changed spec entries
its sources are in); the kernels whose plans moved, before and after, with the cause; and
what was added or removed. Long lists fold into ``<details>``, and every table stops at a
limit so the comment stays far below a pull request comment's size.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ttlgen.compat.changes import Area, Change, Status
from ttlgen.compat.sides import Side
from ttlgen.compat.verdict import Report, compare, sides
from ttlgen.errors import KeyPath, format_key_path
from ttlgen.provenance.files import trace_files
from ttlgen.provenance.origins import FileProvenance, LineOrigin, entry_path

FOLD = 8  # rows beyond which a table folds into <details>
LIMIT = 60  # rows a table shows at most


@dataclass(frozen=True)
class SpecEntry:
    file: str
    path: KeyPath  # the entry (``enums.gave``), () for a whole file

    def __str__(self) -> str:
        return f"`{self.file}`" + (f" `{format_key_path(self.path)}`" if self.path else "")

    def covers(self, file: str, path: KeyPath) -> bool:
        n = min(len(self.path), len(path))
        return file == self.file and self.path[:n] == path[:n]


@dataclass
class Counts:
    added: int = 0
    removed: int = 0

    def __str__(self) -> str:
        return f"+{self.added} -{self.removed}"


@dataclass
class Effect:
    """The generated lines one spec change (or nothing that changed) accounts for."""

    files: dict[str, Counts] = field(default_factory=dict)

    def count(self, path: str, added: bool) -> None:
        counts = self.files.setdefault(path, Counts())
        if added:
            counts.added += 1
        else:
            counts.removed += 1


# -- which spec entries changed ---------------------------------------------------------


def _entries(data: object) -> dict[KeyPath, object]:
    """A spec's data by entry: the values under its top-level keys, one level down."""
    found: dict[KeyPath, object] = {}
    if not isinstance(data, dict):
        return {(): data}
    for key, value in data.items():
        if isinstance(value, dict):
            found.update(((key, sub), item) for sub, item in value.items())
        elif isinstance(value, list):
            found.update(((key, i), item) for i, item in enumerate(value))
        else:
            found[(key,)] = value
    return found


def changed_entries(old: Side, new: Side) -> list[tuple[SpecEntry, str]]:
    """Each changed spec entry and how (added, removed, changed); a new or removed file whole."""
    old_files = {d.source: d.data for d in old.documents}
    new_files = {d.source: d.data for d in new.documents}
    out: list[tuple[SpecEntry, str]] = []
    for file in sorted(old_files.keys() | new_files.keys()):
        if file not in old_files:
            out.append((SpecEntry(file, ()), "new file"))
        elif file not in new_files:
            out.append((SpecEntry(file, ()), "removed file"))
        elif old_files[file] != new_files[file]:
            before, after = _entries(old_files[file]), _entries(new_files[file])
            for path in sorted(before.keys() | after.keys(), key=lambda p: tuple(map(str, p))):
                if path not in before:
                    out.append((SpecEntry(file, path), "added"))
                elif path not in after:
                    out.append((SpecEntry(file, path), "removed"))
                elif before[path] != after[path]:
                    out.append((SpecEntry(file, path), "changed"))
    return out


# -- which generated lines they change ----------------------------------------------------


def _hit(origin: LineOrigin, changes: Sequence[SpecEntry]) -> list[SpecEntry]:
    return [entry for entry in changes if any(entry.covers(s.mark.file, entry_path(s.mark.path)) for s in origin.sources)]


def _charge_hunk(
    origins: Sequence[LineOrigin], path: str, added: bool, changes: Sequence[SpecEntry], effects: dict[SpecEntry | None, Effect]
) -> None:
    """One side of a changed hunk: each line to the changed entries its sources are in; a
    line without a source (template text, such as a closing brace) to those of the hunk's
    other lines, since it was added or removed with them."""
    hits = [_hit(origin, changes) for origin in origins]
    around = list(dict.fromkeys(entry for found in hits for entry in found))
    for origin, found in zip(origins, hits, strict=True):
        chosen: list[SpecEntry | None] = list(found or (around if not origin.sources else []))
        for entry in chosen or [None]:
            effects.setdefault(entry, Effect()).count(path, added)


def generated_effects(
    old: dict[str, FileProvenance], new: dict[str, FileProvenance], changes: Sequence[SpecEntry]
) -> dict[SpecEntry | None, Effect]:
    """Added and removed generated lines per changed spec entry (None: no changed entry)."""
    effects: dict[SpecEntry | None, Effect] = {}
    for path in sorted(old.keys() | new.keys()):
        before, after = old.get(path), new.get(path)
        a_lines = before.lines if before else ()
        b_lines = after.lines if after else ()
        matcher = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            if before is not None and i2 > i1:
                _charge_hunk(before.origins[i1:i2], path, False, changes, effects)
            if after is not None and j2 > j1:
                _charge_hunk(after.origins[j1:j2], path, True, changes, effects)
    return effects


# -- Markdown ------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], what: str, ref: str) -> list[str]:
    if not rows:
        return []
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows[:LIMIT]]
    if len(rows) > LIMIT:
        lines.append(f"\n{len(rows) - LIMIT} more {what}: run `ttlgen compat --against {ref}` for all of them.")
    if len(rows) > FOLD:
        return ["<details>", f"<summary>{len(rows)} {what}</summary>", "", *lines, "", "</details>"]
    return lines


_MARK = {Status.BREAKING: "**breaking**", Status.ACKNOWLEDGED: "acknowledged", Status.COMPATIBLE: "compatible", Status.REVIEW: "review"}


def _where(change: Change) -> str:
    at = change.after or change.before
    return _code(f"{at.file}:{at.line}") if at is not None and at.line else (_code(at.file) if at else "")


def _compat(report: Report) -> list[str]:
    failing = report.exit_code != 0
    lines = [f"**compat: {report.verdict}**" + (" (`ttlgen compat` fails)" if failing else "")]
    for check in report.versions:
        moved = f"{check.before} -> {check.after}" if check.before != check.after else f"{check.after} (unchanged)"
        lines.append(f"- layout `{check.layout}`: ABI version {moved}" + (f"; {check.advice}" if check.advice else ""))
    abi = [c for c in report.changes if c.area is not Area.CAPABILITIES]
    rows = [[_MARK[c.status], c.category, f"{c.subject}: {c.message}", _where(c)] for c in abi]
    lines += ["", *_table(["status", "category", "change", "where"], rows, "ABI changes", report.against.ref)] if rows else []
    return lines


def _spec_changes(entries: Sequence[tuple[SpecEntry, str]], effects: dict[SpecEntry | None, Effect], ref: str) -> list[str]:
    rows = []
    for entry, how in entries:
        effect = effects.get(entry)
        files = ", ".join(f"{_code(p)} {c}" for p, c in sorted(effect.files.items())) if effect else "none"
        rows.append([str(entry), how, files])
    lines = _table(["spec entry", "change", "generated lines (+added -removed)"], rows, "changed spec entries", ref)
    other = effects.get(None)
    if other is not None:
        files = ", ".join(f"{_code(p)} {c}" for p, c in sorted(other.files.items()))
        lines += ["", f"Changed generated lines no changed spec entry produces (template text, or a plan that moved): {files}"]
    return lines


def _plans(changes: Iterable[Change], ref: str) -> list[str]:
    rows = []
    for change in changes:
        if change.plan is None:
            continue
        causes = "; ".join(("together: " if c.joint else "") + c.what for c in change.plan.causes) or "not found"
        for index, (facet, before, after) in enumerate(change.plan.facets):
            rows.append([_code(change.plan.kernel) if index == 0 else "", facet, before, after, causes if index == 0 else ""])
    return _table(["kernel", "facet", "before", "after", "caused by"], rows, "plan facets changed", ref)


_LISTED = {
    "op": "ops",
    "target": "targets",
    "kernel": "kernels",
}


def _added_removed(changes: Sequence[Change]) -> list[str]:
    lines = []
    for prefix, label in _LISTED.items():
        added = [c.subject for c in changes if c.kind == f"{prefix}-added"]
        removed = [c.subject for c in changes if c.kind == f"{prefix}-removed"]
        if added or removed:
            lines.append(f"- {label}: " + "; ".join([*(f"added {s}" for s in added), *(f"removed {s}" for s in removed)]))
    abi = [c for c in changes if c.area is not Area.CAPABILITIES and not c.kind.startswith("python-")]
    abi_added = [c.subject for c in abi if c.kind.endswith("-added")]
    abi_removed = [c.subject for c in abi if c.kind.endswith("-removed")]
    if abi_added or abi_removed:
        lines.append("- ABI: " + "; ".join([*(f"added {s}" for s in abi_added), *(f"removed {s}" for s in abi_removed)]))
    return lines


def review_markdown(report: Report, entries: Sequence[tuple[SpecEntry, str]], effects: dict[SpecEntry | None, Effect]) -> str:
    ref = report.against.ref
    lines = [f"## ttlgen review: the specs against `{ref}` (`{report.against.short}`)", "", *_compat(report)]
    spec = _spec_changes(entries, effects, ref)
    lines += ["", "### Spec changes and the generated lines they change", "", *(spec or ["No spec file changed."])]
    plans = _plans(report.changes, ref)
    if plans:
        lines += ["", "### Kernel plans that changed", "", *plans]
    listed = _added_removed(report.changes)
    if listed:
        lines += ["", "### Added and removed", "", *listed]
    capabilities = [c for c in report.changes if c.area is Area.CAPABILITIES and c.plan is None and not c.kind.endswith(("-added", "-removed"))]
    if capabilities:
        rows = [[c.subject, c.message, _where(c)] for c in capabilities]
        lines += ["", "### Capability changes", "", *_table(["what", "change", "where"], rows, "capability changes", ref)]
    return "\n".join(lines) + "\n"


def review(ref: str, specs_dir: Path, templates_dir: Path) -> str:
    with sides(ref, specs_dir) as (old, new, revision):
        report = compare(old, new, revision)
        entries = changed_entries(old, new)
        before = trace_files(old.project, old.plan, old.documents, templates_dir)
        after = trace_files(new.project, new.plan, new.documents, templates_dir)
    effects = generated_effects(before, after, [entry for entry, _ in entries])
    return review_markdown(report, entries, effects)
