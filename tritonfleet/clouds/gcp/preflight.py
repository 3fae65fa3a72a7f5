"""Capacity preflight for a GCP stack, before any `pulumi up`: are the region's zones the ones configured, do they offer
each pool's machine type and accelerator, do the regional GPU quotas (per GPU model, on-demand and preemptible) and the
project's GPUS_ALL_REGIONS cover the stack's ceiling, do the reservations exist with room for their pools, are the
APIs the stack needs on (or can the stack turn them on), and are the default bucket names free.

Uses the google-cloud-compute client with Application Default Credentials (the CLI checks for them first). No Pulumi
here. A check the API cannot answer is reported as unknown with the reason, never as passed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from google.api_core.exceptions import Forbidden, GoogleAPICallError, NotFound

from tritonfleet.clouds.gcp.facts import (
    DEPLOYER_PERMISSIONS,
    GLOBAL_GPU_QUOTA_METRIC,
    GPU_QUOTA_METRICS,
    QUOTA_KIND_BY_OPTION,
    SERVICE_USAGE_API,
    project_apis,
)
from tritonfleet.clouds.gcp.node_pools import SYSTEM_MACHINE_TYPE
from tritonfleet.clouds.gcp.reservations import parse_reservation
from tritonfleet.core.capacity import split_capacity
from tritonfleet.core.config import GpuPool, StackConfig
from tritonfleet.core.preflight import BLOCKER, BUCKET_FREE, OK, UNKNOWN, WARNING, Finding, PreflightReport, bucket_name_findings


@dataclass(frozen=True)
class GcpClients:
    """The google-cloud-compute clients the preflight reads from (tests pass fakes shaped like them)."""

    regions: Any  # compute_v1.RegionsClient
    projects: Any  # compute_v1.ProjectsClient
    machine_types: Any  # compute_v1.MachineTypesClient
    accelerator_types: Any  # compute_v1.AcceleratorTypesClient
    reservations: Any  # compute_v1.ReservationsClient
    reservation_blocks: Any = None  # compute_v1.ReservationBlocksClient; None: blocks not asked
    services: Any = None  # ServiceUsage (enabled APIs); None: not asked
    permissions: Any = None  # ProjectPermissions (the caller's permissions); None: not asked
    storage: Any = None  # google.cloud.storage.Client (bucket names); None: not asked


def _checked(response: Any) -> dict[str, Any]:
    """A REST response's JSON body, or the GoogleAPICallError its status stands for."""
    from google.api_core.exceptions import from_http_response

    if response.status_code != 200:
        raise from_http_response(response)
    return response.json()


class ProjectPermissions:
    """Which permissions the caller holds on a project (Resource Manager's testIamPermissions, REST)."""

    URL = "https://cloudresourcemanager.googleapis.com/v1/projects/{project}:testIamPermissions"

    def __init__(self, session: Any):
        self.session = session  # google.auth.transport.requests.AuthorizedSession

    def granted(self, project: str, permissions: list[str]) -> set[str]:
        url = self.URL.format(project=project)
        body = _checked(self.session.post(url, json={"permissions": permissions}, timeout=CALL_TIMEOUT_S))
        return set(body.get("permissions", []))


class ServiceUsage:
    """The project's enabled APIs, from the Service Usage API's REST surface (no extra client library)."""

    URL = "https://serviceusage.googleapis.com/v1/projects/{project}/services"
    MAX_PAGES = 20  # 200 services a page: far more than a project enables

    def __init__(self, session: Any):
        self.session = session  # google.auth.transport.requests.AuthorizedSession

    def enabled(self, project: str) -> set[str]:
        names: set[str] = set()
        params: dict[str, Any] = {"filter": "state:ENABLED", "pageSize": 200}
        for _ in range(self.MAX_PAGES):
            body = _checked(self.session.get(self.URL.format(project=project), params=params, timeout=CALL_TIMEOUT_S))
            names |= {service["config"]["name"] for service in body.get("services", [])}
            if not body.get("nextPageToken"):
                break
            params["pageToken"] = body["nextPageToken"]
        return names


def gcp_clients() -> GcpClients:
    """Clients on Application Default Credentials (gcloud auth application-default login, a service account key file
    in GOOGLE_APPLICATION_CREDENTIALS, or the metadata server)."""
    import google.auth
    from google.auth.transport.requests import AuthorizedSession
    from google.cloud import compute_v1, storage

    credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    session = AuthorizedSession(credentials)
    return GcpClients(
        _Bounded(compute_v1.RegionsClient()),
        _Bounded(compute_v1.ProjectsClient()),
        _Bounded(compute_v1.MachineTypesClient()),
        _Bounded(compute_v1.AcceleratorTypesClient()),
        _Bounded(compute_v1.ReservationsClient()),
        reservation_blocks=_Bounded(compute_v1.ReservationBlocksClient()),
        services=ServiceUsage(session),
        permissions=ProjectPermissions(session),
        storage=storage.Client(project=None, credentials=credentials),
    )


