"""A target is composed in the model from its architecture spec, its runtime API and its relations.

Each fact is stated once (architecture facts in specs/targets/architectures/, API facts in
specs/targets/runtime_apis.yaml); the composed Target records carry them for every stage that
reads targets. The located errors of bad compositions are bad-spec cases under
tests/fixtures/bad_specs/targets/.
"""

from __future__ import annotations

import pytest

from tests.conftest import real_project, spec_data
from ttlgen.model.targets import NO_ARCHITECTURE, NO_RUNTIME_API, Target, TargetsModel


@pytest.fixture(scope="module")
def targets() -> TargetsModel:
    return real_project().targets


def target(model: TargetsModel, name: str) -> Target:
    (found,) = [t for t in model.targets if t.name == name]
    return found


def test_targets_of_one_architecture_share_its_facts_and_differ_by_api(targets: TargetsModel) -> None:
    ccd, gen1 = target(targets, "blackhole"), target(targets, "blackhole_gen1_config")
    assert ccd.dfb_capacity == gen1.dfb_capacity == 64
    assert ccd.full_fp32 == gen1.full_fp32
    assert ccd.runtime_architecture_name == gen1.runtime_architecture_name == "BLACKHOLE"
    assert (ccd.unpack_other_entries, ccd.unpack_unbound_entries) == ("inert", "accept")
    assert (gen1.unpack_other_entries, gen1.unpack_unbound_entries) == ("require_32bit_dest", "reject")


def test_the_architecture_names_its_default_target(targets: TargetsModel) -> None:
    defaults = {t.architecture: t.name for t in targets.targets if t.default_for_architecture}
    # The one its spec names; a rejected architecture's is the rejected target named after it.
    stated = {a["name"]: a.get("default_target", a["name"]) for a in spec_data("ttlgen.architecture")}
    assert defaults == stated
    assert defaults["quasar"] == "quasar"


def test_a_rejected_architecture_is_one_rejected_target_named_after_it(targets: TargetsModel) -> None:
    quasar = target(targets, "quasar")
    assert quasar.rejected is not None and "Gen2 configuration and launch APIs" in quasar.rejected
    assert (quasar.architecture, quasar.runtime_architecture_name, quasar.runtime_api) == ("quasar", "QUASAR", NO_RUNTIME_API)
    assert quasar.sources == ("specs/targets/architectures/quasar.yaml",)


def test_the_environment_without_an_architecture_states_its_own_facts(targets: TargetsModel) -> None:
    assert targets.no_target is not None
    none = targets.no_target
    assert (none.architecture, none.runtime_api, none.dfb_capacity) == (NO_ARCHITECTURE, NO_RUNTIME_API, 32)
    assert all(s.supported for s in none.full_fp32)
    # The vocabulary declares the resolver generation it follows.
    assert none.sources == ("specs/ops/vocabulary.yaml", "specs/targets/gen1_llk.yaml", "specs/targets/no_target.yaml")


def test_a_target_names_every_spec_it_is_composed_from(targets: TargetsModel) -> None:
    assert target(targets, "wormhole_b0_gen1_config").sources == (
        "specs/ops/vocabulary.yaml",  # its resolver generation
        "specs/targets/architectures/wormhole_b0.yaml",
        "specs/targets/gen1_llk.yaml",
        "specs/targets/runtime_apis.yaml",
        "specs/targets/wormhole_b0_gen1_config.yaml",
    )


def test_architectures_are_the_declared_ones_with_their_runtime_names(targets: TargetsModel) -> None:
    declared = sorted((a["name"], a.get("runtime_name")) for a in spec_data("ttlgen.architecture"))
    assert list(targets.architectures) == declared
    assert {("blackhole", "BLACKHOLE"), ("quasar", "QUASAR"), ("wormhole_b0", "WORMHOLE_B0")} <= set(declared)
