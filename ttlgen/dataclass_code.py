"""Compiled dataclass methods, kept between runs.

`@dataclass` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and
(frozen) ``__setattr__``/``__delattr__`` as source text and compiles it at every import:
about a thousand small compilations for ttlgen's records, measured at 40% of the time a
`ttlgen build` spends importing ttlgen. The text fully determines the code object
(dataclasses executes it with the class's module as globals and compiles nothing else),
so the code compiled from a text is recorded under that text (marshal, per bytecode
version, with the hash of the whole) and reused by later processes; what runs is the same
code either way.

Only classes of ttlgen's own modules go through the record; every other dataclass
is compiled as the standard library does. As every cache under `ttlgen.cache`, it is off
with TTLGEN_NO_CACHE=1 and a damaged or unwritable record only costs time.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
from pathlib import Path
from types import CodeType
from typing import Any

# Imported for their functions only; `ttlgen.cache` imports no dataclass of ttlgen's.
from ttlgen import cache

# A process that compiled anything writes back everything known, so that processes which
# import different parts of ttlgen never drop each other's methods; past this many
# (about four versions of every record), it keeps only what it used itself, so edits
# to ttlgen's records do not grow the file forever.
_LIMIT = 4096

_known: dict[str, CodeType] = {}
_used: dict[str, CodeType] = {}
_compiled = 0


def _record_path() -> Path:
    return cache.cache_root() / "dataclass-code" / f"{importlib.util.MAGIC_NUMBER.hex()}.marshal"


def _is_ttlgen_module(namespace: object) -> bool:
    if not isinstance(namespace, dict):
        return False
    name = namespace.get("__name__")
    return isinstance(name, str) and (name == "ttlgen" or name.startswith("ttlgen."))


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """`exec` as dataclasses calls it: the source text of a function factory."""
    global _compiled
    if isinstance(source, str) and _is_ttlgen_module(globals):
        code = _known.get(source)
        if code is None:
            # dont_inherit: compile as `exec` in dataclasses would, without this
            # module's `from __future__ import annotations`.
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _known[source] = code
            _compiled += 1
        _used[source] = code
        source = code
    builtins.exec(source, globals, locals)


def _save() -> None:
    if _compiled == 0:
        return
    kept = _known if len(_known) <= _LIMIT else _used
    with contextlib.suppress(OSError, ValueError):  # an unwritable cache only costs time
        cache.write_sealed(_record_path(), marshal.dumps(dict(sorted(kept.items()))))


def install() -> None:
    """Route dataclasses' compilations through the record. Does nothing if caching is off
    or this Python's dataclasses compiles in a way the record does not know."""
    if not cache.enabled():
        return
    if getattr(dataclasses, "exec", builtins.exec) is not builtins.exec:
        return  # already installed, or somebody else's hook: leave it alone
    # Code from the record runs as ttlgen's own: a damaged record is compiled afresh.
    loaded = cache.read_marshalled(_record_path())
    if isinstance(loaded, dict):
        _known.update(
            (text, code) for text, code in loaded.items() if isinstance(text, str) and isinstance(code, CodeType)
        )
    # dataclasses looks `exec` up in its module globals before the builtins.
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    atexit.register(_save)
