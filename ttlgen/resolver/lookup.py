"""Target lookup and runtime architecture discovery over one set of tables: the only
architecture switch."""

from __future__ import annotations

from collections.abc import Mapping

from .closest import did_you_mean
from .diagnostics import Diagnostic, ResolveFailure, TargetError
from .environment import Prepared, TargetEnvironment
from .kernel import KernelDescription
from .policy import normalize_policy
from .resolver import Plan, resolve
from .semantics import OpSemantics
from .tables import Tables


class Catalog:
    """Every target environment of one set of tables, selected by name or architecture."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        prepared = Prepared(tables)
        self._environments = {t.name: TargetEnvironment(t, prepared) for t in tables.targets}
        self._rejected = {r.name: r for r in tables.rejected}
        # The target chosen when only the device architecture is known.
        defaults = [(t.architecture, t.name, t.default_for_architecture) for t in tables.targets]
        defaults.extend((r.architecture, r.name, r.default_for_architecture) for r in tables.rejected)
        self._defaults = {arch: name for arch, name, default in defaults if default and arch is not None}

    @property
    def ops(self) -> Mapping[str, OpSemantics]:
        return self.tables.ops

    def target_names(self) -> tuple[str, ...]:
        """Every recognized target name (rejected ones included), sorted."""
        return tuple(sorted({*self._environments, *self._rejected}))

    def get_target(self, name: str | None = None) -> TargetEnvironment:
        """The environment for a target name; None selects the compiler-testing environment.

        Raises TargetError for an unknown name and, with the reason, for a recognized
        target that cannot be compiled for.
        """
        if name is None:
            if self.tables.no_target is None:
                raise TargetError("no target given and the specs define no environment without an architecture")
            name = self.tables.no_target
        found = self._environments.get(name)
        if found is not None:
            return found
        rejected = self._rejected.get(name)
        if rejected is not None:
            raise TargetError(f"target {name!r} is not supported: {rejected.reason}")
        raise self._unknown(name)

    def _unknown(self, name: str) -> TargetError:
        # TT-Lang's wording for an architecture without a target implementation.
        known = self.target_names()
        hint = did_you_mean(name, known)
        return TargetError(
            f"compute-kernel configuration is not implemented for target architecture {name!r}{hint}; "
            f"known targets: {', '.join(known)}"
        )

    def parse_architecture(self, name: str) -> str:
        """An architecture from its typed name (``blackhole``) or runtime name, any case."""
        for arch in self.tables.architectures:
            if arch.name == name.lower():
                return arch.name
        return self.architecture_from_runtime_name(name)

    def architecture_from_runtime_name(self, name: str) -> str:
        """Map a runtime device-discovery name (WORMHOLE_B0, BLACKHOLE, ...; any case).

        An unknown name raises TargetError; it never selects another target.
        """
        upper = name.upper()
        for arch in self.tables.architectures:
            if arch.runtime_name is not None and arch.runtime_name.upper() == upper:
                return arch.name
        runtime_names = sorted(a.runtime_name for a in self.tables.architectures if a.runtime_name)
        hint = did_you_mean(name, [*runtime_names, *(a.name for a in self.tables.architectures)])
        raise TargetError(f"unknown runtime architecture {name!r}{hint}; known: {', '.join(runtime_names)}")

    def select_target(self, target: str | None = None, device_arch: str | None = None) -> TargetEnvironment:
        """The environment for a kernel's target attribute and its device's architecture.

        Both absent: the compiler-testing environment. Only the device: that
        architecture's default target. Both: they must name the same architecture.
        """
        device = self.parse_architecture(device_arch) if device_arch is not None else None
        if target is None:
            if device is None:
                return self.get_target(None)
            default = self._defaults.get(device)
            if default is None:
                raise TargetError(f"architecture {str(device)!r} has no target environment")
            return self.get_target(default)
        if target not in self._environments and target not in self._rejected:
            # Accept an architecture name (or runtime name) for its default target.
            try:
                arch = self.parse_architecture(target)
            except TargetError:
                raise self._unknown(target) from None
            target = self._defaults.get(arch, target)
        rejected = self._rejected.get(target)
        if rejected is not None and device is not None and rejected.architecture != device:
            raise _disagree(rejected.architecture or "none", device)
        env = self.get_target(target)
        if device is not None and env.architecture != device:
            raise _disagree(env.architecture or "none", device)
        return env

    def resolve_kernel(
        self,
        kernel: KernelDescription,
        *,
        target: str | None = None,
        device_arch: str | None = None,
        options: Mapping[str, object] | None = None,
        attributes: Mapping[str, object] | None = None,
    ) -> Plan | ResolveFailure:
        """Target selection, policy normalization and resolution in one call."""
        try:
            env = self.select_target(target, device_arch)
        except TargetError as exc:
            return ResolveFailure((Diagnostic(None, None, exc.message),))
        policy = normalize_policy(options, attributes)
        if isinstance(policy, ResolveFailure):
            return policy
        return resolve(kernel, env, policy)


def _disagree(target_arch: str, device: str) -> TargetError:
    return TargetError(
        # TT-Lang's wording, then the two architectures.
        f"ttl.target_arch does not match the selected device arch (target architecture {str(target_arch)!r}, "
        f"device architecture {str(device)!r})"
    )
