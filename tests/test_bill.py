"""The whole bill: every non-GPU line a stack costs (control plane, system nodes, NAT, load balancers per exposure
mode, volumes, bucket storage, log ingestion, traffic), each priced from the catalog's regional servicePrices or
unknown, usage-driven lines saying what they assume, and the totals split into GPU and the rest."""

from __future__ import annotations

import json
from datetime import date

import pytest
from conftest import engine_config
from plan_cache import stock_plan
from pydantic import ValidationError

from tritonfleet.clouds.aws.facts import EKS_EXTENDED_SUPPORT_USD_PER_CLUSTER_HOUR, eks_version
from tritonfleet.clouds.aws.support import usd_per_cluster_hour
from tritonfleet.core.bill import other_lines, priced_registered_lines, registered_lines, total
from tritonfleet.core.catalog import load_catalog, parse_catalog
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.cost import stack_cost
from tritonfleet.plan.document import cost_section
from tritonfleet.plan.text import plan_lines

LINES = (
    "control-plane", "system-nodes", "nat-gateways", "nat-processing", "volumes-boot", "volume-prometheus",
    "volume-grafana", "bucket-storage", "log-ingestion", "traffic-cross-zone", "traffic-egress",
)  # fmt: skip
TODAY = date(2026, 12, 5)


def config(stack: str, replace: tuple[str, str] | None = None, **keys):
    """A shipped stack's config with some keys replaced (values as Python data) or a text replaced everywhere."""
    raw = engine_config(stack)
    if replace:
        raw = {k: v.replace(*replace) for k, v in raw.items()}
    raw.update({f"tritonfleet:{key}": json.dumps(value) for key, value in keys.items()})
    return load_stack_config(raw, stack)


def lines_of(cfg) -> dict:
    return {line.line: line for line in other_lines(cfg, stack_cost(cfg), TODAY)}


@pytest.mark.parametrize("stack", ["dev", "staging", "prod", "gcp-dev", "gcp-prod"])
def test_every_shipped_stack_prices_every_line_and_splits_the_totals(stack):
    cost = stock_plan(stack)["cost"]
    assert [line["line"] for line in cost["otherLines"]] == list(LINES)
    for line in cost["otherLines"]:
        assert not isinstance(line["monthlyCeilingUsd"], str), line
        for price in line["prices"]:
            assert price["source"] in load_catalog().sources and price["regions"], price
    totals = cost["totals"]
    for pick in ("Floor", "Expected", "Ceiling"):
        assert totals[f"total{pick}Usd"] == pytest.approx(totals[f"gpu{pick}Usd"] + totals[f"other{pick}Usd"], abs=0.01)
    assert totals["gpuCeilingUsd"] == cost["monthlyCeilingUsd"]


def test_prod_lines_follow_its_resources_and_prices():
    cfg = config("prod")
    lines = lines_of(cfg)
    hours = 730
    # 3 system m6i.xlarge at $0.192/h, up to 6 in the node group; one NAT gateway per zone (protected); EKS's fee
    assert lines["system-nodes"].monthly_floor_usd == round(3 * 0.192 * hours, 2)
    assert lines["system-nodes"].monthly_ceiling_usd == round(6 * 0.192 * hours, 2)
    assert lines["nat-gateways"].monthly_ceiling_usd == round(3 * 0.045 * hours, 2)
    assert lines["control-plane"].monthly_ceiling_usd == 73.0
    assert "in extended support until upgraded" in lines["control-plane"].note
    assert lines["volume-prometheus"].monthly_ceiling_usd == 200 * 0.08
    assert lines["bucket-storage"].monthly_ceiling_usd == pytest.approx(93 * 2**30 / 1e9 * 0.023, abs=0.01)  # llm 73 + vision 20 GiB
    assert "usage.logGbPerMonth" in lines["log-ingestion"].assumption
    # no deployment is exposed: no load balancer line, and no internet egress
    assert not any(key.startswith("load-balancers") for key in lines)
    assert lines["traffic-egress"].monthly_ceiling_usd == 0.0


