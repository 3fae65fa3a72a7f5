"""Capacity preflight for a GCP stack, before any `pulumi up`: are the region's zones the ones configured, do they offer
each pool's machine type and accelerator, do the regional GPU quotas (per GPU model, on-demand and preemptible) and the
project's GPUS_ALL_REGIONS cover the stack's ceiling, and do the reservations exist with room for their pools.

Uses the google-cloud-compute client with Application Default Credentials (the CLI checks for them first). No Pulumi
here. A check the API cannot answer is reported as unknown with the reason, never as passed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from google.api_core.exceptions import GoogleAPICallError, NotFound

from tritonfleet.clouds.gcp.facts import GLOBAL_GPU_QUOTA_METRIC, GPU_QUOTA_METRICS, QUOTA_KIND_BY_OPTION
from tritonfleet.core.config import GpuPool, StackConfig
from tritonfleet.core.cost import split_capacity
from tritonfleet.core.preflight import BLOCKER, OK, UNKNOWN, WARNING, Finding, PreflightReport


@dataclass(frozen=True)
class GcpClients:
    """The google-cloud-compute clients the preflight reads from (tests pass fakes shaped like them)."""

    regions: Any  # compute_v1.RegionsClient
    projects: Any  # compute_v1.ProjectsClient
    machine_types: Any  # compute_v1.MachineTypesClient
    accelerator_types: Any  # compute_v1.AcceleratorTypesClient
    reservations: Any  # compute_v1.ReservationsClient


def gcp_clients() -> GcpClients:
    """Clients on Application Default Credentials (gcloud auth application-default login, a service account key file
    in GOOGLE_APPLICATION_CREDENTIALS, or the metadata server)."""
    from google.cloud import compute_v1

    return GcpClients(
        _Bounded(compute_v1.RegionsClient()),
        _Bounded(compute_v1.ProjectsClient()),
        _Bounded(compute_v1.MachineTypesClient()),
        _Bounded(compute_v1.AcceleratorTypesClient()),
        _Bounded(compute_v1.ReservationsClient()),
    )


# Each call's timeout in seconds: tritonfleet's choice, generous for a read; the CLI also bounds the whole preflight
# (tritonfleet.cli PREFLIGHT_DEADLINE_S).
CALL_TIMEOUT_S = 30


class _Bounded:
    """A Compute Engine client whose calls carry a timeout unless the caller gives one."""

    def __init__(self, client: Any):
        self._client = client

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if not callable(method):
            return method
        return lambda *args, **kwargs: method(*args, **{"timeout": CALL_TIMEOUT_S, **kwargs})


def _name(url: str) -> str:
    """The last path segment of a Compute Engine URL or scope ('zones/us-central1-a' -> 'us-central1-a')."""
    return url.rstrip("/").rsplit("/", 1)[-1]


def _reason(error: Exception) -> str:
    return f"{type(error).__name__}: {getattr(error, 'message', None) or error}"


def pool_zones(config: StackConfig, pool: GpuPool, region_zones: list[str]) -> list[str]:
    """The zones a pool's nodes may use: its own, else the cluster's, else every zone of the region."""
    return list(pool.zones or config.cluster.zones or region_zones)


def required_gpus(config: StackConfig) -> dict[str, dict[str, int]]:
    """Quota metric -> {pool: GPUs at the pool's maximum}, from the one capacity split (reservations excluded)."""
    needed: dict[str, dict[str, int]] = defaultdict(dict)
    for pool in config.enabled_pools:
        itype = config.instance_type(pool)
        for option, nodes in split_capacity(pool).purchase.items():
            kind = QUOTA_KIND_BY_OPTION.get(option)
            if kind is None or nodes.max == 0:
                continue
            metric = GPU_QUOTA_METRICS.get(itype.gpu, {}).get(kind, f"<no known quota metric for {itype.gpu} {kind}>")
            needed[metric][pool.name] = needed[metric].get(pool.name, 0) + nodes.max * itype.gpu_count
    return dict(needed)


def check_zones(config: StackConfig, region_zones: list[str]) -> list[Finding]:
    wanted = sorted({*config.cluster.zones, *(z for p in config.enabled_pools for z in p.zones)})
    return [
        Finding("zones", zone, OK, "a zone of the region")
        if zone in region_zones
        else Finding("zones", zone, BLOCKER, f"not a zone of {config.region}; its zones: {', '.join(region_zones)}")
        for zone in wanted
    ]


def offered_zones(client: Any, project: str, name: str, field_name: str) -> set[str]:
    """Zones whose aggregated list holds a machine or accelerator type of this name."""
    pages = client.aggregated_list(request={"project": project, "filter": f'name = "{name}"'})
    return {_name(scope) for scope, scoped in pages if any(item.name == name for item in getattr(scoped, field_name))}


def check_offerings(clients: GcpClients, config: StackConfig, region_zones: list[str]) -> list[Finding]:
    """Each pool's machine type and accelerator in every zone its node pool spans; missing is a blocker."""
    from components.gcp.node_pools import SYSTEM_MACHINE_TYPE  # the adapter's default (a plain module, no Pulumi)

    project = config.gcp_project or ""
    wanted: list[tuple[str, str, str, list[str]]] = [
        ("system nodes", "machine type", config.cluster.system_nodes.instance_type or SYSTEM_MACHINE_TYPE,
         list(config.cluster.zones or region_zones))
    ]
    for pool in config.enabled_pools:
        itype = config.instance_type(pool)
        zones = pool_zones(config, pool, region_zones)
        wanted.append((f"pool {pool.name}", "machine type", itype.name, zones))
        if itype.accelerator:
            wanted.append((f"pool {pool.name}", "accelerator", itype.accelerator, zones))
    findings = []
    cache: dict[tuple[str, str], set[str] | Exception] = {}
    for subject, kind, name, zones in wanted:
        key = (kind, name)
        if key not in cache:
            client, field_name = (
                (clients.machine_types, "machine_types") if kind == "machine type" else (clients.accelerator_types, "accelerator_types")
            )
            try:
                cache[key] = offered_zones(client, project, name, field_name)
            except GoogleAPICallError as error:
                cache[key] = error
        offered = cache[key]
        data: dict[str, Any] = {kind.replace(" ", ""): name, "zones": zones}
        if isinstance(offered, Exception):
            findings.append(Finding("offering", f"{subject}: {name}", UNKNOWN, f"unknown (not checked: {_reason(offered)})", data))
            continue
        missing = [z for z in zones if z not in offered]
        data["missingZones"] = missing
        if not missing:
            findings.append(Finding("offering", f"{subject}: {name}", OK, f"{kind} offered in {', '.join(zones)}", data))
            continue
        where = ", ".join(sorted(z for z in offered if z.startswith(f"{config.region}-"))) or f"no zone of {config.region}"
        fix = "set gpuPools[].zones to zones that offer it" if subject.startswith("pool") else "choose another type"
        findings.append(
            Finding("offering", f"{subject}: {name}", BLOCKER, f"{kind} not offered in {', '.join(missing)} (offered in {where}); {fix}", data)
        )
    return findings


def _quota_finding(scope: str, metric: str, quotas: dict[str, Any], per_pool: dict[str, int], fix: str) -> Finding:
    needed = sum(per_pool.values())
    data: dict[str, Any] = {"metric": metric, "scope": scope, "neededGpus": needed, "pools": per_pool}
    quota = quotas.get(metric)
    if quota is None:
        return Finding("quota", f"{scope} {metric}", UNKNOWN, f"unknown ({scope} reports no quota {metric}); needs {needed} GPUs", data)
    limit, usage = float(quota.limit), float(quota.usage)
    data.update(limit=limit, usage=usage)
    if limit < needed:
        return Finding("quota", f"{scope} {metric}", BLOCKER, f"limit {limit:g} GPUs < {needed} needed at the stack's ceiling; {fix}", data)
    if limit - usage < needed:
        detail = f"limit {limit:g} covers {needed} needed, but {usage:g} are in use: {limit - usage:g} free"
        return Finding("quota", f"{scope} {metric}", WARNING, detail, data)
    return Finding("quota", f"{scope} {metric}", OK, f"limit {limit:g} GPUs ({usage:g} in use) covers {needed} needed", data)


def check_quotas(clients: GcpClients, config: StackConfig, region: Any) -> list[Finding]:
    """Regional GPU quotas per model (on-demand and preemptible) and the project's GPUS_ALL_REGIONS."""
    needed = required_gpus(config)
    if not needed:
        return []
    fix = f"request more in the console (IAM & Admin > Quotas, region {config.region})"
    regional = {q.metric: q for q in region.quotas}
    findings = [_quota_finding(config.region, metric, regional, per_pool, fix) for metric, per_pool in sorted(needed.items())]
    total: dict[str, int] = defaultdict(int)
    for per_pool in needed.values():
        for pool, gpus in per_pool.items():
            total[pool] += gpus
    try:
        project = clients.projects.get(project=config.gcp_project)
    except GoogleAPICallError as error:
        detail = f"unknown (not checked: {_reason(error)}); needs {sum(total.values())} GPUs"
        return [*findings, Finding("quota", f"global {GLOBAL_GPU_QUOTA_METRIC}", UNKNOWN, detail)]
    project_quotas = {q.metric: q for q in project.quotas}
    findings.append(_quota_finding("global", GLOBAL_GPU_QUOTA_METRIC, project_quotas, dict(total), "request more (IAM & Admin > Quotas)"))
    return findings


def check_reservations(clients: GcpClients, config: StackConfig, region_zones: list[str]) -> list[Finding]:
    """Each reservation pool's reservation: found in one of the pool's zones, for its machine type, with room."""
    findings = []
    for pool in config.enabled_pools:
        if pool.capacity != "reservation" or not pool.reservation_id:
            continue
        itype = config.instance_type(pool)
        subject = f"pool {pool.name}: {pool.reservation_id}"
        zones = pool_zones(config, pool, region_zones)
        found, errors = None, []
        for zone in zones:
            try:
                found = clients.reservations.get(project=config.gcp_project, zone=zone, reservation=pool.reservation_id)
                break
            except NotFound:
                continue
            except GoogleAPICallError as error:
                errors.append(f"{zone}: {_reason(error)}")
        data: dict[str, Any] = {"reservation": pool.reservation_id, "zones": zones}
        if found is None:
            if errors:
                findings.append(Finding("reservation", subject, UNKNOWN, f"unknown (not checked: {'; '.join(errors)})", data))
            else:
                detail = f"no reservation {pool.reservation_id} in {', '.join(zones)}; set gpuPools[].zones to its zone"
                findings.append(Finding("reservation", subject, BLOCKER, detail, data))
            continue
        specific = found.specific_reservation
        machine = specific.instance_properties.machine_type
        free = int(specific.count) - int(specific.in_use_count)
        data.update(zone=_name(found.zone), machineType=machine, count=int(specific.count), inUse=int(specific.in_use_count))
        if machine != itype.name:
            detail = f"reserves {machine}, the pool asks for {itype.name}; set the pool's instanceType to {machine}"
            findings.append(Finding("reservation", subject, BLOCKER, detail, data))
        elif free < pool.max_nodes:
            detail = f"{free} of {int(specific.count)} {machine} free in {_name(found.zone)}, the pool may grow to {pool.max_nodes}"
            findings.append(Finding("reservation", subject, WARNING, detail, data))
        else:
            detail = f"{free} of {int(specific.count)} {machine} free in {_name(found.zone)} for up to {pool.max_nodes} nodes"
            findings.append(Finding("reservation", subject, OK, detail, data))
    return findings


def run_preflight(config: StackConfig, clients: GcpClients) -> PreflightReport:
    region = clients.regions.get(project=config.gcp_project, region=config.region)
    region_zones = sorted(_name(z) for z in region.zones)
    findings = check_zones(config, region_zones)
    findings += check_offerings(clients, config, region_zones)
    findings += check_quotas(clients, config, region)
    findings += check_reservations(clients, config, region_zones)
    zones = sorted({*(config.cluster.zones or region_zones), *(z for p in config.enabled_pools for z in p.zones)})
    return PreflightReport(config.stack, config.region, zones, findings)
