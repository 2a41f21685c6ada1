"""The command line: `python -m ttlgen`, and the `ttlgen` console script (pyproject.toml)."""

import sys


def main() -> None:
    # A Ctrl-C while the CLI and its libraries are still importing ends the process as one
    # during a command does (exit 130, one line), not with a traceback from an import.
    try:
        from ttlgen.cli import interrupted
        from ttlgen.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("ttlgen: interrupted\n")
        raise SystemExit(130) from None
    try:
        run()
    except KeyboardInterrupt:  # between the CLI's own handler and the exit
        interrupted()


if __name__ == "__main__":
    main()
