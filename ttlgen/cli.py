"""The ``ttlgen`` command line.

Exit codes (errors.ExitCode, README "Exit codes"): 0 success; 1 the command's answer is
"no" (check: stale tree, diff: differences, resolve: rejected kernel, run: failing
kernel); 2 bad input, usage or environment; 3 a bug in ttlgen. User errors never print a
Python traceback.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, NoReturn, TextIO

import typer

from ttlgen import interrupt
from ttlgen.accuracy_limits import LIMITS_HELP, MAX_BLOCK, MAX_K, MAX_SEEDS
from ttlgen.errors import ExitCode, UsageError, emit_json, guarded
from ttlgen.upstream.cli import JsonOption, SpecsOption
from ttlgen.upstream.cli import app as upstream_app

app = typer.Typer(
    name="ttlgen",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(upstream_app)


def _version(requested: bool) -> None:
    if requested:
        from ttlgen import __version__

        sys.stdout.write(f"ttlgen {__version__}\n")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _options(
    version: Annotated[
        bool, typer.Option("--version", help="Print ttlgen's version and exit.", callback=_version, is_eager=True)
    ] = False,
) -> None:
    """Generate TT-Lang's kernel-configuration resolver, runtime ABI headers and codec,
    and Tensix kernels from the versioned spec files in specs/.

    Typical use: edit a spec, run `ttlgen build`, review the diff of generated/ (and the
    test snapshots) in your pull request. CI runs `ttlgen check`.
    """

OutOption = Annotated[
    Path, typer.Option("--out", help="Generated tree to write or compare.", show_default=True, file_okay=False)
]
TemplatesOption = Annotated[
    Path | None,
    typer.Option("--templates", help="Template tree (default: the one shipped with ttlgen).", file_okay=False),
]


NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Compile every template afresh instead of taking it from the cache.")
]


DeviceNoCacheOption = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Compile the templates, the emulator's runtime and the kernels afresh, in a directory of this process (as TTLGEN_NO_CACHE=1).",
    ),
]


@contextlib.contextmanager
def _caching(on: bool) -> Iterator[None]:
    """Every cache off while the block runs when ``on`` is False: the device build reads
    the same switch as the templates' (`TTLGEN_NO_CACHE`), so this sets it, then puts back
    what the caller had (in-process callers go on with their own setting)."""
    if on:
        yield
        return
    before = os.environ.get("TTLGEN_NO_CACHE")
    os.environ["TTLGEN_NO_CACHE"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["TTLGEN_NO_CACHE"]
        else:
            os.environ["TTLGEN_NO_CACHE"] = before


def _render(specs: Path, templates: Path | None, no_cache: bool) -> dict[str, bytes]:
    """The whole generated tree, path -> bytes (MANIFEST included); raises SpecErrors."""
    from ttlgen.pipeline import render_specs

    return render_specs(specs, templates, cached=not no_cache)


def _refuse_inputs_inside(out: Path, specs: Path, templates: Path | None, no_cache: bool) -> None:
    """build replaces the whole output tree: never let a mistyped --out take the specs,
    the templates or the cache a build reads with it."""
    from ttlgen import cache
    from ttlgen.emit._templates import default_templates_dir
    from ttlgen.tree_lock import resolved, tree_path

    tree = tree_path(out)
    inputs = [("the spec directory", specs, "choose another --out"), ("the template directory", templates or default_templates_dir(), "choose another --out")]
    if cache.enabled() and not no_cache:
        inputs.append(("the cache directory", cache.cache_root(), "set TTLGEN_CACHE_DIR outside it, or pass --no-cache"))
    for what, path, fix in inputs:
        inside = resolved(path)
        if inside == tree or tree in inside.parents:
            raise UsageError(f"--out {out} contains {what} {path}, which a build would replace; {fix}")


def _refuse_out_inside_inputs(out: Path, specs: Path, templates: Path | None) -> None:
    """A tree inside a directory of inputs is read back as input by the next build."""
    from ttlgen.emit._templates import default_templates_dir
    from ttlgen.spec.files import SPEC_SUFFIXES
    from ttlgen.tree_lock import resolved, tree_path

    tree = tree_path(out)
    reasons = (
        ("the spec directory", specs, f"every {', '.join(SPEC_SUFFIXES)} file below it is read as a spec"),
        # The tree's MANIFEST hashes every template, the tree's own files among them, so
        # each build changes the inputs of the next: the tree is never up to date.
        ("the template directory", templates or default_templates_dir(), "every file below it is read as a template, so each build changes the templates of the next"),
    )  # fmt: skip
    for what, path, why in reasons:
        if resolved(path) in tree.parents:
            raise UsageError(f"--out {out} is inside {what} {path}: {why}; choose an --out outside it")


@contextlib.contextmanager
def _reading(out: Path) -> Iterator[None]:
    """Read the tree under its shared lock, first putting back a tree that a build killed
    in the middle of its swap left beside the path."""
    from ttlgen.tree_lock import tree_lock
    from ttlgen.write import interrupted_swap, recover

    if interrupted_swap(out) is not None:
        with tree_lock(out, waiting=sys.stderr):
            recover(out)
    with tree_lock(out, shared=True, waiting=sys.stderr):
        yield


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
        from ttlgen.emit._notice import MANIFEST, NOTICE
        from ttlgen.tree_lock import tree_lock
        from ttlgen.write import is_generated_tree, recover, write_tree

        _refuse_inputs_inside(out, specs, templates, no_cache)
        _refuse_out_inside_inputs(out, specs, templates)
        # Generate before taking the lock (which creates the tree's directory): a spec
        # error ends the build before it creates or waits for anything.
        files = _render(specs, templates, no_cache)
        with tree_lock(out, waiting=sys.stderr):
            recover(out)
            if not is_generated_tree(out, MANIFEST, NOTICE):
                raise UsageError(
                    f"refusing to replace {out}: it is not empty and has no ttlgen {MANIFEST}; "
                    "remove it or choose another --out"
                )
            diff = write_tree(out, files)
        written = sorted((*diff.stale, *diff.missing))
        if as_json:
            emit_json({"status": "ok", "files": len(files), "written": written, "removed": list(diff.orphaned)})
        else:
            sys.stdout.write(f"ttlgen: {out}: {len(files)} files, {len(written)} written, {len(diff.orphaned)} removed\n")
        return ExitCode.OK

    raise typer.Exit(guarded(action, as_json, summary=True, writes=True))


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
        from ttlgen.tree import compare, unified_diff

        _refuse_out_inside_inputs(out, specs, templates)
        files = _render(specs, templates, no_cache)
        with _reading(out):
            diff = compare(out, files)
            if as_json:
                emit_json({"status": "ok" if diff.clean else "stale", **diff.to_json()})
            elif not diff.clean:
                not_regular = set(diff.not_regular)
                for label, paths in (("stale", diff.stale), ("missing", diff.missing), ("orphaned", diff.orphaned)):
                    for path in paths:
                        what = " (an empty directory)" if path.endswith("/") else " (not a regular file)" if path in not_regular else ""
                        sys.stderr.write(f"{label}: {out / path}{what}\n")
                if show_diff:
                    sys.stdout.write(unified_diff(out, files, diff))
                sys.stderr.write(f"ttlgen: {out} is out of date; run `{_build_command(specs, out, templates)}` and commit the result\n")
            else:
                sys.stdout.write(f"ttlgen: {out} is up to date ({len(diff.unchanged)} files)\n")
        return ExitCode.OK if diff.clean else ExitCode.FAILED

    raise typer.Exit(guarded(action, as_json, summary=True))


def _build_command(specs: Path, out: Path, templates: Path | None) -> str:
    """The build that writes what check compared with: the same inputs, quoted for a shell."""
    import shlex

    words = ["ttlgen", "build"]
    for option, value, default in (("--specs", specs, Path("specs")), ("--out", out, Path("generated")), ("--templates", templates, None)):
        if value is not None and value != default:
            words += [option, os.fspath(value)]
    return shlex.join(words)


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
        from ttlgen.tree import compare, unified_diff

        _refuse_out_inside_inputs(out, specs, templates)
        files = _render(specs, templates, no_cache)
        with _reading(out):
            changes = compare(out, files)
            text = unified_diff(out, files, changes) if not changes.clean else ""
        if as_json:
            emit_json({"status": "ok" if changes.clean else "stale", **changes.to_json(), "diff": text})
        else:
            sys.stdout.write(text)
        return ExitCode.OK if changes.clean else ExitCode.FAILED

    raise typer.Exit(guarded(action, as_json, summary=True))


@app.command()
def validate(specs: SpecsOption = Path("specs"), as_json: JsonOption = False) -> None:
    """Check the specs (syntax, schema, cross-file references) without generating."""

    def action() -> int:
        from ttlgen.pipeline import plan

        project, _ = plan(specs)
        if as_json:
            emit_json({"status": "ok", "specs": list(project.spec_files)})
        else:
            sys.stdout.write(f"ttlgen: {len(project.spec_files)} spec files are valid\n")
        return ExitCode.OK

    raise typer.Exit(guarded(action, as_json, summary=True))


# --- ttlgen compat / review / explain (issue 11: spec evolution) -----------------------

AgainstOption = Annotated[
    str, typer.Option("--against", help="Git ref to compare with: a branch, tag, commit or any name git understands.")
]


GeneratedOption = Annotated[
    Path,
    typer.Option(
        "--out",
        help="The generated tree; its version at the ref (when it is in git) tells what templates and ttlgen's code changed.",
        show_default=True,
        file_okay=False,
    ),
]


@app.command()
def compat(
    against: AgainstOption,
    specs: SpecsOption = Path("specs"),
    templates: TemplatesOption = None,
    out: GeneratedOption = Path("generated"),
    as_json: JsonOption = False,
) -> None:
    """Compare the specs with their version at a git ref: who does each change break?

    Compares the models (and the kernels' resolved plans), not the generated text. Each
    change is listed with its category (layout wire / source / compatible, programs,
    capabilities) and where it is at both sides; generated files changed by templates or
    ttlgen's code are listed for review. Exit 0 when every change is compatible or each
    breaking change comes with a major bump of its layout's abi_version, 1 when a breaking
    change is not covered, 2 on bad input (unknown ref, specs that do not load).
    """

    def action() -> int:
        from ttlgen.compat.render import text_report
        from ttlgen.compat.verdict import compare_against
        from ttlgen.emit._templates import default_templates_dir

        report = compare_against(against, specs, templates or default_templates_dir(), out)
        if as_json:
            emit_json(report.to_json())
        else:
            sys.stdout.write(text_report(report))
        return report.exit_code

    raise typer.Exit(guarded(action, as_json, summary=True))


@app.command()
def review(
    against: AgainstOption,
    specs: SpecsOption = Path("specs"),
    templates: TemplatesOption = None,
    out: GeneratedOption = Path("generated"),
) -> None:
    """Print a Markdown summary of what changed since a git ref, for a pull-request comment.

    The compat verdict and its changes, each changed spec entry with the generated files and
    lines it changes, the generated files changed by templates and by ttlgen's code and
    version (each with its line counts), the kernels whose plans moved (before, after,
    cause), and what was added or removed. Exit 0 when the summary is printed (`ttlgen
    compat` is the gate), 2 on bad input.
    """

    def action() -> int:
        from ttlgen.compat.review import review as summarise
        from ttlgen.emit._templates import default_templates_dir

        sys.stdout.write(summarise(against, specs, templates or default_templates_dir(), out))
        return ExitCode.OK

    raise typer.Exit(guarded(action, False, summary=True))


OutputTreeOption = Annotated[
    Path, typer.Option("--out", help="The generated tree the path is in.", show_default=True, file_okay=False)
]


@app.command()
def explain(
    target: Annotated[
        str,
        typer.Argument(
            help="A generated file or a spec file, PATH or PATH:LINE (e.g. generated/include/komorebi/abi/km_abi.h:42, specs/ops/elementwise.yaml:9)."
        ),
    ],
    specs: SpecsOption = Path("specs"),
    out: OutputTreeOption = Path("generated"),
    templates: TemplatesOption = None,
    as_json: JsonOption = False,
) -> None:
    """Say which spec node or template line produced a generated line, or which generated
    lines a spec node produces.

    A generated file: with PATH:LINE, the model object and spec node (file:line:column and
    key path) behind that line, and its template line; with PATH, the file's regions, each
    with the spec node or template it comes from. A spec file: with PATH:LINE, the
    generated files and lines the node at that line produces; with PATH, those of each
    node of the file. The lines are those `ttlgen build` writes; when a file on disk
    differs, a note says so.
    """

    def action() -> int:
        from ttlgen.emit._templates import default_templates_dir
        from ttlgen.provenance import reverse
        from ttlgen.provenance.explain import (
            explain_line,
            explain_regions,
            line_json,
            parse_target,
            provenance_of,
            regions_json,
            traced_tree,
        )

        wanted = parse_target(target, out)
        traced = traced_tree(specs, templates or default_templates_dir(), wanted)
        document = reverse.spec_document(wanted.given, traced.documents, wanted.path in traced.files)
        if document is not None:
            node = reverse.node_at(document, wanted.line) if wanted.line is not None else None
            nodes = reverse.produced(traced.files, document, node)
            for path in reverse.stale(traced.files, nodes, out):
                sys.stderr.write(f"ttlgen: note: {path} differs from what `ttlgen build` writes; listing what it writes\n")
            if as_json:
                emit_json({"status": "ok", **reverse.spec_json(document, nodes, traced.files, out)})
            else:
                sys.stdout.write(reverse.explain_spec(document, nodes, out, one=node is not None))
            return ExitCode.OK
        explained = provenance_of(wanted, specs, out, templates or default_templates_dir(), traced)
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
            emit_json(payload)
        elif wanted.line is not None:
            sys.stdout.write(explain_line(file, wanted.line, shown))
        else:
            sys.stdout.write(explain_regions(file, shown, explained.locator))
        return ExitCode.OK

    raise typer.Exit(guarded(action, as_json, summary=True))


def main() -> None:
    """The console entry point (in-process callers run ``app``)."""
    stdout = _checked_stream("stdout")
    stderr = _checked_stream("stderr")
    try:
        app()
    except KeyboardInterrupt:
        interrupted()
    except SystemExit:
        if interrupt.requested():  # typer ends an interrupted command with a silent exit 130
            interrupted()
        failed = _output_failure(stdout)
        if failed is not None:
            raise SystemExit(failed) from None
        raise
    except StandardOutputError as exc:
        raise SystemExit(_refused(stdout, exc)) from None
    except StandardErrorError:
        # Nowhere to say why: the code alone tells it (README "Exit codes").
        raise SystemExit(ExitCode.BAD_INPUT) from None
    except BrokenPipeError:
        # A closed pipe outside the command, where typer's click does not handle it: the
        # usage message of a bad option (`ttlgen check --dif 2>&1 | true`).
        raise SystemExit(ExitCode.READER_GONE) from None
    except Exception:
        if interrupt.requested():  # an interrupt some code re-raised as another exception
            interrupted()
        # Python exits 1 on an uncaught exception, which would read as a "no" (a stale tree,
        # a failing kernel): a bug gets its own code.
        import traceback

        with contextlib.suppress(OSError, StandardErrorError):  # a bug is exit 3 even unreported
            traceback.print_exc()
            sys.stderr.write("ttlgen: internal error: this is a bug in ttlgen, not in the input; please report it with the traceback above\n")
        raise SystemExit(ExitCode.INTERNAL) from None
    finally:
        for stream in (stdout, stderr):
            if isinstance(stream, _CheckedText) and stream.failed:
                _discard(stream)


class StandardOutputError(Exception):
    """Standard output refused the command's output for a reason other than a closed pipe
    (a full disk, an I/O error): the environment's fault, so exit 2, not an internal error."""

    def __init__(self, error: OSError) -> None:
        super().__init__(f"cannot write standard output: {error.strerror or error}")


class StandardErrorError(Exception):
    """Standard error refused a message for a reason other than a closed pipe: exit 2,
    with nothing said (there is nowhere to say it)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(f"cannot write standard error: {error.strerror or error}")


class _CheckedText(io.TextIOWrapper):
    """A standard stream that writes all it is given or says why not: a closed pipe as
    BrokenPipeError (typer's click handles it, then `_output_failure`), any other refusal
    as ``refusal`` (StandardOutputError or StandardErrorError). A character the stream's
    encoding lacks is written escaped (``\\xe9``), as Python writes it to standard error,
    rather than ending the command.

    Over an unbuffered binary stream (PYTHONUNBUFFERED, ``python -u``) Python's text layer
    writes with one system call and drops what a partial write left (a pipe whose reader
    went away in the middle of a long write, so `ttlgen diff | head -1` ended in exit 1 and
    lost the rest of any output cut short); here that stream gets a buffer, whose flush
    writes everything or raises, and is flushed after every write."""

    def __init__(self, plain: io.TextIOWrapper, refusal: Callable[[OSError], Exception]) -> None:
        binary = plain.buffer
        self._unbuffered = isinstance(binary, io.RawIOBase)
        super().__init__(
            io.BufferedWriter(binary) if isinstance(binary, io.RawIOBase) else binary,
            encoding=plain.encoding,
            errors=_ESCAPE if plain.errors in ("strict", "surrogateescape") else plain.errors,
            line_buffering=plain.line_buffering,
            write_through=plain.write_through,
        )
        self._refusal = refusal
        self.failed = False

    def write(self, text: str) -> int:
        with self._refusals():
            written = super().write(text)
            if self._unbuffered:
                super().flush()
            return written

    def flush(self) -> None:
        with self._refusals():
            super().flush()

    @contextlib.contextmanager
    def _refusals(self) -> Iterator[None]:
        try:
            yield
        except BrokenPipeError:
            self.failed = True
            raise
        except OSError as exc:
            self.failed = True
            raise self._refusal(exc) from None


def _escape(error: UnicodeError) -> tuple[str | bytes, int]:
    """What a standard stream writes for characters its encoding lacks: the bytes a
    surrogate escape stands for (a file name Python decoded from bytes), else ``\\xe9``."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    try:
        return codecs.lookup_error("surrogateescape")(error)
    except UnicodeError:
        return codecs.lookup_error("backslashreplace")(error)


_ESCAPE = "ttlgen.escape"
codecs.register_error(_ESCAPE, _escape)


def _checked_stream(name: str) -> TextIO:
    """The process's standard output or error (``name``) as a `_CheckedText` (left as it
    is when something else, such as a test's capture, stands in for it)."""
    plain = getattr(sys, name)
    if plain is not getattr(sys, f"__{name}__") or not isinstance(plain, io.TextIOWrapper):
        return plain  # type: ignore[no-any-return]
    plain.flush()
    checked = _CheckedText(plain, StandardOutputError if name == "stdout" else StandardErrorError)
    setattr(sys, name, checked)
    return checked


def _discard(stream: TextIO) -> None:
    """Send what is still buffered for ``stream`` to /dev/null, so Python's last flush on
    exit does not fail again (and report it with exit 120)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def _refused(stdout: TextIO, error: StandardOutputError) -> ExitCode:
    _discard(stdout)
    with contextlib.suppress(OSError, StandardErrorError):
        sys.stderr.write(f"ttlgen: {error}\n")
    return ExitCode.BAD_INPUT


def _output_failure(stdout: TextIO) -> ExitCode | None:
    """The exit code a failure of the output itself decides, once the command has ended.

    Python ignores SIGPIPE, so a write to a closed pipe raises instead of ending the
    process; typer's click turns that into a silent exit 1, which would read as the
    command's "no", and puts a wrapper that ignores the pipe's errors in place of
    ``sys.stdout``: the reader went away (141). Output still buffered fails at the last
    flush instead: a closed pipe is 141 again, any other refusal exit 2 with one line."""
    replaced = sys.stdout is not stdout
    try:
        stdout.flush()
    except BrokenPipeError:
        _discard(stdout)
        return ExitCode.READER_GONE
    except StandardOutputError as exc:
        return _refused(stdout, exc)
    return ExitCode.READER_GONE if replaced else None


def interrupted() -> NoReturn:
    sys.stderr.write("ttlgen: interrupted\n")
    raise SystemExit(ExitCode.INTERRUPTED) from None


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

    raise typer.Exit(guarded(lambda: run_resolve(kernel, target, as_json, specs), as_json))


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
    dir_info = record.get("dir_info")
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
    no_cache: DeviceNoCacheOption = False,
) -> None:
    """Generate, compile (cached) and run one kernel on the emulator against a float64 reference.

    Reports max_abs, mean_abs, PCC and the verdict of the kernel spec's tolerance.
    Exit 0 pass, 1 fail (wrong numbers or a device error), 2 bad input.
    """
    _require_device_extra("run")
    from ttlgen.run import run_command

    with _caching(not no_cache):
        code = guarded(lambda: run_command(kernel, seed, as_json, specs), as_json)
    raise typer.Exit(code)


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
    no_cache: DeviceNoCacheOption = False,
) -> None:
    _require_device_extra("accuracy")
    from ttlgen.run import accuracy_command

    with _caching(not no_cache):
        code = guarded(lambda: accuracy_command(k, block, as_json, specs, hardware=hardware, seeds=seeds, progress=progress), as_json)
    raise typer.Exit(code)


# --- ttlgen new (issue 29: scaffolding) -------------------------------------------------

new_app = typer.Typer(
    name="new",
    help=(
        "Write the spec entries of a new architecture, kernel or op, made from an existing one "
        "(--like): the facts to state are left empty at their lines, so the next `ttlgen "
        "validate` names each; nothing is overwritten."
    ),
    no_args_is_help=True,
)
app.add_typer(new_app)

LikeOption = Annotated[str | None, typer.Option("--like", help="The existing entry to start from (default: the first).")]


def _scaffold(make: Callable[[], list[Any]]) -> None:
    def action() -> int:
        from ttlgen import scaffold

        made = make()
        scaffold.write(made)
        sys.stdout.write(scaffold.report(made))
        return ExitCode.OK

    raise typer.Exit(guarded(action, False, summary=True, writes=True))


@new_app.command("arch")
def new_arch(
    name: Annotated[str, typer.Argument(help="The new architecture's name, e.g. nebula.")],
    like: LikeOption = None,
    specs: SpecsOption = Path("specs"),
) -> None:
    """An architecture file and one target per runtime API, like an existing architecture's."""
    from ttlgen import scaffold

    _scaffold(lambda: scaffold.new_architecture(specs, name, like))


@new_app.command("op")
def new_op(
    name: Annotated[str, typer.Argument(help="The new op's name, e.g. tile_softplus.")],
    kind: Annotated[str, typer.Option("--kind", help="unary, binary, or the op family to add it to.")] = "unary",
    function: Annotated[
        str | None, typer.Option("--function", help="The tt-metal function it calls (default: <name>_tile, <name>_binary_tile for a binary).")
    ] = None,
    specs: SpecsOption = Path("specs"),
) -> None:
    """An op: its name in an op family, its spelling, emulator bindings and math to fill in."""
    from ttlgen import scaffold

    _scaffold(lambda: scaffold.new_op(specs, name, kind, function))


@new_app.command("kernel")
def new_kernel(
    name: Annotated[str, typer.Argument(help="The new kernel's name.")],
    like: LikeOption = None,
    specs: SpecsOption = Path("specs"),
) -> None:
    """A kernel spec file with one kernel, like an existing kernel."""
    from ttlgen import scaffold

    _scaffold(lambda: scaffold.new_kernel(specs, name, like))
