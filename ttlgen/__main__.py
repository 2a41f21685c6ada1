"""The command line: `python -m ttlgen`, and the `ttlgen` console script (pyproject.toml)."""

import sys

from ttlgen import interrupt


def main() -> None:
    # Before any heavy import: a Ctrl-C while the CLI and its libraries are still
    # importing ends the process as one during a command does (exit 130, one line).
    interrupt.install()
    if sys.stdout is None or sys.stderr is None:
        # A standard stream closed by the caller (`>&-`): Python then has no file to print
        # to, and the first file a command opened would take its descriptor.
        if sys.stderr is not None:
            sys.stderr.write("ttlgen: standard output is closed; send it somewhere, e.g. >/dev/null\n")
        raise SystemExit(2)
    try:
        from ttlgen.cli import main as run
    except BaseException:
        if not interrupt.requested():
            raise
        sys.stderr.write("ttlgen: interrupted\n")
        raise SystemExit(130) from None
    run()


if __name__ == "__main__":
    main()