# Each call's timeout in seconds: tritonfleet's choice, generous for a read; the CLI also bounds the whole preflight
# (tritonfleet.core.preflight PREFLIGHT_DEADLINE_S).
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
    """Each reservation pool's reservation (in its owner project when shared): found in one of the pool's zones, for
    its machine type, shared with the stack's project, with room; its block too when the pool names one. One that
    other VMs may consume automatically (specificReservationRequired false) is a warning."""
    findings = []
    for pool in config.enabled_pools:
        if pool.capacity != "reservation" or not pool.reservation_id:
            continue
        ref = parse_reservation(pool.reservation_id, config.gcp_project or "")
        if ref is None:  # refused by the config rules; a config loaded past them is not checked
            continue
        itype = config.instance_type(pool)
        subject = f"pool {pool.name}: {pool.reservation_id}"
        zones = pool_zones(config, pool, region_zones)
        found, errors = None, []
        for zone in zones:
            try:
                found = clients.reservations.get(project=ref.project, zone=zone, reservation=ref.name)
                break
            except NotFound:
                continue
            except GoogleAPICallError as error:
                errors.append(f"{zone}: {_reason(error)}")
        data: dict[str, Any] = {"reservation": pool.reservation_id, "project": ref.project, "zones": zones}
        if found is None:
            if errors:
                findings.append(Finding("reservation", subject, UNKNOWN, f"unknown (not checked: {'; '.join(errors)})", data))
            else:
                where = f"project {ref.project}, " if ref.shared else ""
                detail = f"no reservation {ref.name} in {where}{', '.join(zones)}; set gpuPools[].zones to its zone"
                findings.append(Finding("reservation", subject, BLOCKER, detail, data))
            continue
        specific = found.specific_reservation
        machine = specific.instance_properties.machine_type
        count, in_use, zone = int(specific.count), int(specific.in_use_count), _name(found.zone)
        data.update(zone=zone, machineType=machine, count=count, inUse=in_use)
        if ref.block:
            count, in_use, block_finding = _block_room(clients, ref, zone, subject, data)
            if block_finding is not None:
                findings.append(block_finding)
                continue
        free = count - in_use
        unshared = ref.shared and ref.project != config.gcp_project and not _shared_with(found, config.gcp_project or "")
        if machine != itype.name:
            detail = f"reserves {machine}, the pool asks for {itype.name}; set the pool's instanceType to {machine}"
            findings.append(Finding("reservation", subject, BLOCKER, detail, data))
        elif unshared:
            detail = (
                f"not shared with project {config.gcp_project}: gcloud compute reservations update {ref.name} "
                f"--zone {zone} --project {ref.project} --add-share-with {config.gcp_project}"
            )
            findings.append(Finding("reservation", subject, BLOCKER, detail, data))
        elif free < pool.max_nodes:
            detail = f"{free} of {count} {machine} free in {zone}, the pool may grow to {pool.max_nodes}"
            findings.append(Finding("reservation", subject, WARNING, detail, data))
        elif not found.specific_reservation_required:
            detail = (
                f"{free} of {count} {machine} free in {zone}, but any VM of the project may consume it "
                "(specificReservationRequired false): other workloads can take the pool's capacity"
            )
            findings.append(Finding("reservation", subject, WARNING, detail, data))
        else:
            detail = f"{free} of {count} {machine} free in {zone} for up to {pool.max_nodes} nodes"
            findings.append(Finding("reservation", subject, OK, detail, data))
    return findings


def _shared_with(reservation: Any, project: str) -> bool:
    """Whether a reservation of another project is shared with `project` (shareSettings.projectMap)."""
    settings = reservation.share_settings
    return settings.share_type == "SPECIFIC_PROJECTS" and project in settings.project_map


def _block_room(
    clients: GcpClients, ref: Any, zone: str, subject: str, data: dict[str, Any]
) -> tuple[int, int, Finding | None]:
    """The named block's VM count and use, or a finding when it cannot be read or does not exist."""
    if clients.reservation_blocks is None:
        return 0, 0, Finding("reservation", subject, UNKNOWN, "unknown (the block was not asked for)", data)
    try:
        block = clients.reservation_blocks.get(
            project=ref.project, zone=zone, reservation=ref.name, reservation_block=ref.block
        ).resource
    except NotFound:
        detail = f"reservation {ref.name} has no block {ref.block}: `gcloud compute reservations blocks list {ref.name}`"
        return 0, 0, Finding("reservation", subject, BLOCKER, detail, data)
    except GoogleAPICallError as error:
        return 0, 0, Finding("reservation", subject, UNKNOWN, f"unknown (not checked: {_reason(error)})", data)
    data.update(block=ref.block, blockCount=int(block.count), blockInUse=int(block.in_use_count))
    return int(block.count), int(block.in_use_count), None


