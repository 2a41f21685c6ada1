"""The ``ttlgen`` command line.

Exit codes: 0 success; 1 the generated tree is out of date (check) or a kernel failed
(resolve/run); 2 bad input or usage. User errors never print a Python traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from ttlgen.errors import SpecErrors, UsageError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2

app = typer.Typer(
    name="ttlgen",
    help=(
        "Generate TT-Lang's kernel-configuration resolver, runtime ABI headers and codec, "
        "and Tensix kernels from the versioned spec files in specs/.\n\n"
        "Typical use: edit a spec, run `ttlgen build`, review the diff of generated/ "
        "(and the test snapshots) in your pull request. CI runs `ttlgen check`."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

SpecsOption = Annotated[
    Path, typer.Option("--specs", help="Spec tree to read.", show_default=True, file_okay=False)
]
OutOption = Annotated[
    Path, typer.Option("--out", help="Generated tree to write or compare.", show_default=True, file_okay=False)
]
TemplatesOption = Annotated[
    Path | None,
    typer.Option("--templates", help="Template tree (default: the one shipped with ttlgen).", file_okay=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print a machine-readable JSON result on stdout.")]


def _emit_json(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, indent=2) + "\n")


def _fail(exc: SpecErrors | UsageError, as_json: bool, writes: bool) -> NoReturn:
    if isinstance(exc, SpecErrors):
        errors = [d.to_json() for d in exc.diagnostics]
        text = exc.render()
        summary = f"ttlgen: {len(exc.diagnostics)} error(s)" + ("; nothing was written" if writes else "")
    else:
        errors = [{"message": str(exc)}]
        text = f"ttlgen: {exc}"
        summary = ""
    if as_json:
        _emit_json({"status": "error", "errors": errors})
    else:
        sys.stderr.write(text + "\n")
        if summary:
            sys.stderr.write(summary + "\n")
    raise typer.Exit(EXIT_BAD_INPUT)


def _guarded(as_json: bool, action: Callable[[], int], writes: bool = False) -> None:
    try:
        code = action()
    except (SpecErrors, UsageError) as exc:
        _fail(exc, as_json, writes)
    raise typer.Exit(code)


@app.command()
def build(
    specs: SpecsOption = Path("specs"),
    out: OutOption = Path("generated"),
    templates: TemplatesOption = None,
    as_json: JsonOption = False,
) -> None:
    """Regenerate the output tree from the specs and templates.

    Writes nothing if any spec has an error. Otherwise replaces the tree atomically:
    files whose content is unchanged are kept as they are (mtime included), files no
    spec produces any more are removed.
    """

    def action() -> int:
        from ttlgen.pipeline import generate
        from ttlgen.write import write_tree

        tree = generate(specs, templates)
        diff = write_tree(out, tree.files)
        changed = len(diff.stale) + len(diff.missing)
        if as_json:
            _emit_json({"status": "ok", "files": len(tree.files), "written": sorted((*diff.stale, *diff.missing)), "removed": list(diff.orphaned)})
        else:
            sys.stdout.write(
                f"ttlgen: {out}: {len(tree.files)} files, {changed} written, {len(diff.orphaned)} removed\n"
            )
        return EXIT_OK

    _guarded(as_json, action, writes=True)


@app.command()
def check(
    specs: SpecsOption = Path("specs"),
    out: OutOption = Path("generated"),
    templates: TemplatesOption = None,
    show_diff: Annotated[bool, typer.Option("--diff", help="Also print the unified diff.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Exit 0 if the output tree is byte-identical to what `build` would write, else 1.

    Lists stale (different content), missing and orphaned (no spec produces them)
    files. Writes nothing.
    """

    def action() -> int:
        from ttlgen.pipeline import generate
        from ttlgen.write import compare, unified_diff

        tree = generate(specs, templates)
        diff = compare(out, tree.files)
        if as_json:
            _emit_json({"status": "ok" if diff.clean else "stale", **diff.to_json()})
        elif not diff.clean:
            for label, paths in (("stale", diff.stale), ("missing", diff.missing), ("orphaned", diff.orphaned)):
                for path in paths:
                    sys.stderr.write(f"{label}: {out / path}\n")
            if show_diff:
                sys.stdout.write(unified_diff(out, tree.files, diff))
            fix = f"ttlgen build --specs {specs} --out {out}" if (specs, out) != (Path("specs"), Path("generated")) else "ttlgen build"
            sys.stderr.write(f"ttlgen: {out} is out of date; run `{fix}` and commit the result\n")
        else:
            sys.stdout.write(f"ttlgen: {out} is up to date ({len(tree.files)} files)\n")
        return EXIT_OK if diff.clean else EXIT_FAILED

    _guarded(as_json, action)


@app.command()
def diff(
    specs: SpecsOption = Path("specs"),
    out: OutOption = Path("generated"),
    templates: TemplatesOption = None,
) -> None:
    """Print the unified diff `build` would apply to the output tree; write nothing."""

    def action() -> int:
        from ttlgen.pipeline import generate
        from ttlgen.write import compare, unified_diff

        tree = generate(specs, templates)
        sys.stdout.write(unified_diff(out, tree.files, compare(out, tree.files)))
        return EXIT_OK

    _guarded(False, action)


@app.command()
def validate(specs: SpecsOption = Path("specs"), as_json: JsonOption = False) -> None:
    """Check the specs (syntax, schema, cross-file references) without generating."""

    def action() -> int:
        from ttlgen.pipeline import load_project

        project = load_project(specs)
        if as_json:
            _emit_json({"status": "ok", "specs": list(project.spec_files)})
        else:
            sys.stdout.write(f"ttlgen: {len(project.spec_files)} spec files are valid\n")
        return EXIT_OK

    _guarded(as_json, action)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("ttlgen: interrupted\n")
        raise SystemExit(130) from None
