"""`ttlgen new`: the spec entries of a new architecture, kernel or op, written where they
belong, with every fact the user must state left empty at its own line.

A scaffold is made from an existing entry (``--like``) so it has every key the schema
asks for in the order a reader expects, with its comments. The facts that differ from
one architecture, kernel or op to the next are emptied (``summary:`` with nothing after
it), so the next `ttlgen validate` or `build` names each one at its line; facts that may
well carry over (a capacity, a relation table) are kept and listed for review. Nothing
is overwritten: a name or file that exists is refused before anything is written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ttlgen.errors import UsageError, did_you_mean
from ttlgen.model.project import Project
from ttlgen.pipeline import load_project, validate_specs
from ttlgen.spec.document import SpecDocument

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


@dataclass(frozen=True)
class Scaffold:
    """A file to write, and what in it is left to the user."""

    path: Path
    text: str
    fill_in: tuple[str, ...]  # keys emptied: each is a validation error until stated
    review: tuple[str, ...]  # keys copied from the model entry: check they hold


def _check_name(name: str, what: str, taken: Sequence[str]) -> None:
    if not _NAME.match(name):
        raise UsageError(f"{name!r} is not a valid {what} name: lower case letters, digits and '_', starting with a letter")
    if name in taken:
        raise UsageError(f"there is already a {what} named {name!r}; choose another name")


def _top_key(key: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(key)}:.*$", re.MULTILINE)


def _emptied(text: str, key: str, what: str, indent: str = "") -> str:
    """Every ``key:`` line (at ``indent``) with its value removed, the lines a folded or
    block value continues on too, and a note in its place."""
    lines = text.split("\n")
    out: list[str] = []
    skipping = False
    for line in lines:
        if skipping and line.strip() and len(line) - len(line.lstrip()) > len(indent):
            continue  # a continuation of the value removed
        skipping = False
        if line.startswith(f"{indent}{key}:") and not line[len(indent)].isspace():
            out.append(f"{indent}{key}:  # to fill in: {what}")
            skipping = True
            continue
        out.append(line)
    return "\n".join(out)


def _without_block(text: str, key: str) -> str:
    """``text`` without the top-level ``key:`` block and the comment lines just above it."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(f"{key}:")), None)
    if start is None:
        return text
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace() and not lines[i].startswith("#")), len(lines))
    while start > 0 and lines[start - 1].startswith("#") and not lines[start - 1].startswith("# yaml-language-server"):
        start -= 1
    return "\n".join(lines[:start] + lines[end:])


def _renamed(text: str, key: str, old: str, new: str) -> str:
    return _top_key(key).sub(lambda m: m.group(0).replace(f"{key}: {old}", f"{key}: {new}", 1), text)


def new_architecture(specs: Path, name: str, like: str | None) -> list[Scaffold]:
    """An architecture like ``like`` (default: the first supported one) and a target for
    each runtime API ``like`` is launched through, named after ``name``."""
    project = load_project(specs)
    architectures = sorted({t.architecture for t in project.targets.targets if t.rejected is None and t.architecture})
    _check_name(name, "architecture", [a for a, _ in project.targets.architectures])
    model = like or (architectures[0] if architectures else None)
    if model is None or model not in architectures:
        raise UsageError(f"--like {model!r} is no supported architecture{did_you_mean(model or '', architectures)}; choose one of: {', '.join(architectures)}")
    targets = [t for t in project.targets.targets if t.architecture == model]
    taken = {t.name for t in project.targets.targets}

    def target_name(old: str) -> str:
        return name + old[len(model) :] if old.startswith(model) else f"{name}_{old}"

    scaffolds: list[Scaffold] = []
    arch_doc = _document(specs, lambda d: d.kind == "ttlgen.architecture" and d.data.get("name") == model)
    text = _renamed(_read(arch_doc), "name", model, name)
    default = arch_doc.data.get("default_target")
    if isinstance(default, str):
        text = _renamed(text, "default_target", default, target_name(default))
    fill_in = []
    for key, what in (("summary", "one line on the architecture"), ("runtime_name", "the name the runtime reports for a device of it"), ("display_name", "the name TT-Lang's diagnostics give it")):
        if _top_key(key).search(text):
            text = _emptied(text, key, what)
            fill_in.append(key)
    text = _without_block(text, "golden")
    review = tuple(k for k in ("dfb_capacity", "full_fp32") if k in arch_doc.data)
    scaffolds.append(Scaffold(specs / "targets" / "architectures" / f"{name}{Path(arch_doc.display).suffix}", text, tuple(fill_in), review))
    for target in targets:
        new_name = target_name(target.name)
        if new_name in taken:
            raise UsageError(f"there is already a target named {new_name!r}; choose another architecture name")
        doc = _document(specs, lambda d, t=target: d.kind == "ttlgen.target" and d.data.get("name") == t.name)  # type: ignore[misc]
        text = _renamed(_read(doc), "name", target.name, new_name)
        text = _renamed(text, "architecture", model, name)
        text = _emptied(text, "summary", "one line on the target")
        reviewed = "review" in text
        text = _emptied(text, "review", "why this architecture's contract is the shared table's", indent="    ")
        text = _without_block(text, "golden")
        keys = ("summary", *(("relations.*.review",) if reviewed else ()))
        scaffolds.append(Scaffold(specs / "targets" / f"{new_name}{Path(doc.display).suffix}", text, keys, ("runtime_api", "generation", "relations")))
    _refuse_existing(scaffolds)
    return scaffolds