def test_the_control_plane_fee_rises_once_standard_support_ends():
    end = eks_version("1.35").end_of_standard
    assert usd_per_cluster_hour("1.35", end) == EKS_EXTENDED_SUPPORT_USD_PER_CLUSTER_HOUR
    assert usd_per_cluster_hour("1.35", date(end.year - 1, 1, 1)) == 0.10


def test_load_balancers_follow_each_exposure_mode_and_public_traffic_leaves_as_egress():
    deployments = json.loads(engine_config("prod")["tritonfleet:tritonDeployments"])
    deployments[0]["access"] = {"exposure": "internal", "clientCidrs": ["10.0.0.0/8"]}
    tls = {"certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/x"}
    deployments[1]["access"] = {"exposure": "public", "hostname": "v.example.com", "tls": tls, "restrictInference": True}
    cfg = config("prod", tritonDeployments=deployments)
    lines = lines_of(cfg)
    assert "1 network load balancer(s): llm" in lines["load-balancers-network"].what
    assert "1 application load balancer(s): vision" in lines["load-balancers-application"].what
    # vision's 3,000 inferences/s x 16 KiB responses a month leave to the internet at $0.09/GB
    egress = 3000 * 16384 * 730 * 3600 / 1e9 * 0.09
    assert lines["traffic-egress"].monthly_ceiling_usd == pytest.approx(egress, rel=1e-6)


def test_usage_assumptions_drive_the_usage_lines_and_are_shown():
    cfg = config("prod", usage={"inferencesPerSecond": 100, "requestBytes": 1000, "responseBytes": 1000,
                                "crossZoneShare": 0.5, "natGbPerMonth": 0, "logGbPerMonth": 10})
    lines = lines_of(cfg)
    cross = 100 * 2000 * 730 * 3600 / 1e9 * 0.5 * 2 * 0.01  # both sides of a cross-AZ byte are billed
    assert lines["traffic-cross-zone"].monthly_ceiling_usd == pytest.approx(cross, abs=0.01)
    assert "50% crosses zones (usage.crossZoneShare)" in lines["traffic-cross-zone"].assumption
    assert "100 inferences/s (usage.inferencesPerSecond)" in lines["traffic-cross-zone"].assumption
    assert lines["nat-processing"].monthly_ceiling_usd == 0.0
    assert lines["log-ingestion"].monthly_ceiling_usd == 5.0


def test_a_usage_value_out_of_bounds_is_refused_with_its_key():
    with pytest.raises(ConfigError, match="usage.crossZoneShare"):
        config("prod", usage={"crossZoneShare": 2})


def test_a_region_without_prices_leaves_every_line_unknown_never_borrowed():
    cfg = config("prod", replace=("us-east-1", "eu-west-1"))
    lines = lines_of(cfg)
    system = lines["system-nodes"]
    assert system.monthly_ceiling_usd is None and system.unknown == ("instance:m6i.xlarge",)
    assert system.charges[0].priced_elsewhere == ("us-east-1",)
    assert total(list(lines.values()), "ceiling") is None
    cost = cost_section(cfg)
    assert cost["totals"]["totalCeilingUsd"] == "unknown"
    assert cost["totals"]["otherKnownCeilingUsd"] == 73.0  # only the control plane's fee holds in every region
    text = "\n".join(line.text for line in plan_lines({**stock_plan("prod"), "cost": cost}, 200))
    assert "instance:m6i.xlarge unknown in eu-west-1 (priced in us-east-1 only)" in text
    assert "total ceiling" in text and "unknown (≥ $" in text


def test_gcp_lines_use_the_clouds_own_billing():
    lines = lines_of(config("gcp-prod"))
    assert "management fee" in lines["control-plane"].what
    assert {c.item for c in lines["volumes-boot"].charges} >= {"volume:pd-balanced"}
    assert "Cloud NAT for every node" in lines["nat-gateways"].what
    assert "x 2" not in lines["traffic-cross-zone"].assumption  # inter-zone traffic is billed once on GCP


