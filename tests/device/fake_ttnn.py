"""A stand-in for the ``ttnn`` descriptor API that enforces upstream's field names and shapes.

The fields, defaults and types are those of tt-metal's ``program_descriptors.hpp``
(``MET/program_descriptors.hpp@002fa1c1``, tt-metal-api.md section 4.2) and
``ComputeConfigDescriptor``: every class takes keyword fields only, rejects a field
upstream does not have, and checks each value's shape (``runtime_args`` is a list of
``(CoreCoord, [uint32])`` pairs since PR #33911). ``TensorAccessorArgs(tensor)`` returns
a fixed compile-time word list per tensor so a test can see where they land.
"""

from __future__ import annotations

from typing import Any, ClassVar


class _Value:
    """An enumerator or data type: compared by identity, named for messages."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


class DataType(_Value):
    __slots__ = ()


float32 = DataType("float32")
bfloat16 = DataType("bfloat16")
bfloat8_b = DataType("bfloat8_b")


class MathFidelity:
    LoFi = _Value("LoFi")
    HiFi2 = _Value("HiFi2")
    HiFi3 = _Value("HiFi3")
    HiFi4 = _Value("HiFi4")


class UnpackToDestMode:
    Default = _Value("Default")
    UnpackToDestFp32 = _Value("UnpackToDestFp32")


class SourceType:
    FILE_PATH = _Value("FILE_PATH")
    SOURCE_CODE = _Value("SOURCE_CODE")


def _u32(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
        raise TypeError(f"{where}: expected a uint32, got {value!r}")
    return value


def _list_of(value: Any, kind: type | tuple[type, ...], where: str) -> list[Any]:
    if not isinstance(value, list) or not all(isinstance(v, kind) for v in value):
        raise TypeError(f"{where}: expected a list of {kind}, got {value!r}")
    return value


class _Descriptor:
    """Keyword fields only, each checked; unknown fields are a TypeError, as in the bindings."""

    __slots__: tuple[str, ...] = ()
    DEFAULTS: ClassVar[dict[str, Any]] = {}

    def __init__(self, **fields: Any) -> None:
        unknown = set(fields) - set(self.__slots__)
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown field(s) {sorted(unknown)}; fields: {list(self.__slots__)}")
        for name in self.__slots__:
            default = self.DEFAULTS.get(name)
            value = fields[name] if name in fields else list(default) if isinstance(default, list) else default
            setattr(self, name, self.check(name, value))

    def check(self, name: str, value: Any) -> Any:
        return value


class CoreCoord:
    __slots__ = ("x", "y")

    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = _u32(x, "CoreCoord.x"), _u32(y, "CoreCoord.y")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CoreCoord) and (self.x, self.y) == (other.x, other.y)

    def __hash__(self) -> int:
        return hash((self.x, self.y))


class CoreRange:
    __slots__ = ("end", "start")

    def __init__(self, start: CoreCoord, end: CoreCoord) -> None:
        if not isinstance(start, CoreCoord) or not isinstance(end, CoreCoord):
            raise TypeError("CoreRange(start, end) takes two CoreCoords")
        self.start, self.end = start, end


class CoreRangeSet:
    __slots__ = ("ranges",)

    def __init__(self, ranges: list[CoreRange]) -> None:
        self.ranges = _list_of(ranges, CoreRange, "CoreRangeSet")


class ReaderConfigDescriptor(_Descriptor):
    __slots__ = ()


class WriterConfigDescriptor(_Descriptor):
    __slots__ = ()


class ComputeConfigDescriptor(_Descriptor):
    __slots__ = ("bfp8_pack_precise", "dst_full_sync_en", "fp32_dest_acc_en", "math_approx_mode", "math_fidelity", "unpack_to_dest_mode")
    DEFAULTS: ClassVar[dict[str, Any]] = {"math_fidelity": MathFidelity.HiFi4, "fp32_dest_acc_en": False, "dst_full_sync_en": False, "unpack_to_dest_mode": [], "bfp8_pack_precise": False, "math_approx_mode": False}

    def check(self, name: str, value: Any) -> Any:
        if name == "math_fidelity":
            if value not in vars(MathFidelity).values():
                raise TypeError(f"ComputeConfigDescriptor.math_fidelity: expected a ttnn.MathFidelity, got {value!r}")
        elif name == "unpack_to_dest_mode":
            modes = vars(UnpackToDestMode).values()
            if not isinstance(value, list) or any(m not in modes for m in value):
                raise TypeError(f"ComputeConfigDescriptor.unpack_to_dest_mode: expected a list of ttnn.UnpackToDestMode, got {value!r}")
        elif not isinstance(value, bool):
            raise TypeError(f"ComputeConfigDescriptor.{name}: expected a bool, got {value!r}")
        return value


_CONFIGS = (ReaderConfigDescriptor, WriterConfigDescriptor, ComputeConfigDescriptor)


class KernelDescriptor(_Descriptor):
    __slots__ = ("common_runtime_args", "compile_time_args", "config", "core_ranges", "defines", "kernel_source", "named_compile_time_args", "opt_level", "runtime_args", "source_type")
    DEFAULTS: ClassVar[dict[str, Any]] = {"source_type": SourceType.FILE_PATH, "compile_time_args": [], "named_compile_time_args": [], "defines": [], "runtime_args": [], "common_runtime_args": []}

    def check(self, name: str, value: Any) -> Any:
        where = f"KernelDescriptor.{name}"
        if name == "kernel_source" and not isinstance(value, str):
            raise TypeError(f"{where}: expected a path or source string, got {value!r}")
        if name == "core_ranges" and not isinstance(value, CoreRangeSet):
            raise TypeError(f"{where}: expected a CoreRangeSet, got {value!r}")
        if name in ("compile_time_args", "common_runtime_args"):
            for v in _list_of(value, int, where):
                _u32(v, where)
        if name == "runtime_args":
            # vector<pair<CoreCoord, vector<uint32_t>>> (PR #33911)
            for item in _list_of(value, tuple, where):
                if len(item) != 2 or not isinstance(item[0], CoreCoord):
                    raise TypeError(f"{where}: expected (CoreCoord, [uint32]) pairs, got {item!r}")
                for v in _list_of(item[1], int, where):
                    _u32(v, where)
        if name == "config" and not isinstance(value, _CONFIGS):
            raise TypeError(f"{where}: expected a reader, writer or compute config descriptor, got {value!r}")
        return value


class CBFormatDescriptor(_Descriptor):
    __slots__ = ("buffer_index", "data_format", "page_size", "tile")
    DEFAULTS: ClassVar[dict[str, Any]] = {"buffer_index": 0, "data_format": float32, "page_size": 0, "tile": None}

    def check(self, name: str, value: Any) -> Any:
        if name == "buffer_index" and not (isinstance(value, int) and 0 <= value < 256):
            raise TypeError(f"CBFormatDescriptor.buffer_index: expected a uint8, got {value!r}")
        if name == "data_format" and not isinstance(value, DataType):
            raise TypeError(f"CBFormatDescriptor.data_format: expected a ttnn data type, got {value!r}")
        if name == "page_size":
            _u32(value, "CBFormatDescriptor.page_size")
        return value


class CBDescriptor(_Descriptor):
    __slots__ = ("address_offset", "buffer", "core_ranges", "format_descriptors", "global_circular_buffer", "remote_format_descriptors", "total_size")
    DEFAULTS: ClassVar[dict[str, Any]] = {"total_size": 0, "format_descriptors": [], "remote_format_descriptors": [], "address_offset": 0}

    def check(self, name: str, value: Any) -> Any:
        if name in ("total_size", "address_offset"):
            _u32(value, f"CBDescriptor.{name}")
        if name == "core_ranges" and not isinstance(value, CoreRangeSet):
            raise TypeError(f"CBDescriptor.core_ranges: expected a CoreRangeSet, got {value!r}")
        if name in ("format_descriptors", "remote_format_descriptors"):
            _list_of(value, CBFormatDescriptor, f"CBDescriptor.{name}")
        return value


class ProgramDescriptor(_Descriptor):
    __slots__ = ("cbs", "custom_program_hash", "kernels", "semaphores")
    DEFAULTS: ClassVar[dict[str, Any]] = {"kernels": [], "semaphores": [], "cbs": []}

    def check(self, name: str, value: Any) -> Any:
        kinds = {"kernels": KernelDescriptor, "cbs": CBDescriptor, "semaphores": object}
        if name in kinds:
            _list_of(value, kinds[name], f"ProgramDescriptor.{name}")
        return value


class TensorAccessorArgs:
    """The host's accessor arguments of a tensor: here two words naming it, to be traced."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Any) -> None:
        self.tensor = tensor

    def get_compile_time_args(self) -> list[int]:
        return [0xACC, int(self.tensor.buffer_address())]
