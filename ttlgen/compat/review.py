"""``ttlgen review``: what a pull request changes, summarised in Markdown for a PR comment.

The compat verdict and its changes; each changed spec entry with the generated files and
lines it changes (both trees are emitted with the working tree's templates, the files
that differ with provenance, and each added or removed generated line is charged to the
changed spec entry its sources are in: :mod:`ttlgen.compat.spec_entries`,
:mod:`ttlgen.compat.line_charges`);
the generated files the templates and ttlgen's own code and version changed, each with its
line counts (:mod:`ttlgen.compat.causes`), so a changed tree is never summarised as "no
spec file changed"; the kernels whose plans moved, before and after, with the cause; and
what was added or removed.

The comment must fit a pull request (GitHub takes 65,536 characters), whatever the change:
long tables fold into ``<details>``, every table and every list in a cell stops at a limit
with "... and N more", and the whole text is written against a budget well under the
limit, so a section that does not fit any more says it was left out instead of breaking
the comment.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path

from ttlgen.compat.causes import Cause, CauseKind, OtherCauses, lines_of, other_causes
from ttlgen.compat.changes import Area, Change, Status
from ttlgen.compat.line_charges import Effects, generated_effects
from ttlgen.compat.sides import Side, SpecPaths
from ttlgen.compat.spec_entries import SpecEntry, changed_entries
from ttlgen.compat.verdict import Report, compare, sides
from ttlgen.emit._base import Templates
from ttlgen.errors import SpecErrors
from ttlgen.provenance.files import Emitted, emitted, trace_files
from ttlgen.provenance.origins import FileProvenance

BUDGET = 60_000  # characters of the whole comment: GitHub's limit is 65,536
FOLD = 8  # rows beyond which a table folds into <details>
LIMIT = 60  # rows a table shows at most
CELL = 400  # characters a table cell shows at most
ITEMS = 12  # items a list in a cell or line shows at most
_RESERVE = 600  # kept back by each section for its closing lines and the notes after it


class Budget:
    """The characters the comment has left."""

    def __init__(self, chars: int) -> None:
        self.left = chars

    def fits(self, text: str, reserve: int = _RESERVE) -> bool:
        return len(text) + 1 <= self.left - reserve

    def take(self, lines: Sequence[str]) -> list[str]:
        self.left -= sum(len(line) + 1 for line in lines)
        return list(lines)


def _cell(text: str) -> str:
    flat = " ".join(str(text).split()).replace("|", "\\|")
    return flat if len(flat) <= CELL else flat[: CELL - 1].rstrip("\\") + "…"


def _code(text: str) -> str:
    return f"`{text}`"


def _listing(items: Sequence[str], limit: int = ITEMS, separator: str = ", ") -> str:
    shown = separator.join(items[:limit])
    return shown + (f"{separator}... and {len(items) - limit} more" if len(items) > limit else "")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], what: str, ref: str, budget: Budget, compat_lists: bool = True) -> list[str]:
    """A table of ``rows`` (``what`` they are), folded when long, cut at the limit or the
    budget; ``compat_lists``: ``ttlgen compat`` lists every row."""
    if not rows:
        return []
    folded = len(rows) > FOLD
    lines = ["<details>", f"<summary>{len(rows)} {what}</summary>", ""] if folded else []
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    shown = 0
    for row in rows[:LIMIT]:
        line = "| " + " | ".join(_cell(c) for c in row) + " |"
        if not budget.fits("\n".join([*lines, line])):
            break
        lines.append(line)
        shown += 1
    if shown < len(rows):
        hint = f": run `ttlgen compat --against {ref}` for all of them" if compat_lists else ""
        lines += ["", f"... and {len(rows) - shown} more {what}{hint}."]
    if folded:
        lines += ["", "</details>"]
    return budget.take(lines)


_MARK = {Status.BREAKING: "**breaking**", Status.ACKNOWLEDGED: "acknowledged", Status.COMPATIBLE: "compatible", Status.REVIEW: "review"}


def _where(change: Change) -> str:
    at = change.after or change.before
    return _code(f"{at.file}:{at.line}") if at is not None and at.line else (_code(at.file) if at else "")


def _compat(report: Report, budget: Budget) -> list[str]:
    failing = report.exit_code != 0
    lines = [f"**compat: {report.verdict}**" + (" (`ttlgen compat` fails)" if failing else "")]
    for check in report.versions:
        moved = f"{check.before} -> {check.after}" if check.before != check.after else f"{check.after} (unchanged)"
        lines.append(f"- layout `{check.layout}`: ABI version {moved}" + (f"; {check.advice}" if check.advice else ""))
    lines = budget.take(lines)
    abi = [c for c in report.changes if c.area is not Area.CAPABILITIES]
    rows = [[_MARK[c.status], c.category, f"{c.subject}: {c.message}", _where(c)] for c in abi]
    return lines + (["", *_table(["status", "category", "change", "where"], rows, "ABI changes", report.against.ref, budget)] if rows else [])


def _files(effect: Effects, entry: SpecEntry | None) -> list[str]:
    found = effect.get(entry)
    return [f"{_code(p)} {c}" for p, c in sorted(found.files.items())] if found is not None else []


def _entry(entry: SpecEntry, paths: SpecPaths) -> str:
    label = entry.label()
    return _code(paths.shown(entry.file)) + (f" {_code(label)}" if label else "")


def _spec_changes(
    entries: Sequence[tuple[SpecEntry, str]], effects: Effects | None, ref: str, paths: SpecPaths, others: OtherCauses, budget: Budget
) -> list[str]:
    if not entries:
        if others.files:
            return budget.take(["No spec file changed; the generated files below changed by templates or ttlgen's code."])
        return budget.take(["No spec file changed."])
    found = effects or {}
    unknown = "not known" if effects is None else "none"
    rows = [[_entry(entry, paths), how, _listing(_files(found, entry)) or unknown] for entry, how in entries]
    lines = _table(["spec entry", "change", "generated lines (+added -removed)"], rows, "changed spec entries", ref, budget, compat_lists=False)
    other = _files(found, None)
    if other:
        note = f"Changed generated lines no changed spec entry produces (template text, or a plan that moved): {_listing(other)}"
        lines += budget.take(["", note])
    return lines


def _cause(cause: Cause, ref: str, budget: Budget) -> list[str]:
    if cause.kind is CauseKind.TEMPLATES:
        head = f"**{cause.title}** changed since `{ref}`: " + _listing([_code(t) for t in cause.what])
    else:
        head = f"**{cause.title}**: " + "; ".join(cause.what)
    if not cause.files:
        return budget.take([head + "; no generated file changed."])
    with_templates = cause.kind is CauseKind.TEMPLATES and any(f.templates for f in cause.files)
    header = ["generated file", "lines (+added -removed)", *(["template"] if with_templates else [])]
    rows = [[_code(f.path), f.counts(), *([_listing([_code(t) for t in f.templates])] if with_templates else [])] for f in cause.files]
    return budget.take([head, ""]) + _table(header, rows, f"files changed by {cause.title}", ref, budget)


def _other_causes(others: OtherCauses, ref: str, budget: Budget) -> list[str]:
    lines: list[str] = []
    for cause in others.causes:
        lines += (budget.take([""]) if lines else []) + _cause(cause, ref, budget)
    if others.notes:
        lines += (budget.take([""]) if lines else []) + budget.take([f"- {note}." for note in others.notes])
    return lines


def _plans(changes: Iterable[Change], ref: str, budget: Budget) -> list[str]:
    rows = []
    for change in changes:
        if change.plan is None:
            continue
        causes = _listing([("together: " if c.joint else "") + c.what for c in change.plan.causes], 3, "; ") or "not found"
        for index, (facet, before, after) in enumerate(change.plan.facets):
            rows.append([_code(change.plan.kernel) if index == 0 else "", facet, before, after, causes if index == 0 else ""])
    return _table(["kernel", "facet", "before", "after", "caused by"], rows, "plan facets changed", ref, budget)


_LISTED = {"op": "ops", "target": "targets", "kernel": "kernels"}


def _added_removed(changes: Sequence[Change], budget: Budget) -> list[str]:
    def line(label: str, added: list[str], removed: list[str]) -> str:
        return f"- {label}: " + _listing([*(f"added {s}" for s in added), *(f"removed {s}" for s in removed)], separator="; ")

    lines = []
    for prefix, label in _LISTED.items():
        added = [c.subject for c in changes if c.kind == f"{prefix}-added"]
        removed = [c.subject for c in changes if c.kind == f"{prefix}-removed"]
        if added or removed:
            lines.append(line(label, added, removed))
    abi = [c for c in changes if c.area is not Area.CAPABILITIES and not c.kind.startswith("python-")]
    abi_added = [c.subject for c in abi if c.kind.endswith("-added")]
    abi_removed = [c.subject for c in abi if c.kind.endswith("-removed")]
    if abi_added or abi_removed:
        lines.append(line("ABI", abi_added, abi_removed))
    return budget.take(lines)


def review_markdown(
    report: Report, entries: Sequence[tuple[SpecEntry, str]], effects: Effects | None, paths: SpecPaths, others: OtherCauses | None = None
) -> str:
    """The comment; ``report`` has its files named for printing already."""
    ref = report.against.ref
    budget = Budget(BUDGET)
    others = others or OtherCauses()
    lines = budget.take([f"## ttlgen review: the specs against `{ref}` (`{report.against.short}`)", ""])
    lines += _compat(report, budget)
    sections: list[tuple[str, Callable[[], list[str]]]] = [
        ("Spec changes and the generated lines they change", lambda: _spec_changes(entries, effects, ref, paths, others, budget)),
        ("Generated files changed by templates and ttlgen's code", lambda: _other_causes(others, ref, budget)),
        ("Kernel plans that changed", lambda: _plans(report.changes, ref, budget)),
        ("Added and removed", lambda: _added_removed(report.changes, budget)),
        ("Capability changes", lambda: _capabilities(report.changes, ref, budget)),
    ]
    for title, build in sections:
        heading = ["", f"### {title}", ""]
        if not budget.fits("\n".join(heading), reserve=2 * _RESERVE):
            # The reserve each section kept back pays for this line.
            lines += ["", f"### {title}", "", f"Left out to keep the comment under GitHub's size limit: run `ttlgen review --against {ref}` to see it."]
            continue
        left = budget.left
        budget.take(heading)
        body = build()
        if body:
            lines += heading + body
        else:
            budget.left = left
    return "\n".join(lines) + "\n"


def _capabilities(changes: Sequence[Change], ref: str, budget: Budget) -> list[str]:
    found = [c for c in changes if c.area is Area.CAPABILITIES and c.plan is None and not c.kind.endswith(("-added", "-removed"))]
    rows = [[c.subject, c.message, _where(c)] for c in found]
    return _table(["what", "change", "where"], rows, "capability changes", ref, budget)


def _templates_of(files: dict[str, FileProvenance]) -> dict[str, set[str]]:
    """The templates each generated file is rendered from (``templates/<name>``)."""
    return {path: {o.template.template for o in file.origins if o.template is not None} for path, file in files.items()}


def _traced(side: Side, templates: Templates, made: dict[str, Emitted], paths: Collection[str]) -> dict[str, FileProvenance]:
    """The provenance of ``paths``, files of the side's render ``made``: only their emitters
    are traced (a traced render costs several times a plain one)."""
    wanted = set(paths)
    emitters = {made[path].emitter for path in wanted if path in made}
    traced = trace_files(side.project, side.plan, side.documents, templates, emitters) if emitters else {}
    return {path: file for path, file in traced.items() if path in wanted}


def review(ref: str, specs_dir: Path, templates_dir: Path, out_dir: Path) -> str:
    templates = Templates(templates_dir)
    with sides(ref, specs_dir) as (old, new, revision):
        report = compare(old, new, revision)
        changed = changed_entries(old, new)
        now = emitted(new.project, new.plan, templates)
        try:
            then: dict[str, Emitted] | None = emitted(old.project, old.plan, templates)
        except SpecErrors:
            raise
        except Exception:  # a template of the work tree reads what the ref's specs do not have
            then = None
        effects: Effects | None = None
        if then is not None:
            # Provenance is wanted of the files that differ (their lines are charged) and,
            # at the ref, of those the templates changed (the templates are named).
            differ = {path for path in then.keys() | now.keys() if then.get(path) != now.get(path)}
            effects = generated_effects(_traced(old, templates, then, differ), _traced(new, templates, now, differ), changed.old, changed.new)
            ref_lines = lines_of({path: file.data for path, file in then.items()})
            others = other_causes(
                old, revision, specs_dir, templates, out_dir, ref_lines, lambda paths: _templates_of(_traced(old, templates, then, paths))
            )
        else:
            others = OtherCauses((), (f"the specs at `{ref}` do not render with the work tree's templates: generated lines are not charged",))
    return review_markdown(new.paths.relocated(report), changed.entries, effects, new.paths, others)
