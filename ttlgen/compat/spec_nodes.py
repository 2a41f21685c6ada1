"""Where two versions of a spec node differ: the deepest keys and list items that changed.

A capability is modelled from several files (a target from its own spec, its
architecture's and its runtime API's), and its model objects carry a mark for the object,
not for each fact. Comparing the documents under the node a fact comes from finds the key
that was edited (``full_fp32.matmul.supported``), so a change is located there on both
sides rather than at the object or the file.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Sequence

from ttlgen.compat.changes import Location
from ttlgen.compat.sides import Side
from ttlgen.errors import KeyPath

Differ = tuple[KeyPath | None, KeyPath | None]  # the node at each side; None: that side lacks it


def _at(data: object, path: KeyPath) -> tuple[bool, object]:
    for part in path:
        if isinstance(data, dict):
            if part not in data:
                return False, None
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        else:
            return False, None
    return True, data


def canonical(value: object) -> str:
    """A spec value as comparable text (mappings in key order)."""
    return json.dumps(value, sort_keys=True, default=str)


def align(before: Sequence[object], after: Sequence[object]) -> Iterator[tuple[int | None, int | None]]:
    """Two lists of comparable items aligned by content, as (index before, index after) for
    every item that differs: both for an item changed in place, one for an item removed or
    added. So removing the first item is that item removed, not every item changed."""
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(paired):
            yield i1 + k, j1 + k
        for i in range(i1 + paired, i2):
            yield i, None
        for j in range(j1 + paired, j2):
            yield None, j


def differing(old: object, new: object, path: KeyPath = (), new_path: KeyPath | None = None) -> Iterator[Differ]:
    """The deepest nodes where ``old`` (at ``path``) and ``new`` (at ``new_path``, the same
    by default) differ, in document order.

    Lists are aligned by content, so removing the first item is that item removed, not
    every item changed; an item's path can differ between the sides."""
    at_new = path if new_path is None else new_path
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            if key not in new:
                yield (*path, key), None
            elif key not in old:
                yield None, (*at_new, key)
            else:
                yield from differing(old[key], new[key], (*path, key), (*at_new, key))
        return
    if isinstance(old, list) and isinstance(new, list):
        for i, j in align([canonical(v) for v in old], [canonical(v) for v in new]):
            if i is not None and j is not None:
                yield from differing(old[i], new[j], (*path, i), (*at_new, j))
            else:
                yield ((*path, i) if i is not None else None), ((*at_new, j) if j is not None else None)
        return
    yield path, at_new


def _existing(data: object, path: KeyPath) -> KeyPath:
    """The deepest node of ``path`` that ``data`` has."""
    while path and not _at(data, path)[0]:
        path = path[:-1]
    return path


def changed_at(
    old: Side, new: Side, nodes: Sequence[tuple[str, KeyPath]], skip: Sequence[tuple[str, KeyPath]] = ()
) -> tuple[Location, Location] | None:
    """Where the first difference under the (file, node) ``nodes`` is on each side, skipping
    what is under the ``skip`` nodes (reported elsewhere); None when they do not differ.

    A key or item only one side has is located on the other side at the node that holds
    it there (the mapping it was added to, the list it was removed from)."""
    for file, node in nodes:
        before, after = old.locator.by_file.get(file), new.locator.by_file.get(file)
        if before is None or after is None:
            continue
        _, old_data = _at(before.data, node)
        _, new_data = _at(after.data, node)
        for old_path, new_path in differing(old_data, new_data, node):
            at = old_path if old_path is not None else new_path
            assert at is not None
            if any(file == f and at[: len(p)] == p for f, p in skip):
                continue
            # The side without the node: the node that holds it on the side with it.
            old_path = old_path if old_path is not None else _existing(before.data, at[:-1])
            new_path = new_path if new_path is not None else _existing(after.data, at[:-1])
            return old.at(file, old_path), new.at(file, new_path)
    return None
