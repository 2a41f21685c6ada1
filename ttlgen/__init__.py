"""ttlgen: versioned spec files in, deterministic generated code out."""

from ttlgen import dataclass_code

__version__ = "0.1.0"

# Before any module of ttlgen defines a record (see dataclass_code).
dataclass_code.install()
