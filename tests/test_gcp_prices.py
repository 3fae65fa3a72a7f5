"""GCP prices in the catalog: every GPU machine type has a dated, sourced price per way it is bought, and its region."""

from __future__ import annotations

import pytest

from tests.gcp_helpers import decoded, encoded
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.cost import stack_cost

# Machine types with no public price found (the reason lives in catalog.yaml): unknown, never 0, and in the README's
# VERIFY list. A stack using one shows an unknown ceiling.
UNPRICED = {"a4-highgpu-8g"}
GCP_TYPES = [i for i in load_catalog().instance_types if i.cloud == "gcp"]


@pytest.mark.parametrize("itype", GCP_TYPES, ids=lambda i: i.name)
def test_every_gcp_machine_type_has_a_base_and_a_spot_price_with_a_region(itype):
    if itype.name in UNPRICED:
        assert itype.prices == {} and itype.verify
        return
    base = itype.price("on-demand") if "on-demand" in itype.purchase_options else itype.price("reservation")
    spot = itype.price("spot")
    assert base is not None and spot is not None, itype.name
    for price in (base, spot):
        assert price.regions == ("us-central1",) and load_catalog().sources[price.source].as_of.year >= 2026
    assert spot.usd < base.usd


def test_g2_prices_include_the_attached_l4s():
    """A G2 price is the machine type's, L4s included: one L4 alone costs more than the 8-vCPU host."""
    g2 = {i.name: i for i in GCP_TYPES if i.name.startswith("g2-")}
    assert g2["g2-standard-8"].price("on-demand").usd == pytest.approx(0.29358 + 0.56004)
    assert g2["g2-standard-48"].price("on-demand").usd == pytest.approx(1.7615 + 4 * 0.56004)
    assert g2["g2-standard-8"].price("on-demand").usd < g2["g2-standard-16"].price("on-demand").usd


def test_machine_types_not_sold_on_demand_carry_no_on_demand_price():
    for itype in GCP_TYPES:
        if "on-demand" not in itype.purchase_options:
            assert "on-demand" not in itype.prices, itype.name


@pytest.mark.parametrize("stack", ["gcp-dev", "gcp-prod"])
def test_shipped_gcp_stacks_have_numeric_ceilings(stack):
    cost = stack_cost(load_stack_config(encoded(decoded(stack)), stack))
    assert isinstance(cost.monthly_ceiling_usd, float) and cost.monthly_ceiling_usd > 0
