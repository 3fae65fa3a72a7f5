"""Prices per region or unknown: every catalog price lists the regions it holds for; a stack in another region gets
that region's price or "unknown" (prod then fails closed, as on any unknown price), never the reference figure."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from tests.gcp_helpers import decoded, encoded
from tritonfleet.core.catalog import load_catalog, parse_catalog
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.cost import stack_cost


def moved(stack: str, old: str, new: str):
    """A shipped stack moved to another region (its zones with it)."""
    return load_stack_config(encoded(json.loads(json.dumps(decoded(stack)).replace(old, new))), stack)


def test_every_price_lists_its_regions_and_a_price_without_them_is_refused():
    from importlib import resources

    catalog = load_catalog()
    for itype in catalog.instance_types:
        for price in [*itype.prices.values(), *itype.regional_prices]:
            assert price.regions, itype.name
    text = resources.files("tritonfleet.core").joinpath("catalog.yaml").read_text()
    unlisted = text.replace("{usd: 63.296, source: DSTK, regions: [us-east-1]}", "{usd: 63.296, source: DSTK}")
    with pytest.raises(ValidationError, match="regions"):
        parse_catalog(unlisted)
    twice = text.replace(
        "{option: on-demand, usd: 2.327, source: SKY7, regions: [eu-central-1]}",
        "{option: on-demand, usd: 2.327, source: SKY7, regions: [eu-central-1, us-east-1]}",
    )
    with pytest.raises(ValidationError, match="g6e.xlarge on-demand: two prices for us-east-1"):
        parse_catalog(twice)


@pytest.mark.parametrize(
    ("region", "on_demand", "spot"),
    [
        ("us-east-1", 1.861, 1.208),
        ("us-east-2", 1.861, None),  # the same on-demand figure in the source; its spot row not read: unknown
        ("eu-central-1", 2.327, 0.773),
        ("eu-north-1", 1.974, 0.680),
        ("eu-west-1", None, None),  # the source lists no g6e in eu-west-1
    ],
)
def test_a_type_is_priced_in_its_regions_only(region, on_demand, spot):
    g6e = load_catalog().find("aws", "g6e.xlarge")
    for option, expected in (("on-demand", on_demand), ("spot", spot), ("reservation", on_demand)):
        price = g6e.price(option, region)
        assert (price.usd if price else None) == expected, option


def test_gcp_prices_hold_in_us_central1_only():
    g2 = load_catalog().find("gcp", "g2-standard-8")
    assert g2.price("on-demand", "us-central1").usd == 0.85362
    assert g2.price("on-demand", "europe-west4") is None and g2.price("spot", "europe-west4") is None
    assert g2.priced_regions("on-demand") == ("us-central1",)


def test_a_stack_in_another_region_costs_that_regions_price_or_unknown():
    at_home = stack_cost(moved("prod", "us-east-1", "us-east-1"))
    frankfurt = stack_cost(moved("prod", "us-east-1", "eu-central-1"))
    l40s = next(p for p in frankfurt.pools if p.pool == "l40s")
    # 8 nodes at the ceiling (the burst falls back to on-demand), at eu-central-1's $2.327, not us-east-1's $1.861
    assert l40s.monthly_ceiling_usd == round(8 * 2.327 * 730, 2)
    assert l40s.monthly_ceiling_usd != next(p for p in at_home.pools if p.pool == "l40s").monthly_ceiling_usd
    h200 = next(p for p in frankfurt.pools if p.pool == "h200")
    assert h200.monthly_ceiling_usd is None and frankfurt.monthly_ceiling_usd is None  # p5en: us-east-1 only

    ireland = stack_cost(moved("prod", "us-east-1", "eu-west-1"))
    assert ireland.monthly_ceiling_usd is None and ireland.monthly_floor_usd is None
    assert {p.pool: p.unknown_prices for p in ireland.pools} == {"h200": ("on-demand", "spot"), "l40s": ("on-demand", "spot")}

    netherlands = stack_cost(moved("gcp-prod", "us-central1", "europe-west4"))
    assert netherlands.monthly_ceiling_usd is None
    assert all(p.unknown_prices for p in netherlands.pools)


def test_the_budget_policy_prices_in_the_stacks_region_and_prod_fails_closed():
    """The policy pack reads the region from the stack's provider resource, as `pulumi preview` hands it over."""
    from policies._pools import GpuPool, stack_region, stack_spend

    def provider(cloud: str, region: str) -> SimpleNamespace:
        return SimpleNamespace(resource_type=f"pulumi:providers:{cloud}", props={"region": region}, urn="u", name="p")

    assert stack_region([provider("aws", "eu-west-1")]) == "eu-west-1" and stack_region([]) is None
    pool = GpuPool(
        urn="u", name="tf-aws-gpu-l40s-base", cloud="aws", pool="l40s", instance_types=("g6e.xlarge",),
        purchase="on-demand", min_nodes=2, max_nodes=2, bounds_note="", gpus_per_node=1, taints=(),
    )
    assert pool.monthly_usd("ceiling") == round(2 * 1.861 * 730, 2)  # no region: the reference figure
    frankfurt = stack_spend([GpuPool(**{**pool.__dict__, "region": "eu-central-1"})], "ceiling")
    assert frankfurt.complete and frankfurt.known_usd == round(2 * 2.327 * 730, 2)
    ireland = stack_spend([GpuPool(**{**pool.__dict__, "region": "eu-west-1"})], "ceiling")
    assert not ireland.complete
    assert ireland.unpriced == ("tf-aws-gpu-l40s-base: no published on-demand price for g6e.xlarge in eu-west-1",)


def test_the_plan_says_where_an_unknown_price_is_known():
    from tritonfleet.plan.text import _purchase

    pool = {
        "nodes": {"on-demand": {"min": 2, "max": 5}},
        "prices": {"on-demand": "unknown"},
        "pricedElsewhere": {"on-demand": ["eu-central-1", "us-east-1"]},
    }
    assert _purchase(pool, "eu-west-1") == (
        "on-demand 2..5 at unknown price in eu-west-1 (priced in eu-central-1, us-east-1 only)"
    )
