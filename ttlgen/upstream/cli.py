"""``ttlgen upstream``: fetch the pinned tt-metal releases, compile kernels against them.

Exit codes as every ttlgen command (README "Exit codes"): 0 done / every unit compiles /
no disagreement, 1 some unit does not compile / a spec disagrees with its release, 2 bad
input or environment (a spec error, an unknown kernel, no network, a wheel whose sha256 is
not the pinned one, no compiler, no libclang).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ttlgen.errors import ExitCode, SpecErrors, UsageError, did_you_mean, emit_json, guarded

if TYPE_CHECKING:
    from ttlgen.upstream.compile import Outcome

app = typer.Typer(
    name="upstream",
    help=(
        "tt-metal as released: each API level pins a ttnn wheel (specs/tt_metal/<level>.yaml, "
        "`release:`); fetch its kernel headers and compile the generated kernels against them "
        "as tt-metal's JIT does."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

# --specs and --json of every ttlgen command: ttlgen.cli takes them from here, as this module
# cannot import it (ttlgen.cli imports this one).
SpecsOption = Annotated[Path, typer.Option("--specs", help="Spec tree to read.", show_default=True, file_okay=False)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print a machine-readable JSON result on stdout.")]
OutOption = Annotated[
    Path, typer.Option("--out", help="Generated tree whose kernels are compiled.", show_default=True, file_okay=False)
]


@app.command()
def fetch(
    level: Annotated[str | None, typer.Option("--level", help="Only this API level (default: every level).")] = None,
    specs: SpecsOption = Path("specs"),
    as_json: JsonOption = False,
) -> None:
    """Download each pinned ttnn wheel, check its sha256 and extract its kernel headers.

    pip downloads the wheel (no dependencies, binary only, for CPython 3.12 on
    manylinux_2_34 x86_64) into ttlgen's cache; the tt-metal sources a kernel compile
    needs are extracted beside it, in a directory named by the sha256. An extraction that
    is complete is reused. Prints where each release's headers are.
    """

    def action() -> int:
        from ttlgen.pipeline import load_project
        from ttlgen.upstream.fetch import fetch as fetch_release
        from ttlgen.upstream.project import level_named, pinned

        project = load_project(specs)
        levels = list(project.api.levels) if level is None else [level_named(project, level, specs)]
        releases = [(lv.level, pinned(lv)) for lv in levels]  # every pin checked before any download
        found = []
        for name, release in releases:
            root = fetch_release(release)
            found.append({"level": name, "release": release.name, "wheel": release.wheel, "sha256": release.sha256, "headers": str(root)})
            if not as_json:
                sys.stdout.write(f"ttlgen: level {name}: {release.name} headers in {root / 'tt_metal'}\n")
        if as_json:
            emit_json({"status": "ok", "releases": found})
        return ExitCode.OK

    raise typer.Exit(guarded(action, as_json))


@app.command("compile")
def compile_kernels(
    kernels: Annotated[list[str] | None, typer.Argument(help="Kernels of the specs to compile (default: all).")] = None,
    arch: Annotated[
        list[str] | None, typer.Option("--arch", help="Only this architecture (repeatable; default: every one the specs name that the JIT model covers).")
    ] = None,
    one_by_one: Annotated[
        bool, typer.Option("--one-by-one", help="Compile every unit in its own translation unit, exactly the files the JIT writes for it (slower; by default units that differ only in their kernel share one).")
    ] = False,
    specs: SpecsOption = Path("specs"),
    out: OutOption = Path("generated"),
    as_json: JsonOption = False,
) -> None:
    """Compile generated kernels against their API level's pinned tt-metal headers.

    Every kernel (or those named) is compiled as tt-metal's JIT does, with g++ in 32-bit
    mode and -fsyntax-only, against the headers of the release its target's API level
    pins: the compute kernel for TRISC0 (unpack), TRISC1 (math; SFPI is a stand-in, see
    the README) and TRISC2 (pack), the reader and the writer for BRISC (NoC 0) and NCRISC
    (NoC 1), for each architecture. Exit 0 when every unit compiles, 1 when one does not
    (each failure with the compiler's first error), 2 on bad input or environment.
    """

    def action() -> int:
        from ttlgen.pipeline import load_project
        from ttlgen.upstream import compile as compiling
        from ttlgen.upstream.project import architectures, kernel_targets

        project = load_project(specs)
        covered, others = architectures(project)
        if arch:
            known = {a.name: a for a in covered}
            wrong = [a for a in arch if a not in known]
            if wrong:
                raise UsageError(f"--arch {wrong[0]}: not an architecture this check compiles for{did_you_mean(wrong[0], known)}; architectures: {', '.join(known)}")
            covered = [known[a] for a in arch]
            others = []
        targets = kernel_targets(project, out, kernels or ())
        selected = compiling.units(targets, covered)
        try:
            outcomes = compiling.compile_units(selected, batch=not one_by_one)
        except FileNotFoundError as exc:
            raise UsageError(str(exc)) from None
        failed = [o for o in outcomes if not o.ok]
        if as_json:
            emit_json(
                {
                    "status": "ok" if not failed else "failed",
                    "units": [_outcome_json(o) for o in outcomes],
                    "not_compiled": others,
                }
            )
        else:
            for outcome in failed:
                sys.stderr.write(f"{outcome.unit.describe()}: {outcome.error}\n")
            sys.stdout.write(summary(outcomes, others))
        return ExitCode.OK if not failed else ExitCode.FAILED

    raise typer.Exit(guarded(action, as_json))


LevelOption = Annotated[list[str] | None, typer.Option("--level", help="Only this API level (repeatable; default: every level).")]


@app.command()
def check(
    level: LevelOption = None,
    specs: SpecsOption = Path("specs"),
    as_json: JsonOption = False,
) -> None:
    """Compare each API level's spec with the headers of the release it pins.

    The pinned wheel's kernel headers are parsed with libclang, as tt-metal's JIT compiles a
    kernel; every header, function form (return and parameter types, defaults, template
    parameters, overloads, [[deprecated]] and its message), enumeration (scope, underlying
    type, enumerators, values), class and define the spec states is compared. Each
    disagreement is printed at the spec line it concerns. Exit 0 when there is none, 1 when
    there is one, 2 on bad input or environment.
    """

    def action() -> int:
        from ttlgen.upstream import api_check
        from ttlgen.upstream.project import load_levels

        results = []
        for found in load_levels(specs, level or ()):
            release, api = _release_api(found.level, api_check.names_of(found.level))
            disagreements = api_check.check_level(found.level, api, release.name)
            results.append((found.level.level, release.name, disagreements))
        total = sum(len(d) for _, _, d in results)
        if as_json:
            emit_json(
                {
                    "status": "ok" if not total else "failed",
                    "levels": [
                        {"level": name, "release": release, "disagreements": [d.to_json() for d in listed]}
                        for name, release, listed in results
                    ],
                }
            )
        else:
            for _, _, listed in results:
                for disagreement in listed:
                    sys.stderr.write(disagreement.format() + "\n")
            for name, release, listed in results:
                sys.stdout.write(f"ttlgen: level {name}: {len(listed)} disagreements with {release}\n")
        return ExitCode.OK if not total else ExitCode.FAILED

    raise typer.Exit(guarded(action, as_json))


@app.command("import")
def import_signatures(
    level: Annotated[str, typer.Option("--level", help="The API level to refresh.")],
    add: Annotated[list[str] | None, typer.Option("--add", help="Also declare this function of the release (repeatable).")] = None,
    specs: SpecsOption = Path("specs"),
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the refreshed spec instead of writing it.")] = False,
) -> None:
    """Refresh an API level's signatures, header paths, enumerations and defines from the
    headers of the release it pins.

    Every function the level's spec declares (and each --add) gets all the forms the release
    declares for it in its header, as the release writes them, with [[deprecated]] messages
    quoted; ttlgen's knowledge beside a signature (configures, formats, swap_sources) and the
    comments above it are kept. A function the release lacks is dropped. Prints what changed
    and what is left to do (a value for a new define in the emulation spec, a replacement
    under `removed`); `ttlgen upstream check` then reports 0 disagreements for what the
    import refreshes. Exit 1 when the refreshed level is not yet valid (its located errors
    follow: a form added back whose knowledge is for a person to state).
    """

    def action() -> int:
        from ttlgen.upstream import api_check, api_import
        from ttlgen.upstream.project import load_levels

        (found,) = load_levels(specs, [level])
        names = api_check.names_of(found.level) | frozenset(add or ())
        release, api = _release_api(found.level, names)
        text = found.path.read_text(encoding="utf-8")
        try:
            result = api_import.refresh(found.doc, text, found.level, api, release.name, add or ())
        except api_import.RefreshError as exc:
            raise UsageError(f"{found.path}: {exc}") from None
        if dry_run:
            sys.stdout.write(result.text)
        else:
            from ttlgen.cache import write_atomically

            mode = found.path.stat().st_mode
            write_atomically(found.path, result.text.encode("utf-8"))
            found.path.chmod(mode)  # the spec keeps its permissions
            changed = "refreshed" if result.text != text else "already up to date with"
            sys.stdout.write(f"ttlgen: {found.path}: {changed} {release.name}\n")
        for note in result.notes:
            sys.stderr.write(f"ttlgen: {note}\n")
        if dry_run:
            return ExitCode.OK
        # What the import could not decide may leave the level inconsistent (a form added
        # back whose knowledge is ttlgen's): its located errors, and exit 1.
        try:
            load_levels(specs, [level])
        except SpecErrors as exc:
            sys.stderr.write(exc.render() + "\n")
            sys.stderr.write(f"ttlgen: {found.path} is refreshed but not yet a valid level: fix the errors above by hand\n")
            return ExitCode.FAILED
        return ExitCode.OK

    raise typer.Exit(guarded(action, False))


def _release_api(level: Any, names: frozenset[str]) -> tuple[Any, Any]:
    """The release a level pins and its parsed headers (fetched on first use)."""
    from ttlgen.upstream.fetch import fetch as fetch_release
    from ttlgen.upstream.project import pinned
    from ttlgen.upstream.release_api import read_release

    release = pinned(level)
    return release, read_release(fetch_release(release), release.sha256, names)


def _outcome_json(outcome: Outcome) -> dict[str, Any]:
    unit = outcome.unit
    return {
        "kernel": unit.kernel.name,
        "source": unit.role,
        "processor": unit.processor.name,
        "flavour": unit.processor.role,
        "architecture": unit.arch.name,
        "level": unit.target.level,
        "release": unit.target.release.name,
        "error": outcome.error,
    }


def summary(outcomes: list[Outcome], others: list[str]) -> str:
    """How many units of each (level, architecture, processor) compile, one line per
    level and architecture."""
    counts: dict[tuple[str, str], dict[str, list[int]]] = {}
    for outcome in outcomes:
        unit = outcome.unit
        key = (f"level {unit.target.level} ({unit.target.release.name})", unit.arch.name)
        tally = counts.setdefault(key, {}).setdefault(unit.processor.label, [0, 0])
        tally[0] += outcome.ok
        tally[1] += 1
    good = sum(o.ok for o in outcomes)
    lines = [f"ttlgen: {good} of {len(outcomes)} units compile against their level's tt-metal headers\n"]
    for (level, arch), tallies in counts.items():
        parts = ", ".join(f"{label} {ok}/{total}" for label, (ok, total) in tallies.items())
        lines.append(f"  {level}, {arch}: {parts}\n")
    if others:
        lines.append(f"  not compiled: {', '.join(others)} (the check models tt-metal's tt-1xx JIT only)\n")
    return "".join(lines)
