"""The routing bench's files (bench/routing/): its population loads, its policies put every worker
on the simulated population, and its ladder is the one `ssw init sim` writes."""

from __future__ import annotations

import pytest

from stepswitch.agent.workers import is_simulated, worker_models
from stepswitch.policy.model import load_policy
from stepswitch.policy.starter import starter_policy
from stepswitch.registry.presets import SIM_PROVIDER, load_registry
from stepswitch.sim.population import load_population

from .conftest import REPO

ROUTING = REPO / "bench/routing"
POLICIES = sorted((ROUTING / "policies").glob("*.toml"))


def test_the_population_plays_every_model_of_the_sim_preset():
    population = load_population(ROUTING / "population.toml")
    assert set(population.models) == set(load_registry()[SIM_PROVIDER].models)


@pytest.mark.parametrize("path", POLICIES, ids=lambda p: p.stem)
def test_each_routing_policy_is_all_simulated_and_priced(path):
    policy = load_policy(path)
    assert is_simulated(policy)
    assert {w.provider for w in policy.workers.values()} == {SIM_PROVIDER}
    assert all(m.priced for m in worker_models(policy, load_registry()).values())


def test_the_routing_ladder_is_what_ssw_init_sim_writes():
    shipped = (ROUTING / "policies/sim-ladder.toml").read_text(encoding="utf-8")
    assert shipped == starter_policy(SIM_PROVIDER, load_registry())
