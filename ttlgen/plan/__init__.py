"""The plan stage: decisions that need the whole model.

It resolves every kernel's configuration (strategies, DST width and sync, unpack set) with
the resolver engine and lowers each kernel to kernel IR programs the kernel emitter prints.
It reads only the model (:mod:`ttlgen.model`) and renders nothing.
"""
