"""The command line: `python -m ttlgen`, and the `ttlgen` console script (pyproject.toml)."""

import gc


def main() -> None:
    # Importing the CLI and the libraries it needs allocates tens of thousands of objects
    # that live as long as the process; the cycle collector's passes over them while they
    # are imported find nothing to free. They are imported with it off, then frozen out of
    # its sight, and it is on again for the command (ttlgen.cli decides per command).
    gc.disable()
    from ttlgen.cli import main as run

    gc.freeze()
    gc.enable()
    run()


if __name__ == "__main__":
    main()
