"""The typed, immutable model every emitter reads. One module per domain."""
