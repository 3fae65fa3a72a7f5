"""Capacity preflight for an AWS stack, before any `pulumi up`: are the instance types offered in the chosen zones,
do the EC2 vCPU quotas cover the stack's ceiling, and what does spot cost right now.

Uses boto3 with the standard credential chain and endpoint settings (AWS_ENDPOINT_URL points it at a local
emulator). No Pulumi here. A check the API cannot answer is reported as unknown with the reason, never as passed.

It checks the capacity the AWS adapter would ask for: the Karpenter NodePools' instance types come from the adapter's
pure decisions (components/aws/node_pools.py: burst_instance_types; layout.py: system_instance_type), imported at call
time so this package never loads components at module load.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from tritonfleet.clouds.aws.facts import NAT_PRICE_REGION, NAT_USD_PER_GB_PROCESSED, VcpuQuota, vcpu_quota
from tritonfleet.clouds.aws.zones import aws_zones, pool_zones
from tritonfleet.core.config import StackConfig
from tritonfleet.core.cost import capacity_tiers
from tritonfleet.core.preflight import BLOCKER, OK, UNKNOWN, WARNING, Finding, PreflightReport


def required_vcpus(config: StackConfig) -> dict[VcpuQuota | str, dict[str, int]]:
    """vCPU quota -> {pool: vCPUs at the pool's maximum}, each pool's maximum counted once per market.

    A NodePool tier that may buy a market needs its whole node limit in that market's quota: Karpenter launches every
    burst node as spot while spot is offered, and every one as on-demand when it is not (the fallback), so a pool with
    base 1 and burst 2 needs 3 nodes of on-demand quota and 2 of spot, never 5 of either. Each tier is counted at the
    largest of its instance types (the worst case the quota must allow), against the quota of the pool's own type.
    Reserved tiers (capacity blocks, ODCRs) draw on their reservation and are not counted against these quotas. A type
    whose family has no row in the table is keyed "<type> <market>" (its quota is unknown).
    """
    from components.aws.node_pools import burst_instance_types
    from tritonfleet.core.catalog import load_catalog

    catalog = load_catalog()
    needed: dict[VcpuQuota | str, dict[str, int]] = defaultdict(dict)
    for pool in config.enabled_pools:
        for tier in capacity_tiers(config.cloud, pool):
            types = burst_instance_types(config, pool) if "spot" in tier.purchase else [config.instance_type(pool).name]
            vcpus = max(catalog.find("aws", t).vcpu for t in types)  # type: ignore[union-attr]
            for market in tier.purchase:
                if market in ("on-demand", "spot") and tier.nodes:
                    quota = vcpu_quota(types[0], market) or f"{types[0]} {market}"
                    row = needed[quota]
                    row[pool.name] = row.get(pool.name, 0) + tier.nodes * vcpus
    return dict(needed)


def _error_text(error: Exception) -> str:
    if isinstance(error, ClientError):
        info = error.response.get("Error", {})
        return f"{info.get('Code', 'error')}: {info.get('Message', '')}".strip()
    return f"{type(error).__name__}: {error}"


def check_zones(ec2, config: StackConfig, zones: list[str]) -> tuple[list[Finding], set[str]]:
    response = ec2.describe_availability_zones(AllAvailabilityZones=False)
    available = {z["ZoneName"] for z in response["AvailabilityZones"] if z.get("State", "available") == "available"}
    findings = [
        Finding("zones", zone, OK, "available")
        if zone in available
        else Finding(
            "zones", zone, BLOCKER, f"not an available zone of {config.region}; available: {', '.join(sorted(available))}"
        )
        for zone in zones
    ]
    return findings, available


def offered_zones(ec2, instance_types: list[str]) -> dict[str, set[str]]:
    offered: dict[str, set[str]] = {t: set() for t in instance_types}
    paginator = ec2.get_paginator("describe_instance_type_offerings")
    pages = paginator.paginate(
        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": sorted(instance_types)}]
    )
    for page in pages:
        for offering in page["InstanceTypeOfferings"]:
            offered.setdefault(offering["InstanceType"], set()).add(offering["Location"])
    return offered


def check_offerings(ec2, config: StackConfig) -> list[Finding]:
    """Every type in every zone its NodePools span. The pool's own type (and the system type) missing in a zone
    is a blocker: its nodes could not launch there. A spot-diversity type missing is a warning."""
    from components.aws.layout import system_instance_type
    from components.aws.node_pools import burst_instance_types

    wanted: list[tuple[str, str, list[str], bool]] = [
        ("system nodes", system_instance_type(config), aws_zones(config.region, config.cluster), True)
    ]
    for pool in config.enabled_pools:
        zones = pool_zones(config, pool)
        primary = config.instance_type(pool).name
        wanted.append((f"pool {pool.name}", primary, zones, True))
        if any("spot" in tier.purchase for tier in capacity_tiers(config.cloud, pool)):
            wanted += [(f"pool {pool.name} (spot diversity)", t, zones, False) for t in burst_instance_types(config, pool)[1:]]
    offered = offered_zones(ec2, sorted({t for _, t, _, _ in wanted}))
    findings = []
    for subject, itype, zones, required in wanted:
        missing = [z for z in zones if z not in offered.get(itype, set())]
        data = {"instanceType": itype, "zones": zones, "missingZones": missing}
        if not missing:
            findings.append(Finding("offering", f"{subject}: {itype}", OK, f"offered in {', '.join(zones)}", data))
        else:
            where = ", ".join(sorted(offered.get(itype, set()))) or "no zone of this region"
            fix = (
                "limit the pool's zones (gpuPools[].zones) to zones that offer it"
                if subject.startswith("pool")
                else "choose another type"
            )
            findings.append(
                Finding(
                    "offering",
                    f"{subject}: {itype}",
                    BLOCKER if required else WARNING,
                    f"not offered in {', '.join(missing)} (offered in {where}); {fix}",
                    data,
                )
            )
    return findings


def check_quotas(quotas, config: StackConfig) -> list[Finding]:
    findings = []
    required = required_vcpus(config)
    for unmapped in sorted(q for q in required if isinstance(q, str)):
        needed = sum(required[unmapped].values())
        detail = f"unknown (not checked: no vCPU quota code is known for {unmapped}); needs {needed} vCPUs"
        findings.append(Finding("quota", unmapped, UNKNOWN, detail, {"neededVcpus": needed, "pools": required[unmapped]}))
    for quota in sorted((q for q in required if isinstance(q, VcpuQuota)), key=lambda q: q.code):
        code, name, per_pool = quota.code, quota.name, required[quota]
        needed = sum(per_pool.values())
        data: dict[str, Any] = {"quotaCode": code, "quotaName": name, "neededVcpus": needed, "pools": per_pool}
        if quota.verify:
            name = f"{name} (VERIFY: the code this family draws on is unconfirmed)"
        try:
            value = quotas.get_service_quota(ServiceCode="ec2", QuotaCode=code)["Quota"]["Value"]
        except (ClientError, BotoCoreError) as error:
            reason = _error_text(error)
            findings.append(
                Finding("quota", f"{code} {name}", UNKNOWN, f"unknown (not checked: {reason}); needs {needed} vCPUs", data)
            )
            continue
        data["quotaVcpus"] = value
        if value < needed:
            detail = (
                f"quota {value:g} vCPUs < {needed} needed at the stack's ceiling; request an increase: "
                f"aws service-quotas request-service-quota-increase --service-code ec2 --quota-code {code} "
                f"--desired-value {needed} --region {config.region}"
            )
            findings.append(Finding("quota", f"{code} {name}", BLOCKER, detail, data))
        else:
            detail = f"quota {value:g} vCPUs covers {needed} needed (instances already running in the account count too)"
            findings.append(Finding("quota", f"{code} {name}", OK, detail, data))
    return findings


def check_spot_prices(ec2, config: StackConfig, now: dt.datetime | None = None) -> list[Finding]:
    """Current spot prices per type and zone for the spot NodePools, next to the catalog's price (information only)."""
    from components.aws.node_pools import burst_instance_types
    from tritonfleet.core.catalog import load_catalog

    catalog = load_catalog()
    findings = []
    for pool in config.enabled_pools:
        if not any("spot" in tier.purchase for tier in capacity_tiers(config.cloud, pool)):
            continue
        zones = pool_zones(config, pool)
        types = burst_instance_types(config, pool)
        history = ec2.describe_spot_price_history(
            InstanceTypes=types, ProductDescriptions=["Linux/UNIX"], StartTime=now or dt.datetime.now(dt.UTC)
        )
        latest: dict[tuple[str, str], tuple[dt.datetime, float]] = {}
        for entry in history["SpotPriceHistory"]:
            key = (entry["InstanceType"], entry["AvailabilityZone"])
            if entry["AvailabilityZone"] in zones and (key not in latest or entry["Timestamp"] > latest[key][0]):
                latest[key] = (entry["Timestamp"], float(entry["SpotPrice"]))
        for itype in types:
            prices = {zone: latest[(itype, zone)][1] for zone in zones if (itype, zone) in latest}
            catalog_price = catalog.find("aws", itype).price("spot")  # type: ignore[union-attr]
            data = {
                "instanceType": itype,
                "usdPerHour": prices,
                "catalogUsdPerHour": catalog_price.usd if catalog_price else None,
            }
            if not prices:
                findings.append(
                    Finding("spot-price", f"pool {pool.name}: {itype}", UNKNOWN, "no spot price returned for its zones", data)
                )
                continue
            shown = ", ".join(f"{zone} ${price:.4f}" for zone, price in sorted(prices.items()))
            catalog_text = f"${catalog_price.usd:.4f}" if catalog_price else "unknown"
            findings.append(Finding("spot-price", f"pool {pool.name}: {itype}", OK, f"{shown} (catalog {catalog_text})", data))
    return findings


def check_s3_endpoint(ec2, config: StackConfig) -> list[Finding]:
    """An existing VPC: does it have an S3 gateway endpoint, or do model pulls pay NAT processing per GB?

    A VPC tritonfleet creates always has one (components/aws/network.py), so only existingVpcId is asked about. Whether
    the endpoint's route tables are the private subnets' is not checked (stated in the finding)."""
    vpc = config.cluster.existing_vpc_id
    if not vpc:
        return []
    service = f"com.amazonaws.{config.region}.s3"
    subject = f"S3 gateway endpoint of {vpc}"
    try:
        endpoints = ec2.describe_vpc_endpoints(
            Filters=[
                {"Name": "vpc-id", "Values": [vpc]},
                {"Name": "service-name", "Values": [service]},
                {"Name": "vpc-endpoint-type", "Values": ["Gateway"]},
            ]
        )["VpcEndpoints"]
    except (ClientError, BotoCoreError) as error:
        return [Finding("s3-endpoint", subject, UNKNOWN, f"unknown (not checked: {_error_text(error)})")]
    if endpoints:
        ids = [e["VpcEndpointId"] for e in endpoints]
        detail = f"{', '.join(ids)}: model pulls bypass NAT where its route tables include the private subnets' (not checked)"
        return [Finding("s3-endpoint", subject, OK, detail, {"endpoints": ids})]
    price = f"${NAT_USD_PER_GB_PROCESSED}/GB" if config.region == NAT_PRICE_REGION else "NAT's per-GB price"
    detail = (
        f"none: every model pull from S3 pays {price} NAT processing; add one: aws ec2 create-vpc-endpoint "
        f"--vpc-id {vpc} --vpc-endpoint-type Gateway --service-name {service} --route-table-ids <private route tables>"
    )
    return [Finding("s3-endpoint", subject, WARNING, detail)]


def run_preflight(config: StackConfig, ec2, quotas) -> PreflightReport:
    zones = sorted({*aws_zones(config.region, config.cluster), *(z for p in config.enabled_pools for z in p.zones)})
    findings, _ = check_zones(ec2, config, zones)
    findings += check_offerings(ec2, config)
    findings += check_quotas(quotas, config)
    findings += check_spot_prices(ec2, config)
    findings += check_s3_endpoint(ec2, config)
    return PreflightReport(config.stack, config.region, zones, findings)


def aws_clients(region: str):
    """EC2 and Service Quotas clients from the standard chain (env, profile, SSO, instance role; AWS_ENDPOINT_URL)."""
    import boto3
    from botocore.config import Config

    session = boto3.session.Session(region_name=region)
    bounded = Config(connect_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S, retries={"mode": "standard", "total_max_attempts": 3})
    return session.client("ec2", config=bounded), session.client("service-quotas", config=bounded)


# Each call's timeouts (botocore's defaults are 60 s each, with retries): tritonfleet's choice, generous for a
# Describe call; the CLI also bounds the whole preflight (tritonfleet.cli PREFLIGHT_DEADLINE_S).
CONNECT_TIMEOUT_S, READ_TIMEOUT_S = 10, 30
