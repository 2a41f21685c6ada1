"""Ctrl-C ends any command with exit 130 and one line, whatever code it lands in.

Python turns SIGINT into KeyboardInterrupt wherever the interpreter happens to be, and
some code re-raises it as another exception (an interrupt inside a class body's
``__set_name__`` becomes a RuntimeError). The console entry installs `handler`, which
records the interrupt before raising it, so the CLI can tell an interrupted command from
a bug (exit 3) however the exception reaches it.
"""

from __future__ import annotations

# The builtin `_signal`, not `signal`: `signal` imports `enum`, and a Ctrl-C landing in that
# import, before the handler is in place, would print Python's traceback.
import _signal  # type: ignore[import-not-found]  # typeshed has no stub for the builtin

_requested = False


def handler(signum: int, frame: object) -> None:
    global _requested
    _requested = True
    raise KeyboardInterrupt


def install() -> None:
    _signal.signal(_signal.SIGINT, handler)


def requested() -> bool:
    return _requested