def test_the_catalog_refuses_a_service_price_twice_in_a_region_or_without_its_source():
    from importlib import resources

    text = resources.files("tritonfleet.core").joinpath("catalog.yaml").read_text()
    row = "  - {cloud: aws, item: nat-gateway, unit: hour, usd: 0.045, source: AWSVPC, regions: [us-east-1], verify: true}\n"
    with pytest.raises(ValidationError, match="aws nat-gateway: two prices for us-east-1"):
        parse_catalog(text + row)
    with pytest.raises(ValidationError, match="unknown source NOPE"):
        parse_catalog(text + row.replace("AWSVPC", "NOPE").replace("us-east-1", "us-east-2"))


def test_the_pull_request_diff_shows_each_line_that_changes_and_the_totals():
    from tritonfleet.diff import compare_stack, report, to_json

    base = stock_plan("prod")
    head = {**base, "cost": cost_section(config("prod", usage={"logGbPerMonth": 550}))}
    diff = compare_stack(base, head)
    assert diff.status == "changed"
    [changed] = [line for line in diff.other_lines if line.changed]
    assert (changed.line, changed.monthly_ceiling.delta) == ("log-ingestion", 250.0)  # 500 GB more at $0.50/GB
    assert diff.total_ceiling.delta == 250.0 and not diff.monthly_ceiling.changed  # the GPU pools are unchanged
    markdown = report([diff])
    assert "**Other lines of the bill** (ceiling)" in markdown and "`log-ingestion`" in markdown
    assert "total ceiling $/month" in markdown
    document = to_json([diff])["stacks"][0]
    assert document["totalCeilingUsd"]["delta"] == 250.0
    assert {line["line"] for line in document["otherLines"]} == set(LINES)


def test_the_plan_says_when_the_whole_bill_is_over_the_budget():
    plan = stock_plan("staging")  # whole ceiling about $12,900: within its $14,000, over a $12,000 budget
    plan["cost"]["budget"]["monthlyUsd"] = 12000
    text = "\n".join(line.text for line in plan_lines(plan, 200))
    assert "The whole bill's ceiling ($12," in text and "is over the budget ($12,000.00)" in text
    assert "over the budget" not in "\n".join(line.text for line in plan_lines(stock_plan("staging"), 200))
    assert "over the budget" not in "\n".join(line.text for line in plan_lines(stock_plan("prod"), 200))


@pytest.mark.parametrize(("stack", "counted_from_resources"), [
    ("prod", {"control-plane", "system-nodes", "nat-gateways"}),
    ("gcp-prod", {"control-plane", "system-nodes"}),  # Cloud NAT bills per node-hour: no resource proves it
])  # fmt: skip
def test_the_lines_no_resource_proves_are_registered_and_priced_back_alike(stack, counted_from_resources):
    """The program registers these for the budget policies; priced back in the stack's region they are the plan's."""
    cfg = config(stack)
    lines = [line for line in other_lines(cfg, stack_cost(cfg), TODAY) if line.line not in counted_from_resources]
    registered = json.loads(json.dumps(registered_lines(cfg, other_lines(cfg, stack_cost(cfg), TODAY))))
    back = priced_registered_lines(registered, cfg.cloud, cfg.region)
    assert [line.line for line in back] == [line.line for line in lines]
    for pick in ("floor", "ceiling"):
        assert total(back, pick) == total(lines, pick)
    assert "usage.logGbPerMonth" in next(b for b in back if b.line == "log-ingestion").assumption


def test_a_registered_line_priced_outside_its_region_is_unknown():
    cfg = config("prod")
    registered = registered_lines(cfg, other_lines(cfg, stack_cost(cfg), TODAY))
    back = {line.line: line for line in priced_registered_lines(registered, cfg.cloud, "eu-west-3")}
    assert back["traffic-cross-zone"].monthly_ceiling_usd is None
    assert back["traffic-cross-zone"].unknown == ("cross-zone",)
