"""The ``ttlgen`` command line.

Exit codes (errors.ExitCode, README "Exit codes"): 0 success; 1 the command's answer is
"no" (check: stale tree, diff: differences, resolve: rejected kernel, run: failing
kernel); 2 bad input, usage or environment; 3 a bug in ttlgen. User errors never print a
Python traceback.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from ttlgen.accuracy_limits import LIMITS_HELP, MAX_BLOCK, MAX_K, MAX_SEEDS
from ttlgen.errors import ExitCode, SpecErrors, UsageError, diagnostics_of, error_envelope
from ttlgen.upstream.cli import app as upstream_app

if TYPE_CHECKING:
    from ttlgen.generate import GeneratedTree
    from ttlgen.write import TreeDiff


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
app.add_typer(upstream_app)

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
        text = exc.render()
        summary = f"ttlgen: {len(exc.diagnostics)} error(s)" + ("; nothing was written" if writes else "")
    else:
        text = f"ttlgen: {exc}"
        summary = ""
    if as_json:
        _emit_json(error_envelope(d.to_json() for d in diagnostics_of(exc)))
    else:
        sys.stderr.write(text + "\n")
        if summary:
            sys.stderr.write(summary + "\n")
    raise typer.Exit(ExitCode.BAD_INPUT)


def _guarded(as_json: bool, action: Callable[[], int], writes: bool = False, generates: bool = False) -> None:
    """Run a command's action, turning spec and usage errors into exit 2. ``generates``: the
    command loads, models and renders the specs in one short burst, without the cycle
    collector (see _without_cycle_collection)."""
    try:
        with _without_cycle_collection() if generates else contextlib.nullcontext():
            code = action()
    except (SpecErrors, UsageError) as exc:  # OutputError is a UsageError
        _fail(exc, as_json, writes)
    raise typer.Exit(code)


@contextlib.contextmanager
def _without_cycle_collection() -> Iterator[None]:
    # A generation allocates a few hundred thousand small records (frozen dataclasses, IR
    # nodes) that reference counting frees, and the cycle collector's passes over them find
    # nothing to collect: they cost 10-20 % of a build's CPU time (bench/build.py). The
    # collector is back on when the command ends, so an in-process caller loses nothing.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Regenerate even when the inputs' fingerprint is known.")
]


def _known_diff(specs: Path, out: Path, templates: Path | None, no_cache: bool) -> tuple[str | None, TreeDiff | None]:
    """(fingerprint, diff) from the tree cache, without generating; diff is None on a miss."""
    known = _known_tree(specs, templates, no_cache)
    if known is None or known[1] is None:
        return (known[0] if known else None), None
    from ttlgen import tree_cache
    from ttlgen.write import compare_hashes

    return known[0], compare_hashes(known[1], tree_cache.disk_hashes(out))


def _known_tree(specs: Path, templates: Path | None, no_cache: bool) -> tuple[str, dict[str, str] | None] | None:
    """(fingerprint, recorded hashes or None on a miss), or None when caching is off."""
    from ttlgen import cache, tree_cache
    from ttlgen.emit._templates import default_templates_dir
    from ttlgen.spec.files import spec_files

    spec_files(specs)  # a missing spec directory is a usage error either way
    if no_cache or not cache.enabled():
        return None
    key = tree_cache.fingerprint(specs, templates or default_templates_dir())
    return key, tree_cache.lookup(key)


def _generate(specs: Path, templates: Path | None, key: str | None) -> GeneratedTree:
    from ttlgen import tree_cache
    from ttlgen.generate import generate

    # With a tree-cache key (caching on, no --no-cache), the parts of the tree that no
    # changed input reaches come from the part records too.
    tree = generate(specs, templates, reuse=key is not None)
    if key is not None:
        tree_cache.store(key, tree.files)
    return tree


def _cached_files(key: str | None) -> dict[str, bytes] | None:
    """The tree of a known fingerprint from the cache's blob store (like ccache: the same
    inputs always give the same bytes), or None."""
    from ttlgen import tree_cache

    record = tree_cache.lookup(key) if key is not None else None
    return tree_cache.contents(record) if record is not None else None


@contextlib.contextmanager
def _reading(out: Path) -> Iterator[None]:
    """Read the tree under its shared lock, first putting back a tree that a build killed
    in the middle of its swap left beside the path."""
    from ttlgen.write import interrupted_swap, recover, tree_lock

    if interrupted_swap(out) is not None:
        with tree_lock(out, waiting=sys.stderr):
            recover(out)
    with tree_lock(out, shared=True, waiting=sys.stderr):
        yield


@dataclass(frozen=True)
class _Comparison:
    """The tree on disk compared with the generation, and the generation unless the cache answered."""

    diff: TreeDiff
    tree: GeneratedTree | None  # None when the cache answered


def _compare(specs: Path, out: Path, templates: Path | None, no_cache: bool) -> _Comparison:
    from ttlgen.write import compare

    key, known = _known_diff(specs, out, templates, no_cache)
    if known is not None:
        return _Comparison(known, None)
    tree = _generate(specs, templates, key)
    return _Comparison(compare(out, tree.files), tree)


@app.command()
def build(
    specs: SpecsOption = Path("specs"),
    out: OutOption = Path("generated"),
    templates: TemplatesOption = None,
    no_cache: NoCacheOption = False,
    as_json: JsonOption = False,
) -> None:
    """Regenerate the output tree from the specs and templates.

    Writes nothing if any spec has an error. Otherwise replaces the tree atomically:
    files whose content is unchanged are kept as they are (mtime included), files no
    spec produces any more are removed. Concurrent builds of one tree wait for each other.
    """

    def action() -> int:
        from ttlgen import tree_cache
        from ttlgen.emit._notice import MANIFEST, NOTICE
        from ttlgen.write import (
            compare_hashes,
            is_generated_tree,
            recover,
            resolved,
            tree_lock,
            up_to_date,
            write_tree,
        )

        # build replaces the whole output tree: never let a mistyped --out wipe a source tree.
        resolved_out, resolved_specs = resolved(out), resolved(specs)
        if resolved_out == resolved_specs or resolved_out in resolved_specs.parents:
            raise UsageError(f"--out {out} contains the spec directory {specs}; choose another --out")
        key, record = _known_tree(specs, templates, no_cache) or (None, None)
        # Generate before taking the lock (which creates the tree's directory): a spec
        # error ends the build before it creates or waits for anything. A recorded tree
        # needs no generation: its specs generated without error.
        files = _generate(specs, templates, key).files if record is None else None
        with tree_lock(out, waiting=sys.stderr):
            recover(out)
            if not is_generated_tree(out, MANIFEST, NOTICE):
                raise UsageError(
                    f"refusing to replace {out}: it is not empty and has no ttlgen {MANIFEST}; "
                    "remove it or choose another --out"
                )
            known = compare_hashes(record, tree_cache.disk_hashes(out)) if record is not None else None
            if known is not None and up_to_date(out, known):
                diff, count = known, len(known.unchanged)
            else:
                if files is None:
                    files = _cached_files(key)
                if files is None:
                    files = _generate(specs, templates, key).files
                diff, count = write_tree(out, files), len(files)
        written = sorted((*diff.stale, *diff.missing))
        if as_json:
            _emit_json({"status": "ok", "files": count, "written": written, "removed": list(diff.orphaned)})
        else:
            sys.stdout.write(f"ttlgen: {out}: {count} files, {len(written)} written, {len(diff.orphaned)} removed\n")
        return ExitCode.OK

    _guarded(as_json, action, writes=True, generates=True)


@app.command()
def check(
    specs: SpecsOption = Path("specs"),
    out: OutOption = Path("generated"),
    templates: TemplatesOption = None,
    show_diff: Annotated[bool, typer.Option("--diff", help="Also print the unified diff.")] = False,
    no_cache: NoCacheOption = False,
    as_json: JsonOption = False,
) -> None:
    """Exit 0 if the output tree is byte-identical to what `build` would write, else 1.

    Lists stale (different content), missing and orphaned (no spec produces them)
    files. Writes nothing in the output tree.
    """

    def action() -> int:
        from ttlgen.write import unified_diff

        with _reading(out):
            found = _compare(specs, out, templates, no_cache or show_diff)
            diff = found.diff
            if as_json:
                _emit_json({"status": "ok" if diff.clean else "stale", **diff.to_json()})
            elif not diff.clean:
                not_regular = set(diff.not_regular)
                for label, paths in (("stale", diff.stale), ("missing", diff.missing), ("orphaned", diff.orphaned)):
                    for path in paths:
                        what = " (not a regular file)" if path in not_regular else ""
                        sys.stderr.write(f"{label}: {out / path}{what}\n")
                if show_diff and found.tree is not None:
                    sys.stdout.write(unified_diff(out, found.tree.files, diff))
                defaults = (specs, out) == (Path("specs"), Path("generated"))
                fix = "ttlgen build" if defaults else f"ttlgen build --specs {specs} --out {out}"
                sys.stderr.write(f"ttlgen: {out} is out of date; run `{fix}` and commit the result\n")
            else:
                sys.stdout.write(f"ttlgen: {out} is up to date ({len(diff.unchanged)} files)\n")
        return ExitCode.OK if diff.clean else ExitCode.FAILED

    _guarded(as_json, action, generates=True)


@app.command()
def diff(
    specs: SpecsOption = Path("specs"),
    out: OutOption = Path("generated"),
    templates: TemplatesOption = None,
    no_cache: NoCacheOption = False,
    as_json: JsonOption = False,
) -> None:
    """Print the unified diff `build` would apply to the output tree; write nothing.

    Exit 0 when there is no difference, 1 when there is (as `git diff --exit-code`).
    """

    def action() -> int:
        from ttlgen.write import compare, unified_diff

        with _reading(out):
            found = _compare(specs, out, templates, no_cache)
            changes, tree = found.diff, found.tree
            if not changes.clean and tree is None:  # the cache knows that it differs, not how
                tree = _generate(specs, templates, None)
                changes = compare(out, tree.files)
            text = unified_diff(out, tree.files, changes) if tree is not None and not changes.clean else ""
        if as_json:
            _emit_json({"status": "ok" if changes.clean else "stale", **changes.to_json(), "diff": text})
        else:
            sys.stdout.write(text)
        return ExitCode.OK if changes.clean else ExitCode.FAILED

    _guarded(as_json, action, generates=True)


@app.command()
def validate(specs: SpecsOption = Path("specs"), as_json: JsonOption = False) -> None:
    """Check the specs (syntax, schema, cross-file references) without generating."""

    def action() -> int:
        from ttlgen.pipeline import plan_specs

        project, _ = plan_specs(specs)
        if as_json:
            _emit_json({"status": "ok", "specs": list(project.spec_files)})
        else:
            sys.stdout.write(f"ttlgen: {len(project.spec_files)} spec files are valid\n")
        return ExitCode.OK

    _guarded(as_json, action, generates=True)


# --- ttlgen compat / review / explain (issue 11: spec evolution) -----------------------

AgainstOption = Annotated[
    str, typer.Option("--against", help="Git ref to compare with: a branch, tag, commit or any name git understands.")
]


@app.command()
def compat(against: AgainstOption, specs: SpecsOption = Path("specs"), as_json: JsonOption = False) -> None:
    """Compare the specs with their version at a git ref: who does each change break?

    Compares the models (and the kernels' resolved plans), not the generated text. Each
    change is listed with its category (layout wire / source / compatible, programs,
    capabilities) and where it is at both sides. Exit 0 when every change is compatible or
    each breaking change comes with a major bump of its layout's abi_version, 1 when a
    breaking change is not covered, 2 on bad input (unknown ref, specs that do not load).
    """

    def action() -> int:
        from ttlgen.compat.render import text_report
        from ttlgen.compat.verdict import compare_against

        report = compare_against(against, specs)
        if as_json:
            _emit_json(report.to_json())
        else:
            sys.stdout.write(text_report(report))
        return report.exit_code

    _guarded(as_json, action)


@app.command()
def review(
    against: AgainstOption, specs: SpecsOption = Path("specs"), templates: TemplatesOption = None
) -> None:
    """Print a Markdown summary of the spec changes since a git ref, for a pull-request comment.

    The compat verdict and its changes, each changed spec entry with the generated files and
    lines it changes, the kernels whose plans moved (before, after, cause), and what was added
    or removed. Exit 0 when the summary is printed (`ttlgen compat` is the gate), 2 on bad input.
    """

    def action() -> int:
        from ttlgen.compat.review import review as summarise
        from ttlgen.emit._templates import default_templates_dir

        sys.stdout.write(summarise(against, specs, templates or default_templates_dir()))
        return ExitCode.OK

    _guarded(False, action)


OutputTreeOption = Annotated[
    Path, typer.Option("--out", help="The generated tree the path is in.", show_default=True, file_okay=False)
]


@app.command()
def explain(
    target: Annotated[str, typer.Argument(help="A generated file, PATH or PATH:LINE (e.g. generated/include/komorebi/abi/km_abi.h:42).")],
    specs: SpecsOption = Path("specs"),
    out: OutputTreeOption = Path("generated"),
    templates: TemplatesOption = None,
    as_json: JsonOption = False,
) -> None:
    """Say which spec location (file:line:column and key path) or template line produced a line.

    With PATH:LINE: the model object and spec node behind that line, and its template line.
    With PATH: the file's regions, each with the spec entry or template it comes from. The
    lines are those `ttlgen build` writes; when the file on disk differs, a note says so.
    """

    def action() -> int:
        from ttlgen.emit._templates import default_templates_dir
        from ttlgen.provenance.explain import (
            explain_line,
            explain_regions,
            line_json,
            parse_target,
            provenance_of,
            regions_json,
        )

        wanted = parse_target(target, out)
        explained = provenance_of(wanted, specs, out, templates or default_templates_dir())
        file = explained.file
        shown = (out / file.path).as_posix()
        if not explained.current:
            sys.stderr.write(f"ttlgen: note: {shown} differs from what `ttlgen build` writes; explaining what it writes\n")
        if as_json:
            payload: dict[str, Any] = {"status": "ok", "file": file.path, "current": explained.current}
            if wanted.line is not None:
                payload["line"] = line_json(file, wanted.line)
            else:
                payload["regions"] = regions_json(file, explained.locator)
            _emit_json(payload)
        elif wanted.line is not None:
            sys.stdout.write(explain_line(file, wanted.line, shown))
        else:
            sys.stdout.write(explain_regions(file, shown, explained.locator))
        return ExitCode.OK

    _guarded(as_json, action)


def main() -> None:
    """The console entry point (in-process callers run ``app``)."""
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("ttlgen: interrupted\n")
        raise SystemExit(ExitCode.INTERRUPTED) from None
    except SystemExit as done:
        _end_process(done.code)
    except Exception:
        # Python exits 1 on an uncaught exception, which would read as a "no" (a stale tree,
        # a failing kernel): a bug gets its own code.
        import traceback

        traceback.print_exc()
        sys.stderr.write("ttlgen: internal error: this is a bug in ttlgen, not in the input; please report it with the traceback above\n")
        raise SystemExit(ExitCode.INTERNAL) from None
    _end_process(0)


def _end_process(code: object) -> NoReturn:
    """Exit with ``code`` as SystemExit would, without tearing the interpreter down.

    Tearing down frees every module and object one by one and collects cycles over
    everything a generation left behind: 30-45 ms after a build, a tenth of it
    (bench/build.py), for a process that is ending anyway. The exit handlers still run
    (caches written at exit, weakref finalizers) and the standard streams are flushed;
    files ttlgen writes are closed before a command returns."""
    import atexit

    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        sys.stderr.write(f"{code}\n")
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe, a closed stream
            stream.flush()
    os._exit(status)


# --- ttlgen resolve (issue 3: kernel-configuration resolver) -------------------------


@app.command()
def resolve(
    kernel: Annotated[
        Path,
        typer.Argument(
            help="A kernel description (YAML or TOML), a kernel spec file, or a kernel of the specs by name.", dir_okay=False
        ),
    ],
    target: Annotated[
        str | None, typer.Option("--target", help="Target (architecture) name; overrides the kernel's `target`.")
    ] = None,
    specs: SpecsOption = Path("specs"),
    as_json: JsonOption = False,
) -> None:
    """Resolve a kernel's configuration with the resolver generated from the current specs.

    Prints the plan (strategies, DST width and sync, unpack-to-DST set) and the runtime
    descriptor, or the diagnostics. Exit 0 resolved, 1 rejected kernel, 2 bad input.
    """
    from ttlgen.resolve import run_resolve

    raise typer.Exit(run_resolve(kernel, target, as_json, specs, sys.stdout, sys.stderr))


# --- ttlgen run / accuracy (issue 5: generated kernels on the device emulator) -------

DEVICE_EXTRA = "device"
SEED_MAX = 2**64 - 1


def device_extra_command() -> str:
    """The command that adds the device extra to this installation of ttlgen.

    ttlgen is installed from its repository, not from a package index, so the command
    names the directory pip installed it from (its PEP 610 record, ``direct_url.json``);
    without a record (run from a source tree), the repository's own command."""
    import json
    import shlex
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    try:
        record = json.loads(metadata.distribution("ttlgen").read_text("direct_url.json") or "null")
    except (metadata.PackageNotFoundError, ValueError):
        record = None
    url = urlparse(str(record.get("url", ""))) if isinstance(record, dict) else None
    if url is None or url.scheme != "file":
        return f"pip install -e '.[{DEVICE_EXTRA}]' in the ttlgen repository"
    dir_info = record.get("dir_info") if isinstance(record, dict) else None
    editable = "-e " if isinstance(dir_info, dict) and dir_info.get("editable") else ""
    return f"pip install {editable}{shlex.quote(f'{unquote(url.path)}[{DEVICE_EXTRA}]')}"


def _require_device_extra(command: str) -> None:
    """run and accuracy compare against NumPy references: without the extra, say how to get it."""
    import importlib.util

    if importlib.util.find_spec("numpy") is None:
        sys.stderr.write(
            f"ttlgen: `ttlgen {command}` needs NumPy, from ttlgen's `{DEVICE_EXTRA}` extra: {device_extra_command()}\n"
        )
        raise typer.Exit(ExitCode.BAD_INPUT)


@app.command()
def run(
    kernel: Annotated[str, typer.Argument(help="Name of a kernel declared in specs/kernels/.")],
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0, max=SEED_MAX, help="Seed of the random inputs, 0 to 2**64-1 (default: fresh)."),
    ] = None,
    specs: SpecsOption = Path("specs"),
    as_json: JsonOption = False,
) -> None:
    """Generate, compile (cached) and run one kernel on the emulator against a float64 reference.

    Reports max_abs, mean_abs, PCC and the verdict of the kernel spec's tolerance.
    Exit 0 pass, 1 fail (wrong numbers or a device error), 2 bad input.
    """
    _require_device_extra("run")
    from ttlgen.run import run_command

    raise typer.Exit(run_command(kernel, seed, as_json, specs))


