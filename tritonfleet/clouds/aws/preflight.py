"""Capacity preflight for an AWS stack, before any `pulumi up`: are the instance types offered in the chosen zones,
do the EC2 vCPU quotas cover the stack's ceiling beside what already runs, what does spot cost right now, is the
pinned AMI release published, are the pinned EKS add-on versions offered (and which default EKS would pick for an
unpinned one), are the default bucket names free, and are the capacity blocks and reservations the pools name usable,
for their instance type and zone, in their window.

Uses boto3 with the standard credential chain and endpoint settings (AWS_ENDPOINT_URL points it at a local
emulator). No Pulumi here. A check the API cannot answer is reported as unknown with the reason, never as passed.

It checks the capacity the AWS adapter would ask for: the Karpenter NodePools' instance types come from the same
pure decisions the adapter uses (node_pools.py: burst_instance_types; layout.py: system_instance_type).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from tritonfleet.clouds.aws.facts import (
    AL2023_NVIDIA_AMI_PARAMETER,
    AL2023_NVIDIA_RECOMMENDED_RELEASE,
    BOTTLEROCKET_NVIDIA_AMI_PARAMETER,
    BOTTLEROCKET_NVIDIA_RECOMMENDED_RELEASE,
    HEAD_BUCKET_ELSEWHERE,
    HEAD_BUCKET_FOREIGN,
    HEAD_BUCKET_FREE,
    RESERVATION_GONE_STATES,
    RESERVATION_PENDING_STATES,
    VcpuQuota,
    vcpu_quota,
)
from tritonfleet.clouds.aws.layout import ami_release_version, system_instance_type
from tritonfleet.clouds.aws.node_pools import burst_instance_types
from tritonfleet.clouds.aws.zones import aws_zones, pool_zones
from tritonfleet.core.capacity import capacity_tiers
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import StackConfig
from tritonfleet.core.config.problems import both_ways, set_command
from tritonfleet.core.exposure import PRIVATE_NETWORK, uncovered
from tritonfleet.core.pins import EKS_ADDON_VERSIONS, eks_addon_version
from tritonfleet.core.preflight import BLOCKER, BUCKET_FREE, OK, UNKNOWN, WARNING, Finding, PreflightReport, bucket_name_findings


def required_vcpus(config: StackConfig) -> dict[VcpuQuota | str, dict[str, int]]:
    """vCPU quota -> {pool: vCPUs at the pool's maximum}, each pool's maximum counted once per market.

    A NodePool tier that may buy a market needs its whole node limit in that market's quota: Karpenter launches every
    burst node as spot while spot is offered, and every one as on-demand when it is not (the fallback), so a pool with
    base 1 and burst 2 needs 3 nodes of on-demand quota and 2 of spot, never 5 of either. Each tier is counted at the
    largest of its instance types (the worst case the quota must allow), against the quota of the pool's own type.
    Reserved tiers (capacity blocks, ODCRs) draw on their reservation and are not counted against these quotas. A type
    whose family has no row in the table is keyed "<type> <market>" (its quota is unknown).
    """
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


def running_vcpus(ec2, cluster_name: str = "") -> dict[VcpuQuota, int]:
    """vCPUs of the instances already pending or running in the region, per vCPU quota they draw on (spot by their
    lifecycle): the quota's headroom is its value less these. The stack's own nodes (tagged for its cluster by EKS
    and Karpenter) are left out: the stack's ceiling counts them already."""
    own = {("eks:cluster-name", cluster_name), (f"kubernetes.io/cluster/{cluster_name}", "owned")}
    used: dict[VcpuQuota, int] = defaultdict(int)
    pages = ec2.get_paginator("describe_instances").paginate(
        Filters=[{"Name": "instance-state-name", "Values": ["pending", "running"]}]
    )
    for page in pages:
        for reservation in page["Reservations"]:
            for instance in reservation["Instances"]:
                if own & {(tag["Key"], tag["Value"]) for tag in instance.get("Tags", [])}:
                    continue
                market = "spot" if instance.get("InstanceLifecycle") == "spot" else "on-demand"
                quota = vcpu_quota(instance["InstanceType"], market)
                cpu = instance.get("CpuOptions", {})
                if quota is not None:
                    used[quota] += int(cpu.get("CoreCount", 0)) * int(cpu.get("ThreadsPerCore", 1))
    return dict(used)


def check_quotas(quotas, config: StackConfig, used: dict[VcpuQuota, int] | None = None) -> list[Finding]:
    """Each vCPU quota against the stack's ceiling; with `used` (running_vcpus), against what is left beside it."""
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
        elif used is None:
            detail = f"quota {value:g} vCPUs covers {needed} needed (instances already running in the account count too)"
            findings.append(Finding("quota", f"{code} {name}", OK, detail, data))
        elif value - used.get(quota, 0) < needed:
            running = used.get(quota, 0)
            data["runningVcpus"] = running
            detail = (
                f"quota {value:g} vCPUs covers {needed} needed, but {running} already run in {config.region}: "
                f"{value - running:g} free; request {running + needed}: aws service-quotas "
                f"request-service-quota-increase --service-code ec2 --quota-code {code} --desired-value "
                f"{running + needed} --region {config.region}"
            )
            findings.append(Finding("quota", f"{code} {name}", WARNING, detail, data))
        else:
            data["runningVcpus"] = used.get(quota, 0)
            detail = f"quota {value:g} vCPUs: {value - used.get(quota, 0):g} free beside what runs, {needed} needed"
            findings.append(Finding("quota", f"{code} {name}", OK, detail, data))
    return findings


def check_spot_prices(ec2, config: StackConfig, now: dt.datetime | None = None) -> list[Finding]:
    """Current spot prices per type and zone for the spot NodePools, next to the catalog's price in the stack's region
    ("unknown" where the catalog has none there: never another region's figure). Information only."""
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
            catalog_price = catalog.find("aws", itype).price("spot", config.region)  # type: ignore[union-attr]
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
            findings.append(
                Finding("spot-price", f"pool {pool.name}: {itype}", OK, f"{shown} (catalog in {config.region}: {catalog_text})", data)
            )
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
    found = load_catalog().service_price("aws", "nat-processing", config.region)
    price = f"${found.usd:g}/GB" if found else "NAT's per-GB price"
    detail = (
        f"none: every model pull from S3 pays {price} NAT processing; add one: aws ec2 create-vpc-endpoint "
        f"--vpc-id {vpc} --vpc-endpoint-type Gateway --service-name {service} --route-table-ids <private route tables>"
    )
    return [Finding("s3-endpoint", subject, WARNING, detail)]


def ami_parameters(config: StackConfig) -> tuple[str, str]:
    """The SSM parameter of the stack's pinned GPU AMI release, and the one naming the recommended release."""
    k8s, release = config.cluster.kubernetes_version, ami_release_version(config)
    if config.cluster.eks_gpu_node_image == "al2023":
        return (
            AL2023_NVIDIA_AMI_PARAMETER.format(k8s=k8s, date=release.split("-", 1)[1]),
            AL2023_NVIDIA_RECOMMENDED_RELEASE.format(k8s=k8s),
        )
    return (
        BOTTLEROCKET_NVIDIA_AMI_PARAMETER.format(k8s=k8s, version=release.split("-", 1)[0]),
        BOTTLEROCKET_NVIDIA_RECOMMENDED_RELEASE.format(k8s=k8s),
    )


def check_ami_release(ssm, config: StackConfig) -> list[Finding]:
    """The pinned AMI release is published in the region: the system node group and every EC2NodeClass alias name it,
    and neither launches a node when it is not."""
    release = ami_release_version(config)
    parameter, recommended = ami_parameters(config)
    subject = f"{config.cluster.eks_gpu_node_image} {release}"
    data = {"parameter": parameter, "release": release}
    try:
        image = ssm.get_parameter(Name=parameter)["Parameter"]["Value"]
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ParameterNotFound":
            return [Finding("ami", subject, UNKNOWN, f"unknown (not checked: {_error_text(error)})", data)]
        detail = (
            f"not published in {config.region} ({parameter}); pin one that is: aws ssm get-parameter --name "
            f"{recommended} --region {config.region}, then "
            f"{both_ways(set_command('cluster.amiReleaseVersion', '<release>', config.stack))}"
        )
        return [Finding("ami", subject, BLOCKER, detail, data)]
    except BotoCoreError as error:
        return [Finding("ami", subject, UNKNOWN, f"unknown (not checked: {_error_text(error)})", data)]
    return [Finding("ami", subject, OK, f"published: {image}", {**data, "imageId": image})]


def check_addon_versions(eks, config: StackConfig) -> list[Finding]:
    """Each add-on's pinned version is offered for the cluster version; where none is pinned (VERIFY), which version
    EKS would install by default, so it can be pinned (tritonfleet/core/pins.py EKS_ADDON_VERSIONS)."""
    k8s, findings = config.cluster.kubernetes_version, []
    for addon in sorted(EKS_ADDON_VERSIONS):
        pinned, subject = eks_addon_version(addon, k8s), f"{addon} on {k8s}"
        try:
            offered = eks.describe_addon_versions(addonName=addon, kubernetesVersion=k8s).get("addons", [])
        except (ClientError, BotoCoreError) as error:
            findings.append(Finding("addon", subject, UNKNOWN, f"unknown (not checked: {_error_text(error)})"))
            continue
        versions = [v for a in offered for v in a.get("addonVersions", [])]
        default = next(
            (v["addonVersion"] for v in versions if any(c.get("defaultVersion") for c in v.get("compatibilities", []))),
            None,
        )
        data = {"pinned": pinned, "default": default, "offered": [v["addonVersion"] for v in versions]}
        if pinned is None:
            detail = f"not pinned: EKS would install its default, {default or 'none listed'}; pin it in pins.py"
            findings.append(Finding("addon", subject, WARNING, detail, data))
        elif pinned in data["offered"]:
            findings.append(Finding("addon", subject, OK, f"{pinned} offered", data))
        else:
            detail = (
                f"{pinned} is not offered for {k8s} in {config.region}; pin one that is (default "
                f"{default or 'none listed'}) in tritonfleet/core/pins.py EKS_ADDON_VERSIONS"
            )
            findings.append(Finding("addon", subject, BLOCKER, detail, data))
    return findings


def check_bucket_names(s3, config: StackConfig) -> list[Finding]:
    """Each model bucket's name is free or already ours: S3 names are global, and a name another account holds
    fails the first `up` (BucketAlreadyExists) after the cluster exists."""

    def probe(name: str, fix: str) -> tuple[str, str]:
        try:
            s3.head_bucket(Bucket=name)
        except ClientError as error:
            code = str(error.response.get("Error", {}).get("Code", ""))
            if code in HEAD_BUCKET_FREE:
                return OK, BUCKET_FREE
            if code in HEAD_BUCKET_FOREIGN:
                return BLOCKER, f"taken by another account; name yours: {fix}"
            if code in HEAD_BUCKET_ELSEWHERE:
                return BLOCKER, f"exists in another region; name yours: {fix}"
            return UNKNOWN, f"unknown (not checked: {_error_text(error)})"
        except BotoCoreError as error:
            return UNKNOWN, f"unknown (not checked: {_error_text(error)})"
        return WARNING, (
            "exists and you can read it: right if this stack created it; otherwise `pulumi up` fails with "
            f"BucketAlreadyOwnedByYou (pulumi import it, or {fix})"
        )

    return bucket_name_findings(config, probe)


def check_capacity_reservations(ec2, config: StackConfig, now: dt.datetime | None = None) -> list[Finding]:
    """Each pool's capacity block or On-Demand Capacity Reservation: found, usable now (or when), for the pool's
    instance type, in one of its zones, with its window and the nodes it holds."""
    now = now or dt.datetime.now(dt.UTC)
    findings = []
    for pool in config.enabled_pools:
        if not pool.reservation_id:
            continue
        itype, zones = config.instance_type(pool).name, pool_zones(config, pool)
        subject = f"pool {pool.name}: {pool.reservation_id}"
        try:
            (found,) = ec2.describe_capacity_reservations(CapacityReservationIds=[pool.reservation_id])[
                "CapacityReservations"
            ]
        except ClientError as error:
            if "NotFound" in str(error.response.get("Error", {}).get("Code", "")):
                detail = f"no capacity reservation {pool.reservation_id} in {config.region}: check gpuPools[].reservationId"
                findings.append(Finding("reservation", subject, BLOCKER, detail))
            else:
                findings.append(Finding("reservation", subject, UNKNOWN, f"unknown (not checked: {_error_text(error)})"))
            continue
        except BotoCoreError as error:
            findings.append(Finding("reservation", subject, UNKNOWN, f"unknown (not checked: {_error_text(error)})"))
            continue
        state, start, end = found.get("State", ""), found.get("StartDate"), found.get("EndDate")
        window = f"{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC" if start and end else "no end date"
        count = int(found.get("TotalInstanceCount", 0))
        data = {
            "state": state,
            "instanceType": found.get("InstanceType"),
            "zone": found.get("AvailabilityZone"),
            "instances": count,
            "start": start.isoformat() if start else None,
            "end": end.isoformat() if end else None,
        }
        problems = []
        if found.get("InstanceType") != itype:
            problems.append(f"reserves {found.get('InstanceType')}, the pool asks for {itype}")
        if found.get("AvailabilityZone") not in zones:
            problems.append(f"is in {found.get('AvailabilityZone')}, the pool's zones are {', '.join(zones)}")
        if state in RESERVATION_GONE_STATES:
            problems.append(f"is {state} ({window})")
        if problems:
            findings.append(Finding("reservation", subject, BLOCKER, "; ".join(problems), data))
        elif state in RESERVATION_PENDING_STATES or (start is not None and start > now):
            when = f"before {start:%Y-%m-%d %H:%M} UTC" if start else "until it is active"
            detail = f"{state}: no node launches {when} ({window})"
            findings.append(Finding("reservation", subject, WARNING, detail, data))
        elif end is not None and end - now < dt.timedelta(days=1):
            detail = f"active, ends {end:%Y-%m-%d %H:%M} UTC: its nodes are reclaimed then ({window})"
            findings.append(Finding("reservation", subject, WARNING, detail, data))
        elif count < pool.max_nodes:
            detail = f"active ({window}), {count} instances for up to {pool.max_nodes} nodes"
            findings.append(Finding("reservation", subject, WARNING, detail, data))
        else:
            findings.append(Finding("reservation", subject, OK, f"{state} ({window}), {count} x {itype}", data))
    return findings


def check_deployer_network(ec2, config: StackConfig) -> list[Finding]:
    """deployFrom private-network: are deployerCidrs inside the existing VPC (the private endpoint answers there), or
    a connected network whose route to the VPC only the network's owner can confirm?"""
    vpc = config.cluster.existing_vpc_id
    if config.cluster.deploy_from != PRIVATE_NETWORK or not vpc:
        return []
    subject = f"deployer {', '.join(config.cluster.deployer_cidrs)}"
    try:
        (found,) = ec2.describe_vpcs(VpcIds=[vpc])["Vpcs"]
    except (ClientError, BotoCoreError) as error:
        return [Finding("deploy-path", subject, UNKNOWN, f"unknown (not checked: {_error_text(error)})")]
    blocks = tuple(b["CidrBlock"] for b in found.get("CidrBlockAssociationSet", []) or [{"CidrBlock": found["CidrBlock"]}])
    outside = uncovered(tuple(config.cluster.deployer_cidrs), blocks)
    data = {"vpcCidrs": list(blocks), "outside": outside}
    if not outside:
        return [Finding("deploy-path", subject, OK, f"inside {vpc} ({', '.join(blocks)}): the private endpoint answers", data)]
    detail = (
        f"{', '.join(outside)} outside {vpc} ({', '.join(blocks)}): `pulumi up` reaches the private endpoint only if "
        "that network routes to the VPC (VPN, peering, Transit Gateway, Direct Connect); not checked"
    )
    return [Finding("deploy-path", subject, UNKNOWN, detail, data)]


def run_preflight(config: StackConfig, ec2, quotas, ssm=None, s3=None, eks=None) -> PreflightReport:
    """Every check; `ssm`, `s3` and `eks` (the AMI release, bucket and add-on checks) come with aws_clients."""
    zones = sorted({*aws_zones(config.region, config.cluster), *(z for p in config.enabled_pools for z in p.zones)})
    findings, _ = check_zones(ec2, config, zones)
    findings += check_offerings(ec2, config)
    try:
        used: dict[VcpuQuota, int] | None = running_vcpus(ec2, config.cluster_name)
    except (ClientError, BotoCoreError):
        used = None  # the quotas are still checked against the ceiling; the finding says running instances count too
    findings += check_quotas(quotas, config, used)
    findings += check_spot_prices(ec2, config)
    findings += check_s3_endpoint(ec2, config)
    findings += check_capacity_reservations(ec2, config)
    findings += check_deployer_network(ec2, config)
    if ssm is not None:
        findings += check_ami_release(ssm, config)
    if s3 is not None:
        findings += check_bucket_names(s3, config)
    if eks is not None:
        findings += check_addon_versions(eks, config)
    return PreflightReport(config.stack, config.region, zones, findings)


def aws_clients(region: str):
    """EC2, Service Quotas, SSM, S3 and EKS clients from the standard chain (env, profile, SSO, instance role;
    AWS_ENDPOINT_URL)."""
    import boto3
    from botocore.config import Config

    session = boto3.session.Session(region_name=region)
    bounded = Config(connect_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S, retries={"mode": "standard", "total_max_attempts": 3})
    return (
        session.client("ec2", config=bounded),
        session.client("service-quotas", config=bounded),
        session.client("ssm", config=bounded),
        session.client("s3", config=bounded),
        session.client("eks", config=bounded),
    )


# Each call's timeouts (botocore's defaults are 60 s each, with retries): tritonfleet's choice, generous for a
# Describe call; the whole preflight has its deadline too (tritonfleet.core.preflight PREFLIGHT_DEADLINE_S).
CONNECT_TIMEOUT_S, READ_TIMEOUT_S = 10, 30

NO_AWS_CREDENTIALS = (
    "no AWS credentials found, so nothing was checked. Provide them as for the AWS CLI: a profile "
    "(`aws configure` or `aws sso login`, then AWS_PROFILE=NAME), AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
    "or an instance or pod role. Preflight only reads (ec2:Describe*, servicequotas:GetServiceQuota, "
    "ssm:GetParameter, s3:ListBucket)."
)


def credentials_found(region: str) -> bool:
    """Whether boto3's standard chain finds credentials (env, config files, SSO, instance role), before any API call."""
    import boto3

    return boto3.session.Session(region_name=region).get_credentials() is not None


def preflight(config: StackConfig, deadline_s: float) -> PreflightReport:
    """The whole preflight within `deadline_s`; PreflightError where AWS could not be asked."""
    from botocore.exceptions import NoCredentialsError

    from tritonfleet.core.cloud import PreflightError
    from tritonfleet.deadline import DeadlineExceeded, call_within

    if not credentials_found(config.region):
        raise PreflightError(NO_AWS_CREDENTIALS)
    try:
        return call_within(deadline_s, lambda: run_preflight(config, *aws_clients(config.region)))
    except DeadlineExceeded:
        raise PreflightError(
            f"the AWS APIs did not answer the preflight within {deadline_s:g} s; nothing was concluded"
        ) from None
    except NoCredentialsError:
        raise PreflightError(NO_AWS_CREDENTIALS) from None
    except (ClientError, BotoCoreError) as error:
        raise PreflightError(f"the AWS API did not answer the preflight: {error}") from None
