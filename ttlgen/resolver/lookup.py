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
from .tables import RejectedTarget, Tables

# TT-Lang's error for an architecture it has no compute-kernel configuration for
# (KernelTargetEnvironment::get), around the architecture's name as given. The generated
# C++ adapter prints the same text (ttlgen.plan.kernel_target_cpp takes it from here).
UNIMPLEMENTED_ARCHITECTURE = ("compute-kernel configuration is not implemented for target architecture ", "")


def unimplemented_architecture(name: str) -> str:
    before, after = UNIMPLEMENTED_ARCHITECTURE
    return f"{before}{name}{after}"


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
        """The architecture a name selects, spelled exactly as upstream prints it: its typed
        name, as TTCore prints ``ttl.target_arch`` (``blackhole``), or a name the runtime
        reports for it (``architecture_from_runtime_name``). Any other name, another case
        included, raises TargetError with TT-Lang's text for an unimplemented architecture.
        """
        for arch in self.tables.architectures:
            if arch.name == name:
                return arch.name
        found = self._from_runtime_name(name)
        if found is None:
            raise TargetError(unimplemented_architecture(name))
        return found

    def architecture_from_runtime_name(self, name: str) -> str:
        """Map a name runtime device discovery reports: tt-metal's architecture enumerator
        (``WORMHOLE_B0``, the spec's runtime name) or its lower case, the device name
        TT-Lang's runtime maps (``wormhole_b0``). Any other spelling raises TargetError; it
        never selects another target.
        """
        found = self._from_runtime_name(name)
        if found is None:
            runtime_names = sorted(a.runtime_name for a in self.tables.architectures if a.runtime_name)
            hint = did_you_mean(name, [*runtime_names, *(n.lower() for n in runtime_names)])
            raise TargetError(f"unknown runtime architecture {name!r}{hint}; known: {', '.join(runtime_names)} (or their lower case)")
        return found

    def _from_runtime_name(self, name: str) -> str | None:
        for arch in self.tables.architectures:
            if arch.runtime_name is not None and name in (arch.runtime_name, arch.runtime_name.lower()):
                return arch.name
        return None

    def _default_of(self, architecture: str) -> TargetEnvironment | RejectedTarget:
        """The target chosen when only the architecture is known: its environment, or the
        rejected record that refuses it. Raises TargetError (TT-Lang's text) when it has none."""
        default = self._defaults.get(architecture)
        if default is None:
            raise TargetError(unimplemented_architecture(architecture))
        rejected = self._rejected.get(default)
        return rejected if rejected is not None else self._environments[default]

    def dfb_capacity(self, architecture: str | None = None) -> int:
        """The number of dataflow-buffer indices of an architecture named as
        ``parse_architecture`` takes it (None: the compiler-testing environment's), as
        TT-Lang's TargetInfo.h gives it: a rejected architecture has one too. An unknown
        name raises TargetError."""
        if architecture is None:
            return self.get_target(None).dfb_capacity
        return self._default_of(self.parse_architecture(architecture)).dfb_capacity

    def select_target(self, target: str | None = None, device_arch: str | None = None) -> TargetEnvironment:
        """The environment for a kernel's target attribute and its device's architecture.

        Both absent: the compiler-testing environment. Only the device: that
        architecture's default target. Both: they must name the same architecture.
        """
        device = self.parse_architecture(device_arch) if device_arch is not None else None
        if target is None:
            if device is None:
                return self.get_target(None)
            default = self._default_of(device)
            if isinstance(default, RejectedTarget):
                # TT-Lang's text for a rejected architecture, as the C++ adapter prints it.
                raise TargetError(default.reason)
            return default
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
        policy = normalize_policy(options, attributes, env.table.generation)
        if isinstance(policy, ResolveFailure):
            return policy
        return resolve(kernel, env, policy)


def _disagree(target_arch: str, device: str) -> TargetError:
    return TargetError(
        # TT-Lang's wording, then the two architectures.
        f"ttl.target_arch does not match the selected device arch (target architecture {str(target_arch)!r}, "
        f"device architecture {str(device)!r})"
    )
