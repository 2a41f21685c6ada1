"""Target lookup and runtime architecture discovery: the only architecture switch."""

from __future__ import annotations

from .diagnostics import TargetError
from .environment import TargetEnvironment
from .targets import ARCHITECTURE_DEFAULTS, NO_TARGET, REGISTRY, REJECTED
from .vocabulary import RUNTIME_ARCHITECTURE_NAMES, Architecture

_INSTANCES: dict[str, TargetEnvironment] = {}


def target_names() -> tuple[str, ...]:
    """Every recognized target name (rejected ones included), sorted."""
    return tuple(sorted({*REGISTRY, *REJECTED}))


def get_target(name: str | None = None) -> TargetEnvironment:
    """The environment for a target name; None selects the compiler-testing environment.

    Raises TargetError for an unknown name and, with the reason, for a recognized
    target that cannot be compiled for.
    """
    if name is None:
        if NO_TARGET is None:
            raise TargetError("no target given and the specs define no environment without an architecture")
        name = NO_TARGET
    found = _INSTANCES.get(name)
    if found is not None:
        return found
    cls = REGISTRY.get(name)
    if cls is None:
        if name in REJECTED:
            raise TargetError(f"target {name!r} is not supported: {REJECTED[name][1]}")
        raise TargetError(f"unknown target architecture {name!r}; known: {', '.join(target_names())}")
    env = cls()
    _INSTANCES[name] = env
    return env


def parse_architecture(name: str) -> Architecture:
    """An architecture from its typed name (``blackhole``) or runtime name, any case."""
    for arch in Architecture:
        if arch.value == name.lower():
            return arch
    return architecture_from_runtime_name(name)


def architecture_from_runtime_name(name: str) -> Architecture:
    """Map a runtime device-discovery name (WORMHOLE_B0, BLACKHOLE, ...; any case).

    An unknown name raises TargetError; it never selects another target.
    """
    upper = name.upper()
    for runtime_name, arch in RUNTIME_ARCHITECTURE_NAMES.items():
        if runtime_name.upper() == upper:
            return arch
    known = ", ".join(sorted(RUNTIME_ARCHITECTURE_NAMES))
    raise TargetError(f"unknown runtime architecture {name!r}; known: {known}")


def select_target(target: str | None = None, device_arch: str | None = None) -> TargetEnvironment:
    """The environment for a kernel's target attribute and its device's architecture.

    Both absent: the compiler-testing environment. Only the device: that
    architecture's default target. Both: they must name the same architecture.
    """
    device = parse_architecture(device_arch) if device_arch is not None else None
    if target is None:
        if device is None:
            return get_target(None)
        default = ARCHITECTURE_DEFAULTS.get(device)
        if default is None:
            raise TargetError(f"architecture {device.value!r} has no target environment")
        return get_target(default)
    if target not in REGISTRY and target not in REJECTED:
        # Accept an architecture name (or runtime name) for its default target.
        try:
            arch = parse_architecture(target)
        except TargetError:
            raise TargetError(f"unknown target architecture {target!r}; known: {', '.join(target_names())}") from None
        if arch in ARCHITECTURE_DEFAULTS:
            target = ARCHITECTURE_DEFAULTS[arch]
    if target in REJECTED and device is not None and REJECTED[target][0] is not device:
        raise _disagree(REJECTED[target][0].value, device)
    env = get_target(target)
    if device is not None and env.architecture is not device:
        raise _disagree(env.architecture.value if env.architecture else "none", device)
    return env


def _disagree(target_arch: str, device: Architecture) -> TargetError:
    return TargetError(
        f"target architecture {target_arch!r} disagrees with the device architecture {device.value!r}"
    )