def new_kernel(specs: Path, name: str, like: str | None) -> list[Scaffold]:
    """A kernel spec file holding one kernel like ``like`` (default: the first kernel)."""
    project: Project = load_project(specs)
    kernels = sorted(k.name for k in project.kernels.kernels)
    _check_name(name, "kernel", kernels)
    model = like or (kernels[0] if kernels else None)
    if model is None or model not in kernels:
        raise UsageError(f"--like {model!r} is no kernel of the specs{did_you_mean(model or '', kernels)}")
    doc = _document(specs, lambda d: d.kind == "ttlgen.kernel" and model in (d.data.get("kernels") or {}))
    lines = _read(doc).split("\n")
    start = doc.key_mark(("kernels", model)).line - 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].strip() and not lines[i].lstrip().startswith("#") and len(lines[i]) - len(lines[i].lstrip()) <= indent),
        len(lines),
    )
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    entry = "\n".join(lines[start:end]).replace(f"{model}:", f"{name}:", 1)
    entry = _emptied(entry, "summary", "what the kernel computes", indent=" " * (indent + 2))
    head = [line for line in lines[: next(i for i, line in enumerate(lines) if line.startswith("spec:")) + 1]]
    text = "\n".join([*head, "kernels:", entry, ""])
    path = specs / "kernels" / f"{name}{Path(doc.display).suffix}"
    scaffold = Scaffold(path, text, ("summary",), ("target", "dfbs", "body", "tolerance"))
    _refuse_existing([scaffold])
    return [scaffold]


def _document(specs: Path, wanted: Callable[[SpecDocument], bool]) -> SpecDocument:
    return next(d for d in validate_specs(specs) if wanted(d))


def _read(doc: SpecDocument) -> str:
    return Path(doc.display).read_text(encoding="utf-8")


def _refuse_existing(scaffolds: Sequence[Scaffold]) -> None:
    for scaffold in scaffolds:
        if scaffold.path.exists():
            raise UsageError(f"{scaffold.path} exists; ttlgen new never overwrites a file")


def write(scaffolds: Sequence[Scaffold]) -> None:
    for scaffold in scaffolds:
        with scaffold.path.open("x", encoding="utf-8") as handle:  # "x": a file that appeared since is kept
            handle.write(scaffold.text.rstrip("\n") + "\n")


def report(scaffolds: Sequence[Scaffold]) -> str:
    out = []
    for scaffold in scaffolds:
        out.append(f"wrote {scaffold.path}")
        if scaffold.fill_in:
            out.append(f"  to fill in: {', '.join(scaffold.fill_in)}")
        if scaffold.review:
            out.append(f"  copied, to check: {', '.join(scaffold.review)}")
    out.append("then run `ttlgen validate`: it names each fact still missing at its line")
    return "\n".join(out) + "\n"