@app.command(
    help=(
        "Error vs K of the generated matmul kernels (L1 accumulation, DST round-trip, fp32 DST).\n\n"
        "Standard-normal bf16 inputs; one row per (method, K, block) with max_abs, mean_abs, "
        "1 - PCC, max and mean relative to the smallest K, and whether the block was subblocked. "
        "--hardware adds the hardware measurements that exist for the rows, with "
        "emulated/hardware ratios. A progress line goes to stderr (not with --json unless "
        f"--progress). {LIMITS_HELP}"
    )
)
def accuracy(
    k: Annotated[str, typer.Option("--k", help=f"K values in 32-wide tiles, comma-separated, each 1..{MAX_K}.")] = "1,4,16,64",
    block: Annotated[str, typer.Option("--block", help=f"Output block sizes (M = N tiles), comma-separated, each 1..{MAX_BLOCK}.")] = "2,16",
    hardware: Annotated[bool, typer.Option("--hardware", help="Print the hardware measurements beside the rows that have one, with emulated/hardware ratios.")] = False,
    seeds: Annotated[int, typer.Option("--seeds", help=f"Average each row over the inputs of seeds 0..N-1 (N in 1..{MAX_SEEDS}).")] = 1,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress", help="Progress line on stderr (default: on, off with --json).")] = None,
    specs: SpecsOption = Path("specs"),
    as_json: JsonOption = False,
) -> None:
    _require_device_extra("accuracy")
    from ttlgen.run import accuracy_command

    raise typer.Exit(accuracy_command(k, block, as_json, specs, hardware=hardware, seeds=seeds, progress=progress))
