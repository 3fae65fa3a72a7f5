"""The GPU catalog (every price sourced and dated, unknown stays unknown) and the one cost model."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from tritonfleet.core.capacity import NodeRange, split_capacity
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import GpuPool
from tritonfleet.core.cost import cost_per_million, stack_cost

# Prices we know were published; if one of these goes missing or becomes 0 the catalog broke.
KNOWN_PRICES = {
    ("aws", "g6e.xlarge", "on-demand"): 1.861,
    ("aws", "g6e.48xlarge", "on-demand"): 30.13118,
    ("aws", "p5.48xlarge", "on-demand"): 55.04,
    ("aws", "p5en.48xlarge", "on-demand"): 63.296,
    ("aws", "p5en.48xlarge", "spot"): 27.20,
    ("aws", "p5e.48xlarge", "capacity-block"): 43.26,
    ("gcp", "a3-highgpu-8g", "on-demand"): 87.83,
}


def test_every_price_has_a_source_and_a_date():
    catalog = load_catalog()
    for itype in catalog.instance_types:
        for option, price in itype.prices.items():
            source = catalog.sources[price.source]
            assert price.usd > 0, f"{itype.name} {option}"
            assert isinstance(source.as_of, dt.date) and source.title


@pytest.mark.parametrize("key,usd", KNOWN_PRICES.items(), ids=["/".join(k) for k in KNOWN_PRICES])
def test_known_prices_stay_known(key, usd):
    cloud, name, option = key
    price = load_catalog().find(cloud, name).price(option)
    assert price is not None and price.usd == usd


def test_unpublished_prices_are_unknown_not_zero():
    catalog = load_catalog()
    assert catalog.find("aws", "p6-b200.48xlarge").price("capacity-block") is None
    assert catalog.find("gcp", "a4-highgpu-8g").price("spot") is None


def test_catalog_covers_the_product_gpus():
    catalog = load_catalog()
    assert {"L40S", "H200", "B200", "L4", "H100"} <= set(catalog.gpus_on("aws"))
    assert "L40S" not in catalog.gpus_on("gcp") and {"H200", "B200", "L4"} <= set(catalog.gpus_on("gcp"))
    assert catalog.find("gcp", "a3-ultragpu-8g").accelerator == "nvidia-h200-141gb"
    assert catalog.find("gcp", "a4-highgpu-8g").accelerator == "nvidia-b200"
    assert "spot" not in catalog.find("aws", "p6-b200.48xlarge").purchase_options


def _pool(**kw) -> GpuPool:
    return GpuPool.model_validate({"name": "p", "gpu": "L40S", **kw})


@pytest.mark.parametrize(
    "pool,expected",
    [
        (dict(minNodes=0, maxNodes=4, spotShare=1), {"spot": NodeRange(0, 4)}),
        (dict(minNodes=0, maxNodes=4), {"on-demand": NodeRange(0, 4)}),
        (dict(minNodes=1, maxNodes=5, onDemandBase=1, spotShare=1), {"on-demand": NodeRange(1, 1), "spot": NodeRange(0, 4)}),
        (dict(minNodes=2, maxNodes=8, onDemandBase=2, spotShare=0.5), {"on-demand": NodeRange(2, 5), "spot": NodeRange(0, 3)}),
        (dict(minNodes=4, maxNodes=6, onDemandBase=1, spotShare=0.5), {"on-demand": NodeRange(3, 4), "spot": NodeRange(1, 2)}),
        (dict(minNodes=0, maxNodes=2, capacity="capacity-block", reservationId="cr-1"), {"capacity-block": NodeRange(0, 2)}),
    ],
)
def test_split_adds_up_to_the_pool(pool, expected):
    split = split_capacity(_pool(**pool)).purchase
    assert split == expected
    assert sum(r.min for r in split.values()) == pool["minNodes"]
    assert sum(r.max for r in split.values()) == pool["maxNodes"]


def test_prod_cost_matches_catalog_prices(stack_config):
    cost = stack_cost(stack_config("prod"))
    h200 = next(p for p in cost.pools if p.pool == "h200")
    # floor: llm's 2 minimum replicas on 2 p5en (hard node spread; zones), the on-demand base and a burst node, priced
    # as a bound like the ceiling: spot unavailable, so the burst node runs on-demand (Karpenter falls back);
    # expected: 24 replicas fill the 3 nodes, 1 on-demand + 2 spot
    assert h200.floor_nodes == 2 and h200.monthly_floor_usd == round(2 * 63.296 * 730, 2)
    assert h200.monthly_ceiling_usd == round(3 * 63.296 * 730, 2)
    assert h200.monthly_expected_ceiling_usd == round((63.296 + 2 * 27.20) * 730, 2)
    assert [(t.name, t.nodes, t.purchase) for t in h200.tiers] == [("base", 1, ("on-demand",)), ("burst", 2, ("spot", "on-demand"))]
    base, burst = h200.tiers
    assert (base.monthly_expected_usd, base.monthly_fallback_usd) == (round(63.296 * 730, 2),) * 2
    assert (burst.monthly_expected_usd, burst.monthly_fallback_usd) == (round(2 * 27.20 * 730, 2), round(2 * 63.296 * 730, 2))
    assert all(p.pool != "b200" for p in cost.pools)  # disabled pools cost nothing
    assert cost.max_gpus == 3 * 8 + 8 * 1  # each pool's maximum counted once


def test_the_ceiling_counts_each_pools_max_once_and_only_aws_falls_back(stack_config):
    for stack in ("dev", "staging", "prod", "gcp-dev", "gcp-prod"):
        config = stack_config(stack)
        for pc in stack_cost(config).pools:
            pool = config.pool(pc.pool)
            assert sum(t.nodes for t in pc.tiers) == pc.max_nodes == pool.max_nodes
            assert pc.monthly_ceiling_usd is None or pc.monthly_ceiling_usd >= pc.monthly_expected_ceiling_usd
            if (config.cloud == "gcp" or pool.on_demand_fallback is False) and pc.ceiling_nodes == pool.max_nodes:
                # GKE node pools never fall back (and dev opts out): the ceiling is the expected mix, as before
                assert not pc.falls_back and pc.monthly_ceiling_usd == pc.monthly_expected_ceiling_usd


def test_unknown_price_makes_the_total_unknown():
    from tests.gcp_helpers import decoded, encoded
    from tritonfleet.core.config import load_stack_config

    data = decoded("gcp-prod")
    b200 = next(p for p in data["gpuPools"] if p["name"] == "b200")
    b200.update(enabled=True, capacity="mixed", spotShare=1)  # a4-highgpu-8g has no known price
    data["gpuLimit"] = 48
    cost = stack_cost(load_stack_config(encoded(data), "gcp-prod"))
    assert cost.monthly_ceiling_usd is None
    spot_only = next(p for p in cost.pools if p.pool == "b200")
    assert spot_only.monthly_floor_usd == 0  # no nodes at the floor: known to be zero
    assert spot_only.monthly_ceiling_usd is None and spot_only.unknown_prices == ("spot",)


def test_an_acknowledged_assumed_price_prices_what_the_catalog_cannot():
    """gcp-prod with its B200 pool on (a4-highgpu-8g has no published price) and an assumedPrice: known, and said."""
    from tests.gcp_helpers import decoded, encoded
    from tritonfleet.core.config import load_stack_config

    data = decoded("gcp-prod")
    b200 = next(p for p in data["gpuPools"] if p["name"] == "b200")
    b200.update(enabled=True, capacity="mixed", spotShare=1, maxNodes=2, assumedPrice={"usdPerHour": 27.2, "note": "quote Q-1"})
    data["gpuLimit"] = 48
    cost = stack_cost(load_stack_config(encoded(data), "gcp-prod"))
    spot_only = next(p for p in cost.pools if p.pool == "b200")
    assert spot_only.monthly_ceiling_usd == round(2 * 27.20 * 730, 2)
    assert spot_only.unknown_prices == () and spot_only.assumed_prices == ("spot",)
    assert cost.monthly_ceiling_usd is not None


def test_cost_per_million():
    assert cost_per_million(1.861, 44904) == pytest.approx(0.01151, rel=1e-3)
    assert cost_per_million(None, 100) is None and cost_per_million(1.0, None) is None


def _catalog_text_with(old: str, new: str) -> str:
    from importlib import resources

    text = resources.files("tritonfleet.core").joinpath("catalog.yaml").read_text()
    assert old in text
    return text.replace(old, new)


def test_catalog_keys_are_valid_label_values():
    from tritonfleet.core.catalog import parse_catalog
    from tritonfleet.core.conventions import LABEL_VALUE_PATTERN

    catalog = load_catalog()
    for name in [*catalog.gpus, *(i.name for i in catalog.instance_types)]:
        assert re.fullmatch(LABEL_VALUE_PATTERN, name), name
    assert parse_catalog(_catalog_text_with("g6e.xlarge", "g6e.xlarge")) == catalog


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [("L40S:", "L40 S:", "GPU 'L40 S'"), ("name: g6e.xlarge", "name: g6e xlarge", "instance type 'g6e xlarge'")],
)
def test_a_catalog_key_with_a_space_is_refused(old, new, kind):
    from pydantic import ValidationError

    from tritonfleet.core.catalog import parse_catalog

    with pytest.raises(ValidationError) as error:
        parse_catalog(_catalog_text_with(old, new))
    assert f"{kind} is not a valid Kubernetes label value" in str(error.value)


def test_aws_network_bandwidth_and_host_are_ec2s_own_figures():
    """The catalog's AWS bandwidths are network card 0's baseline in moto's copy of EC2 DescribeInstanceTypes; its
    hosts' architecture and instance store (disks, total GB) are that copy's too."""
    import gzip
    import json
    from pathlib import Path

    import moto

    from tritonfleet.core.catalog import load_catalog

    data = json.loads(gzip.decompress((Path(moto.__file__).parent / "ec2/resources/instance_types.json.gz").read_bytes()))
    catalog = load_catalog()
    aws = [i for i in catalog.instance_types if i.cloud == "aws"]
    assert all(i.network is not None and i.network.source == "MOTO" for i in aws)
    for itype in aws:
        cards = data[itype.name]["NetworkInfo"]["NetworkCards"]
        assert itype.network.gbps == cards[0]["BaselineBandwidthInGbps"], itype.name
        store, local = data[itype.name]["InstanceStorageInfo"], itype.host.local_ssd
        assert itype.host.arch in data[itype.name]["ProcessorInfo"]["SupportedArchitectures"], itype.name
        assert local is not None and (local.disks, local.gb) == (store["Disks"][0]["Count"], store["TotalSizeInGB"])
    unknown = [i.name for i in catalog.instance_types if i.network is None]
    assert unknown == ["a3-highgpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g"], "unknown bandwidth stays unknown, never guessed"
