"""The generated host codec: command packing, range checks, decoders and limit units."""

from __future__ import annotations

import struct
from types import ModuleType

import pytest


def _words(data: bytes) -> tuple[int, ...]:
    return struct.unpack(f"<{len(data) // 4}I", data)


def test_pack_writes_the_sequence_into_all_four_chunks(kabi: ModuleType) -> None:
    command = kabi.Command(sequence=0x01020304, handler=9, flags=kabi.layout.FLAG_RESULT, slot=2,
                           first=5, count=3, args=tuple(range(100, 110)))
    data = command.pack()
    assert len(data) == kabi.layout.COMMAND_BYTES == 64
    words = _words(data)
    assert [words[i] for i in (0, 4, 8, 12)] == [0x01020304] * 4
    assert data[0:4] == bytes([4, 3, 2, 1])  # little-endian
    assert words[1] == 9 | kabi.layout.FLAG_RESULT << 8 | 2 << 16
    assert words[2] == 5 | 3 << 16
    assert [words[i] for i in (3, 5, 6, 7, 9, 10, 11, 13, 14, 15)] == list(range(100, 110))
    assert kabi.Command.landed(data)


def test_missing_arguments_are_zero(kabi: ModuleType) -> None:
    command = kabi.Command(sequence=1, handler=1, args=(5,))
    assert command.args == (5,) + (0,) * 9
    assert kabi.Command.unpack(command.pack()) == command


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"handler": 256}, r"handler 256 overflows its 8 bits in the hdr word \(0\.\.255\)"),
        ({"handler": -1}, r"handler -1 overflows its 8 bits"),
        ({"flags": 0x100}, r"flags 256 overflows its 8 bits"),
        ({"slot": 16}, r"slot 16 is out of range 0\.\.15 \(the ring region has 16 slots\)"),
        ({"count": 1 << 16}, r"count 65536 overflows its 16 bits in the group word \(0\.\.65535\)"),
        ({"first": 1 << 16}, r"first 65536 overflows its 16 bits"),
        ({"args": tuple(range(11))}, r"a command has at most 10 args words, got 11"),
        ({"args": (1 << 32,)}, r"args\[0\] 4294967296 does not fit in a 32-bit word"),
        ({"sequence": -1}, r"sequence -1 does not fit in a 32-bit word"),
        ({"handler": True}, r"handler must be an integer, got True"),
    ],
)
def test_out_of_range_fields_are_rejected_clearly(kabi: ModuleType, fields: dict[str, object], message: str) -> None:
    values: dict[str, object] = {"sequence": 1, "handler": 1, **fields}
    with pytest.raises(kabi.AbiError, match=message):
        kabi.Command(**values)
    assert issubclass(kabi.AbiError, ValueError)


def test_unpack_checks_the_length(kabi: ModuleType) -> None:
    with pytest.raises(kabi.AbiError, match="command must be 64 bytes, got 63"):
        kabi.Command.unpack(bytes(63))


def test_unpack_keeps_what_a_device_wrote(kabi: ModuleType) -> None:
    # A command found in a slot its header does not name is still decoded (the runtime
    # counts it in kStSlotWrong); only building a command checks the slot range.
    data = bytearray(kabi.Command(sequence=3, handler=1).pack())
    data[kabi.layout.COMMAND_HDR_OFFSET + 2] = 200
    command = kabi.Command.unpack(bytes(data))
    assert command.slot == 200
    assert command.pack() == bytes(data)


def test_decode_gave_up_names_code_and_where_as_the_runtime_prints_them(kabi: ModuleType) -> None:
    layout = kabi.layout
    word = layout.GAVE_LIMIT | layout.WHERE_DATA << 8 | 3 << 16
    gave = kabi.decode_gave_up(word, 17)
    assert (gave.code_name, gave.where_name, gave.slot, gave.port, gave.sequence) == ("limit", "data", 3, 0, 17)
    assert str(gave) == "code=limit where=data slot=3 port=0 sequence=17"
    emit = kabi.decode_gave_up(layout.GAVE_STOP | layout.WHERE_EMIT << 8 | 1 << 16 | 6 << 24, 9)
    assert (emit.code_name, emit.where_name, emit.port) == ("stop", "emit", 6)
    assert kabi.decode_gave_up(0, 0).code_name == "-"
    assert kabi.decode_gave_up((layout.WHERE_PORT - 1) << 8, 0).where_name == "16"  # a free code
    assert kabi.GaveUp(code=2, where=7, slot=3, sequence=17).pack() == word


