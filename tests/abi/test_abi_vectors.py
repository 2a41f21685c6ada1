"""Cross-language vectors: the Python codec and a C program built against km_abi.h agree
on the bytes of commands and on the decoding of gave-up and state words, both ways."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path
from types import ModuleType

import pytest


def _ask(binary: Path, requests: list[str]) -> list[str]:
    run = subprocess.run(
        [str(binary)], input="".join(r + "\n" for r in requests), capture_output=True, text=True, check=True, timeout=60
    )
    answers = run.stdout.splitlines()
    assert len(answers) == len(requests)
    assert "error" not in answers
    return answers


def _commands(kabi: ModuleType) -> list[object]:
    rng = random.Random(20260)
    layout = kabi.layout
    edge = [
        kabi.Command(sequence=1, handler=layout.HANDLER_NOP),
        kabi.Command(sequence=0xFFFFFFFF, handler=layout.HANDLER_EXIT, flags=0xFF, slot=15,
                     first=0xFFFF, count=0xFFFF, args=(0xFFFFFFFF,) * 10),
        kabi.Command(sequence=2, handler=layout.HANDLER_USER_MAX, flags=layout.FLAG_EXCLUSIVE | layout.FLAG_RESULT,
                     slot=3, first=4, count=2, args=(1, 2)),
    ]
    randomised = [
        kabi.Command(
            sequence=rng.randrange(1 << 32),
            handler=rng.randrange(256),
            flags=rng.randrange(256),
            slot=rng.randrange(layout.CONTROL_RING_SLOTS),
            first=rng.randrange(1 << 16),
            count=rng.randrange(1 << 16),
            args=tuple(rng.randrange(1 << 32) for _ in range(rng.randrange(11))),
        )
        for _ in range(60)
    ]
    return edge + randomised


def _fields(command: object) -> list[int]:
    c = command
    return [c.sequence, c.handler, c.flags, c.slot, c.first, c.count, *c.args]  # type: ignore[attr-defined]


def test_python_pack_equals_c_pack(kabi: ModuleType, vectors_binary: Path) -> None:
    commands = _commands(kabi)
    answers = _ask(vectors_binary, ["pack " + " ".join(map(str, _fields(c))) for c in commands])
    for command, hexed in zip(commands, answers, strict=True):
        assert bytes.fromhex(hexed) == command.pack(), command  # type: ignore[attr-defined]


def test_c_unpacks_python_bytes_and_python_unpacks_c_bytes(kabi: ModuleType, vectors_binary: Path) -> None:
    commands = _commands(kabi)
    # Python -> C: C decodes the bytes Python packed into the same fields, landed.
    answers = _ask(vectors_binary, ["unpack " + c.pack().hex() for c in commands])  # type: ignore[attr-defined]
    for command, answer in zip(commands, answers, strict=True):
        assert [int(v) for v in answer.split()] == [1, *_fields(command)]
    # C -> Python: Python decodes the bytes C packed into the same command.
    packed = _ask(vectors_binary, ["pack " + " ".join(map(str, _fields(c))) for c in commands])
    for command, hexed in zip(commands, packed, strict=True):
        assert kabi.Command.unpack(bytes.fromhex(hexed)) == command


@pytest.mark.parametrize("land", ["land1", "land2", "land3"])
def test_a_command_that_has_not_landed_is_rejected_by_both(kabi: ModuleType, vectors_binary: Path, land: str) -> None:
    command = kabi.Command(sequence=41, handler=5, args=(7,))
    data = bytearray(command.pack())
    offset = getattr(kabi.layout, f"COMMAND_{land.upper()}_OFFSET")
    data[offset] ^= 0x01  # the copy still holds the previous sequence's low bit
    (answer,) = _ask(vectors_binary, ["unpack " + data.hex()])
    assert answer.split()[0] == "0"
    with pytest.raises(kabi.NotLandedError, match=rf"has not landed: {land} is 40 but sequence is 41"):
        kabi.Command.unpack(bytes(data))


def _gave_words(kabi: ModuleType) -> list[tuple[int, int]]:
    gave = kabi.GaveUp
    layout = kabi.layout
    return [
        (0, 0),
        (gave(code=layout.GAVE_LIMIT, where=layout.WHERE_DATA, slot=3).pack(), 17),
        (gave(code=layout.GAVE_STOP, where=layout.WHERE_PORT, slot=15, port=7).pack(), 0xFFFFFFFF),
        (gave(code=layout.GAVE_BAD_BROADCAST, where=layout.WHERE_BROADCASTFREE).pack(), 2),
        (0xFFFFFFFF, 1),
    ]


def test_gave_up_words_decode_alike(kabi: ModuleType, vectors_binary: Path) -> None:
    words = _gave_words(kabi)
    answers = _ask(vectors_binary, [f"gave {w} {s}" for w, s in words])
    for (word, sequence), answer in zip(words, answers, strict=True):
        g = kabi.decode_gave_up(word, sequence)
        assert [int(v) for v in answer.split()] == [g.code, g.where, g.slot, g.port, g.sequence]


def test_state_words_decode_alike(kabi: ModuleType, vectors_binary: Path) -> None:
    rng = random.Random(7)
    layout = kabi.layout
    words = [rng.randrange(1 << 32) for _ in range(layout.ST_WORDS)]
    words[layout.ST_ENDS] = kabi.Ends(reader=layout.END_EXIT, writer=layout.END_GAVE_UP, compute=layout.END_ABORT).pack()
    words[layout.ST_MAGIC] = kabi.Magic(me=12, tag=0xBEEF).pack()
    (answer,) = _ask(vectors_binary, ["state " + " ".join(map(str, words))])
    state = kabi.decode_state(words)
    expected = ["last", *state.last, "reported", *state.reported]
    for kernel in ("reader", "writer", "compute"):
        g = getattr(state, kernel)
        expected += [kernel, g.code, g.where, g.slot, g.port, g.sequence]
    for name in ("runs", "passes", "next_cycles", "completed", "seen", "wrong"):
        expected += [name, getattr(state, name)]
    expected += ["ends", state.ends.reader, state.ends.writer, state.ends.compute]
    expected += ["magic", layout.MAGIC_MARKER, state.magic.tag, state.magic.me]
    expected += ["slot_wrong", state.slot_wrong, "trace_dropped", state.trace_dropped]
    assert answer.split() == [str(v) for v in expected]
    assert (state.ends.reader_name, state.ends.writer_name, state.ends.compute_name) == ("exit", "gave_up", "abort")
    assert (state.magic.me, state.magic.tag) == (12, 0xBEEF)