def check_apis(services: Any, config: StackConfig) -> list[Finding]:
    """The APIs the stack enables (facts.PROJECT_APIS): on is ok, off is a warning (`up` enables it, and the deployer
    needs serviceusage.services.enable), and Service Usage itself off is a blocker: nothing can be enabled through it."""
    project = config.gcp_project or ""
    wanted = project_apis(uses_kms=any(b.kms_key_id for b in config.model_buckets))
    try:
        enabled = services.enabled(project)
    except (GoogleAPICallError, OSError) as error:  # OSError: requests' connection errors and timeouts
        return [Finding("api", f"project {project}", UNKNOWN, f"unknown (not checked: {_reason(error)})", {"apis": wanted})]
    findings = []
    for api in wanted:
        if api in enabled:
            findings.append(Finding("api", api, OK, "enabled"))
        elif api == SERVICE_USAGE_API:
            detail = f"off: nothing can be enabled through it; gcloud services enable {api} --project {project}"
            findings.append(Finding("api", api, BLOCKER, detail))
        else:
            detail = "off: `pulumi up` enables it first (the deployer needs roles/serviceusage.serviceUsageAdmin)"
            findings.append(Finding("api", api, WARNING, detail))
    return findings


def check_deployer_permissions(permissions: Any, config: StackConfig) -> list[Finding]:
    """The permissions `pulumi up` uses (facts.DEPLOYER_PERMISSIONS) that the caller lacks on the project. A warning,
    not a blocker: preflight may run as someone else than the deployer (CI's service account: docs/ci.md)."""
    project = config.gcp_project or ""
    wanted = list(DEPLOYER_PERMISSIONS)
    subject = f"deployer on {project}"
    try:
        granted = permissions.granted(project, wanted)
    except (GoogleAPICallError, OSError) as error:
        return [Finding("permissions", subject, UNKNOWN, f"unknown (not checked: {_reason(error)})")]
    missing = [p for p in wanted if p not in granted]
    if not missing:
        return [Finding("permissions", subject, OK, "the caller holds every permission `pulumi up` uses")]
    detail = (
        f"the caller lacks {', '.join(missing)}: `pulumi up` as this identity stops there (grant the deploy service "
        "account roles that hold them: docs/ci.md)"
    )
    return [Finding("permissions", subject, WARNING, detail, {"missing": missing})]


def check_gcs_bucket_names(storage: Any, config: StackConfig) -> list[Finding]:
    """Each model bucket's name is free or already ours: GCS names are global (409 on create when taken)."""

    def probe(name: str, fix: str) -> tuple[str, str]:
        try:
            storage.get_bucket(name, timeout=CALL_TIMEOUT_S)
        except NotFound:
            return OK, BUCKET_FREE
        except Forbidden:
            return BLOCKER, f"taken by someone you cannot read; name yours: {fix}"
        except GoogleAPICallError as error:
            return UNKNOWN, f"unknown (not checked: {_reason(error)})"
        return WARNING, f"exists and you can read it: right if this stack created it; otherwise pulumi import it, or {fix}"

    return bucket_name_findings(config, probe)


def run_preflight(config: StackConfig, clients: GcpClients) -> PreflightReport:
    region = clients.regions.get(project=config.gcp_project, region=config.region)
    region_zones = sorted(_name(z) for z in region.zones)
    findings = check_zones(config, region_zones)
    findings += check_offerings(clients, config, region_zones)
    findings += check_quotas(clients, config, region)
    findings += check_reservations(clients, config, region_zones)
    if clients.services is not None:
        findings += check_apis(clients.services, config)
    if clients.permissions is not None:
        findings += check_deployer_permissions(clients.permissions, config)
    if clients.storage is not None:
        findings += check_gcs_bucket_names(clients.storage, config)
    zones = sorted({*(config.cluster.zones or region_zones), *(z for p in config.enabled_pools for z in p.zones)})
    return PreflightReport(config.stack, config.region, zones, findings)


NO_GCP_CREDENTIALS = (
    "no Google Cloud credentials found: run `gcloud auth application-default login`, or point "
    "GOOGLE_APPLICATION_CREDENTIALS at a service account key, or run where the metadata server answers. Preflight only "
    "reads (compute.regions.get, compute.projects.get, compute.machineTypes.list, compute.acceleratorTypes.list, "
    "compute.reservations.get, compute.reservationBlocks.get, serviceusage.services.list, storage.buckets.get; "
    "it asks which permissions `pulumi up` uses the caller holds)."
)


def preflight(config: StackConfig, deadline_s: float) -> PreflightReport:
    """The whole preflight within `deadline_s`; PreflightError where Google Cloud could not be asked."""
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    from tritonfleet.core.cloud import PreflightError
    from tritonfleet.deadline import DeadlineExceeded, call_within

    try:
        google.auth.default()
        return call_within(deadline_s, lambda: run_preflight(config, gcp_clients()))
    except DeadlineExceeded:
        raise PreflightError(
            f"the Compute Engine API did not answer the preflight within {deadline_s:g} s; nothing was concluded"
        ) from None
    except DefaultCredentialsError:
        raise PreflightError(NO_GCP_CREDENTIALS) from None
    except GoogleAPICallError as error:
        raise PreflightError(
            f"the Compute Engine API did not answer the preflight for project {config.gcp_project}: {error}"
        ) from None
