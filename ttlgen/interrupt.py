"""Ctrl-C ends any command with exit 130 and one line, whatever code it lands in.

Python turns SIGINT into KeyboardInterrupt wherever the interpreter happens to be, and
some code re-raises it as another exception (an interrupt inside a class body's
``__set_name__`` becomes a RuntimeError). The console entry installs `handler`, which
records the interrupt before raising it, so the CLI can tell an interrupted command from
a bug (exit 3) however the exception reaches it.

Where Python cannot raise (a ``__del__``, a weak reference's callback such as the import
lock's), it prints the exception as "Exception ignored in ..." with a traceback and goes on
as if nothing happened. `install` also hooks those: an interrupt that lands there is said
nowhere and delivered again a moment later, wherever the main thread is then.
"""

from __future__ import annotations

# The builtin `_signal`, not `signal`: `signal` imports `enum`, and a Ctrl-C landing in that
# import, before the handler is in place, would print Python's traceback.
import _signal  # type: ignore[import-not-found]  # typeshed has no stub for the builtin
import sys
from types import FrameType

# Long enough for the call that swallowed the interrupt to return, short enough that no one
# sees the command go on.
_REDELIVER_S = 0.001
_requested = False


def handler(signum: int, frame: FrameType | None) -> None:
    global _requested
    _requested = True
    if _in_hook(frame):
        # Raised here, the interrupt would be reported as the hook's own failure.
        _redeliver()
        return
    raise KeyboardInterrupt


def _in_hook(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code is _unraisable.__code__:
            return True
        frame = frame.f_back
    return False


def _redeliver() -> None:
    # Python runs signal handlers in the main thread only, so this is the main thread.
    _signal.signal(_signal.SIGALRM, handler)
    _signal.setitimer(_signal.ITIMER_REAL, _REDELIVER_S)


def _unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    if unraisable.exc_type is KeyboardInterrupt and _requested:
        _redeliver()
        return
    sys.__unraisablehook__(unraisable)


def install() -> None:
    _signal.signal(_signal.SIGINT, handler)
    sys.unraisablehook = _unraisable


def requested() -> bool:
    return _requested