def test_decode_state_names_every_word(kabi: ModuleType) -> None:
    layout = kabi.layout
    words = list(range(1000, 1000 + layout.ST_WORDS))
    words[layout.ST_WRITER] = layout.GAVE_LIMIT | layout.WHERE_CDONE << 8 | 5 << 16
    words[layout.ST_WRITER + 1] = 77
    words[layout.ST_ENDS] = layout.END_GAVE_UP | layout.END_ABORT << 8 | layout.END_EXIT << 16
    words[layout.ST_MAGIC] = 0x4B000000 | 0x1234 << 8 | 7
    state = kabi.decode_state(words)
    assert state.last == tuple(range(1000, 1016))
    assert state.reported == tuple(range(1016, 1032))
    assert (state.writer.code_name, state.writer.where_name, state.writer.slot, state.writer.sequence) == (
        "limit", "cdone", 5, 77)
    assert (state.runs, state.passes, state.next_cycles, state.completed, state.seen) == (1038, 1039, 1040, 1041, 1042)
    assert (state.wrong, state.slot_wrong, state.trace_dropped) == (1043, 1046, 1047)
    assert (state.ends.reader_name, state.ends.writer_name, state.ends.compute_name) == ("gave_up", "abort", "exit")
    assert (state.magic.tag, state.magic.me) == (0x1234, 7)
    with pytest.raises(kabi.AbiError, match="the state table has 48 words, got 47"):
        kabi.decode_state(words[:-1])
    words[layout.ST_MAGIC] = 0x4C000000
    with pytest.raises(kabi.AbiError, match="is not a magic word: its marker is 0x4c, not 0x4B"):
        kabi.decode_state(words)


@pytest.mark.parametrize(
    ("seconds", "mhz", "units"),
    [
        (0, 1000, 0),  # no limit
        (2.0, 1000, 1953125),  # exactly 2e9 cycles / 1024
        (120.0, 1350, 158203125),
        (1e-9, 1, 1),  # any positive limit is at least one unit
        (0.1, 1000, 97657),  # 97656.25 rounds up
        (1024 / 1e6, 1, 1),  # exactly one unit, no float error rounding it up to two
    ],
)
def test_limit_units_rounds_up(kabi: ModuleType, seconds: float, mhz: float, units: int) -> None:
    assert kabi.limit_units(seconds, mhz) == units


@pytest.mark.parametrize(
    ("seconds", "mhz", "message"),
    [
        (1e6, 1e6, r"more than a word holds \(4294967295\)"),
        (-1.0, 1000, r"not a finite number of seconds >= 0"),
        (float("inf"), 1000, r"not a finite number of seconds >= 0"),
        (1.0, 0, r"not a finite frequency > 0"),
    ],
)
def test_limit_units_rejects_what_a_word_cannot_hold(kabi: ModuleType, seconds: float, mhz: float, message: str) -> None:
    with pytest.raises(kabi.AbiError, match=message):
        kabi.limit_units(seconds, mhz)


def test_constants_carry_the_reference_values(kabi: ModuleType) -> None:
    layout = kabi.layout
    assert (layout.CONTROL_RING, layout.CONTROL_STATE, layout.CONTROL_BYTES) == (0, 0x640, 0x15C0)
    assert (layout.HANDLER_USER_MAX, layout.HANDLER_EXIT, layout.FLAG_EXCLUSIVE) == (239, 255, 2)
    assert (layout.ST_LAST, layout.ST_MAGIC, layout.ARGS, layout.COMPUTE_ARGS) == (0, 45, 19, 4)
    assert (layout.CB_TOKEN_COMPUTE, layout.CB_TOKEN_WRITER, layout.CB_TRACE, layout.LIMIT_CYCLES) == (29, 30, 31, 1024)
    assert layout.Gave.LIMIT == 2 and layout.GAVE_NAMES[2] == "limit"
    assert layout.Flag.EXCLUSIVE | layout.Flag.RESULT == 6


def test_program_builders_make_commands(kabi: ModuleType) -> None:
    import komorebi_abi.programs.mapcollect as mapcollect  # type: ignore[import-not-found]

    command = mapcollect.collect_command(sequence=8, slot=1, first=0, count=4, partials=0x1000, out=0x2000, port=3)
    assert (command.handler, command.flags) == (mapcollect.HANDLER_COLLECT, kabi.layout.FLAG_EXCLUSIVE | kabi.layout.FLAG_RESULT)
    assert command.args[:3] == (0x1000, 0x2000, 3)
    received = kabi.Command.unpack(command.pack())
    assert mapcollect.collect_args(received) == mapcollect.CollectArgs(partials=0x1000, out=0x2000, port=3)
    plain = mapcollect.map_command(sequence=9, slot=2, first=1, count=2, src=1, dst=2, tiles=3, scale=4)
    assert (plain.handler, plain.flags, mapcollect.map_args(plain).tiles) == (1, 0, 3)
    with pytest.raises(TypeError):
        mapcollect.map_command(sequence=9, slot=2, first=1, count=2, src=1, dst=2, tiles=3)  # scale missing
