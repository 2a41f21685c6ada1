"""ttlgen: versioned spec files in, deterministic generated code out."""

__version__ = "0.1.0"
