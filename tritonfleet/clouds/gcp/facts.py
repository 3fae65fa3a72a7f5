"""GCP and GKE facts the program and the policy pack rely on, each with its source and the date it was read.

The neutral core speaks Kubernetes and tritonfleet terms (taint effect NoSchedule); this module maps them to the GKE
API's spelling. Facts only a real account can confirm are marked VERIFY (README list).
"""

from __future__ import annotations

import datetime as dt

from tritonfleet.core.kubernetes_support import KubernetesSupport

# Kubernetes taint effect -> GKE API NodeTaint effect. Source: GKE API reference NodeTaint.Effect,
# https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig, and the Pulumi GCP
# NodePoolNodeConfigTaint docs (NO_SCHEDULE | PREFER_NO_SCHEDULE | NO_EXECUTE), read 2026 (shared reference
# pulumi-mechanics.md).
GKE_TAINT_EFFECT = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}

# GKE taints GPU nodes nvidia.com/gpu=present:NoSchedule itself, so we declare that same taint on GPU node pools.
# Source: observed on GKE node objects and relied on by https://github.com/triton-inference-server/tutorials @e848952
# (Deployment/Kubernetes/TensorRT-LLM_Autoscaling_and_Load_Balancing, read 2026; VERIFY the wording in current GKE docs).
GPU_TAINT_VALUE = "present"

# Seconds between a Spot VM's preemption notice and its stop. Source: GKE consumption options / Spot VMs,
# https://cloud.google.com/compute/docs/instances/spot (30 s), read 2024-2026 (shared reference [GKEDOC]).
SPOT_NOTICE_SECONDS = 30
# tritonfleet's choice: each GKE node pool is bought one way, so tritonfleet.io/capacity on its nodes is exact and no
# provisioner label is needed.
NODE_CAPACITY_TYPE_LABEL: str | None = None

# GKE node pools take one purchase option each: a spot pool that cannot get spot stays short (it never launches
# on-demand instead), so a GCP pool's ceiling is its expected mix (tritonfleet/core/cost.py). Source:
# https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms (a Spot node pool creates Spot VMs only; fall back
# needs a second node pool), read 2026-12-03.
SPOT_FALLS_BACK_TO_ON_DEMAND = False

# GKE runs its own NVIDIA device plugin on GPU nodes unless the node carries this label; set it only when the GPU
# Operator installs the driver and its own device plugin (two device plugins fight over nvidia.com/gpu).
# Source: NVIDIA cloud-native-docs @52dcb7b gpu-operator/google-gke.rst (2026-08-21),
# https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/google-gke.html.
GKE_NO_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"

# The regions of Google Cloud (Compute Engine, where GKE runs), for config checks before anything is created.
# Source: https://cloud.google.com/compute/docs/regions-zones ("Available regions and zones"), as of 2025; written down
# on 2026-12-03 without network access, so VERIFY against `gcloud compute regions list` (regions added since are refused
# until listed here). Whether the pool's GPU is offered in a region's zones is a separate check (preflight, VERIFY).
GCP_REGIONS: tuple[str, ...] = (
    "africa-south1",
    "asia-east1",
    "asia-east2",
    "asia-northeast1",
    "asia-northeast2",
    "asia-northeast3",
    "asia-south1",
    "asia-south2",
    "asia-southeast1",
    "asia-southeast2",
    "australia-southeast1",
    "australia-southeast2",
    "europe-central2",
    "europe-north1",
    "europe-north2",
    "europe-southwest1",
    "europe-west1",
    "europe-west10",
    "europe-west12",
    "europe-west2",
    "europe-west3",
    "europe-west4",
    "europe-west6",
    "europe-west8",
    "europe-west9",
    "me-central1",
    "me-central2",
    "me-west1",
    "northamerica-northeast1",
    "northamerica-northeast2",
    "northamerica-south1",
    "southamerica-east1",
    "southamerica-west1",
    "us-central1",
    "us-east1",
    "us-east4",
    "us-east5",
    "us-south1",
    "us-west1",
    "us-west2",
    "us-west3",
    "us-west4",
)

# Kubernetes NetworkPolicy on GKE: Dataplane V2 (datapath provider ADVANCED_DATAPATH, eBPF) enforces it; the legacy
# datapath only with Calico network policy. The datapath is chosen at cluster creation: changing it replaces the
# cluster (google_container_cluster datapath_provider is ForceNew). Sources: https://cloud.google.com/kubernetes-engine/
# docs/reference/rest/v1/DatapathProvider and .../concepts/dataplane-v2 (read 2026-12-03).
ADVANCED_DATAPATH = "ADVANCED_DATAPATH"

# A private GKE cluster's own firewall rule (gke-<cluster>-<hash>-master) lets the control plane reach the nodes on
# tcp 443 and 10250 only; an APIService or webhook served on any other port needs a rule from the control-plane CIDR.
# Source: https://cloud.google.com/kubernetes-engine/docs/how-to/private-clusters#add_firewall_rules and
# https://cloud.google.com/service-mesh/docs/private-cluster-open-port, read 2026-12 (shared cloud-review-2026-12.md).
GKE_CONTROL_PLANE_OPEN_PORTS = (443, 10250)


# GKE Ingress: the controller reads an Ingress's class from the kubernetes.io/ingress.class annotation only (gce: the
# external Application Load Balancer, gce-internal: the regional internal one) and takes no action on an Ingress that
# names a class in spec.ingressClassName alone. Sources: https://cloud.google.com/kubernetes-engine/docs/concepts/ingress
# ("GKE Ingress controller behavior") and https://cloud.google.com/kubernetes-engine/docs/troubleshooting/ingress
# ("Incorrect annotation for the Ingress class"), read 2026-12-03. The policy pack tells internal Ingresses by it.
GKE_INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
# Source: https://cloud.google.com/kubernetes-engine/docs/concepts/ingress (read 2026-12-03).
GKE_EXTERNAL_INGRESS_CLASS = "gce"
# Source: https://cloud.google.com/kubernetes-engine/docs/concepts/ingress (read 2026-12-03).
GKE_INTERNAL_INGRESS_CLASS = "gce-internal"

# The internal Application Load Balancer's Envoy proxies take addresses from the region's proxy-only subnet (purpose
# REGIONAL_MANAGED_PROXY, role ACTIVE; one active per VPC network and region; at least 64 addresses, /26 or shorter,
# /23 recommended) and connect to the pods from there. The GKE Ingress controller adds the firewall rule for Google's
# health checks (35.191.0.0/16, 130.211.0.0/22) but not the one from the proxy-only subnet to the pods: the stack
# adds that. Sources: https://cloud.google.com/load-balancing/docs/proxy-only-subnets,
# https://cloud.google.com/kubernetes-engine/docs/how-to/internal-load-balance-ingress ("Prepare your environment"),
# https://cloud.google.com/load-balancing/docs/firewall-rules, read 2026-12-03.
PROXY_ONLY_PURPOSE = "REGIONAL_MANAGED_PROXY"
# Source: https://cloud.google.com/load-balancing/docs/proxy-only-subnets (read 2026-12-03).
PROXY_ONLY_ROLE = "ACTIVE"
# Source: https://cloud.google.com/load-balancing/docs/proxy-only-subnets (read 2026-12-03): at least 64 addresses.
PROXY_ONLY_MAX_PREFIX = 26


def control_plane_firewall_ports(called_ports: dict[str, int]) -> list[int]:
    """The ports the stack's APIServices and webhooks need opened from the control plane (GKE opens the rest)."""
    return sorted({port for port in called_ports.values() if port not in GKE_CONTROL_PLANE_OPEN_PORTS})



def gke_version_at_least(version: str, minimum: str) -> bool:
    """Whether GKE `version` (1.35, 1.35.1 or 1.35.0-gke.1171000) is at least `minimum`.

    A version given without its patch or GKE build counts as the first one of its line (1.35 = 1.35.0-gke.0): a
    cluster asking for "1.35" may get any 1.35 build, so only what every one of them offers is relied on.
    """

    def parts(text: str) -> tuple[int, ...]:
        release, _, build = text.partition("-gke.")
        numbers = [int(n) for n in release.split(".")] + [0, 0]
        return (*numbers[:3], int(build or 0))

    return parts(version) >= parts(minimum)


# ---- Custom compute classes (one scheduling target per GPU pool; components/gcp/compute_classes.py) ----
# A ComputeClass is the cluster-scoped custom resource cloud.google.com/v1 ComputeClass: `priorities[].nodepools` orders
# existing node pools, `whenUnsatisfiable` says what the autoscaler does when no priority has capacity,
# `nodePoolAutoCreation.enabled: false` keeps GKE from creating pools of its own. Source:
# https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass, read 2026-12-03.
COMPUTE_CLASS_API_VERSION = "cloud.google.com/v1"
# Kind of the resource above (same source: https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass,
# read 2026-12-03).
COMPUTE_CLASS_KIND = "ComputeClass"
# Pods select a class with the node selector cloud.google.com/compute-class: <name>; a manually created node pool joins
# the class when its nodes carry that label and the taint cloud.google.com/compute-class=<name>:NoSchedule. Source:
# https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes, read 2026-12-03 (VERIFY on a
# cluster that such a pool shows in the class's status).
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
# "Custom compute classes are available to use in GKE Autopilot mode and GKE Standard mode in version
# 1.30.3-gke.1451000 and later": https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes,
# read 2026-12-03.
COMPUTE_CLASS_MIN_VERSION = "1.30.3-gke.1451000"

# Of a Spot VM's 30 s preemption notice (SPOT_NOTICE_SECONDS), GKE's graceful node shutdown gives the first 15 s to
# non-system Pods and the last 15 s to critical system Pods. Source:
# https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms ("Termination and graceful shutdown of Spot VMs"),
# read 2026-12-03 (shared cloud-review-2026-12.md).
SPOT_POD_SHUTDOWN_SECONDS = 15
# The critical system Pods' part of the window, same source (https://cloud.google.com/kubernetes-engine/docs/concepts/
# spot-vms, read 2026-12-03); kept when the window is extended.
SPOT_CRITICAL_POD_SHUTDOWN_SECONDS = 15
# From control plane 1.35.0-gke.1171000 a Standard spot node pool may extend the window up to 120 s through its node
# system config (kubelet shutdownGracePeriodSeconds / shutdownGracePeriodCriticalPodsSeconds). Source:
# https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms, read 2026-12-03. VERIFY on a real spot GPU node
# that Compute Engine keeps the VM for the extended window.
SPOT_EXTENDED_SHUTDOWN_SECONDS = 120
# The version from which that holds (same source, https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms,
# read 2026-12-03).
SPOT_EXTENDED_SHUTDOWN_MIN_VERSION = "1.35.0-gke.1171000"

# Surge upgrades create max_surge extra nodes before draining old ones: without spare quota, reservation or stock the
# upgrade stalls. Source: https://cloud.google.com/kubernetes-engine/docs/how-to/node-upgrades-quota and
# .../concepts/node-pool-upgrade-strategies, read 2026-12-03. GKE's default (one surge node) is tritonfleet's choice
# where a spare node can be had: small on-demand and spot GPU pools.
SURGE_UPGRADE = {"max_surge": 1, "max_unavailable": 0}
# In place, one node at a time (no spare node needed; the node's capacity is missing meanwhile): tritonfleet's choice
# for reservation and scarce (8-GPU) pools, following https://cloud.google.com/kubernetes-engine/docs/how-to/
# node-upgrades-quota (read 2026-12-03). Flex-start nodes get GKE's short-lived upgrades instead (no surge settings).
IN_PLACE_UPGRADE = {"max_surge": 0, "max_unavailable": 1}

# A service account id: 6-30 characters, a lower-case letter first, lower-case letters, digits and hyphens, no hyphen
# last. Source: https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts/create (accountId),
# read 2026-12-03.
SERVICE_ACCOUNT_ID_PATTERN = r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$"
# The longest id (same source: https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts/create,
# read 2026-12-03).
SERVICE_ACCOUNT_ID_MAX = 30

# Machine type -> (local SSD disks of 375 GB it comes with, their total GiB as Google lists it). GKE backs a node's
# ephemeral storage (emptyDir, writable layers: Triton's model copy) with them through
# ephemeral_storage_local_ssd_config(local_ssd_count=N). Sources: https://cloud.google.com/compute/docs/accelerator-
# optimized-machines (A3 High/Mega/Ultra, A4 "attached Local SSD") and https://cloud.google.com/kubernetes-engine/docs/
# how-to/persistent-volumes/local-ssd, written down on 2026-12-03 without network access to those pages: VERIFY the
# counts on the machine-type pages.
BUNDLED_LOCAL_SSDS: dict[str, tuple[int, int]] = {
    "a3-highgpu-8g": (16, 6000),
    "a3-megagpu-8g": (16, 6000),
    "a3-ultragpu-8g": (32, 12000),
    "a4-highgpu-8g": (32, 12000),
}

# A regional cluster (or node pool) without node locations gets nodes in GKE's default zones of the region: three.
# Source: https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters, read 2026-12-03; VERIFY for
# regions with another zone count.
GKE_DEFAULT_REGION_ZONES = 3

# The node label GKE puts on every GPU node (value: the accelerator type); node agents select GPU nodes by it.
# Source: https://cloud.google.com/kubernetes-engine/docs/how-to/gpus ("cloud.google.com/gke-accelerator"), and
# Google's driver-installer DaemonSet (container-engine-accelerators @068b15a), read 2026-12-03.
GKE_GPU_NODE_LABEL = "cloud.google.com/gke-accelerator"

# Row sources of KUBERNETES_SUPPORT: GKE release schedule (https://cloud.google.com/kubernetes-engine/docs/release-schedule)
# as transcribed by endoflife.date, read 2026-12-03.
_SCHEDULE = "GKE release schedule via endoflife.date @00fa52a, read 2026-12-03"
# Extended-support ends derived from https://cloud.google.com/kubernetes-engine/versioning (24 months), read 2026-12-03.
_DERIVED = "extended end derived: Regular + 24 months (GKE versioning policy), read 2026-12-03"
# Which dates of a row are estimates (https://cloud.google.com/kubernetes-engine/docs/release-schedule, 2026-12-03).
_EXTENDED = ("extended",)
# Both dates estimated (https://cloud.google.com/kubernetes-engine/docs/release-schedule, 2026-12-03).
_BOTH = ("standard", "extended")
# GKE's support window per Kubernetes minor version: the date it reached the Regular channel, the end of standard support
# (about 14 months later; every channel) and of extended support (about 24 months after Regular, on the Extended channel
# only, billed extra). Source: GKE release schedule, https://cloud.google.com/kubernetes-engine/docs/release-schedule,
# as transcribed in endoflife-date/endoflife.date @00fa52a products/google-kubernetes-engine.md ("releaseDate is the
# availability date of the Regular release channel, eol is the End of standard support"), read 2026-12-03; the policy:
# https://cloud.google.com/kubernetes-engine/versioning ("up to a total of 24 months of support ... around 14 months
# of standard support and approximately an additional 10 months of extended support"), read 2026-12-03. The
# Regular channel's default for new clusters has been 1.35 since 2026-09-17 (GKE Regular channel release notes,
# https://cloud.google.com/kubernetes-engine/docs/release-notes-regular, 2026-R39).
# Extended-support ends are derived (Regular date + 24 months) and marked verify; so is 1.34's standard end (the
# transcription gives 12 months, not 14) and every 1.36 date (1.36 is listed in the Regular channel by mid-2026,
# release notes "Available minor versions 1.33 to 1.36"; its dates are estimates). README VERIFY list.
KUBERNETES_SUPPORT: tuple[KubernetesSupport, ...] = (
    KubernetesSupport("1.30", dt.date(2024, 7, 31), dt.date(2025, 9, 30), dt.date(2026, 7, 31), f"{_SCHEDULE}; {_DERIVED}", _EXTENDED),
    KubernetesSupport("1.31", dt.date(2024, 10, 25), dt.date(2026, 1, 16), dt.date(2026, 10, 25), f"{_SCHEDULE}; {_DERIVED}", _EXTENDED),
    KubernetesSupport("1.32", dt.date(2025, 2, 11), dt.date(2026, 4, 11), dt.date(2027, 2, 11), f"{_SCHEDULE}; {_DERIVED}", _EXTENDED),
    KubernetesSupport("1.33", dt.date(2025, 6, 3), dt.date(2026, 8, 3), dt.date(2027, 6, 3), f"{_SCHEDULE}; {_DERIVED}", _EXTENDED),
    KubernetesSupport(
        "1.34", dt.date(2025, 9, 30), dt.date(2026, 10, 1), dt.date(2027, 9, 30),
        f"{_SCHEDULE} (standard end as transcribed, 12 months after Regular); {_DERIVED}", _BOTH,
    ),
    KubernetesSupport("1.35", dt.date(2026, 2, 11), dt.date(2027, 4, 11), dt.date(2028, 2, 11), f"{_SCHEDULE}; {_DERIVED}", _EXTENDED),
    KubernetesSupport(
        "1.36", None, dt.date(2027, 8, 31), dt.date(2028, 6, 30),
        "estimate: in the Regular channel by mid-2026 (GKE release notes), Regular + 14 / 24 months", _BOTH,
    ),
)
# The channel on which a version past standard support stays supported (GKE API ReleaseChannel.Channel EXTENDED,
# https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#channel, read 2026-12-03).
EXTENDED_CHANNEL = "EXTENDED"

# Compute Engine GPU quota metrics (regional), per catalog GPU: on-demand and preemptible (spot; flex-start draws on
# the preemptible quota too, VERIFY). Project-wide, GPUS_ALL_REGIONS caps every GPU. Source: Compute Engine "GPU quota"
# (https://cloud.google.com/compute/resource-usage#gpu_quota) and the metric names `gcloud compute regions describe`
# prints, read 2026-12-03; the H200 and B200 names are VERIFY (the pages list them for A3 Ultra / A4 requests).
GPU_QUOTA_METRICS: dict[str, dict[str, str]] = {
    "L4": {"on-demand": "NVIDIA_L4_GPUS", "preemptible": "PREEMPTIBLE_NVIDIA_L4_GPUS"},
    "H100": {"on-demand": "NVIDIA_H100_GPUS", "preemptible": "PREEMPTIBLE_NVIDIA_H100_GPUS"},
    "H200": {"on-demand": "NVIDIA_H200_GPUS", "preemptible": "PREEMPTIBLE_NVIDIA_H200_GPUS"},
    "B200": {"on-demand": "NVIDIA_B200_GPUS", "preemptible": "PREEMPTIBLE_NVIDIA_B200_GPUS"},
}
# The project-wide GPU cap (https://cloud.google.com/compute/resource-usage#gpu_quota, read 2026-12-03).
GLOBAL_GPU_QUOTA_METRIC = "GPUS_ALL_REGIONS"
# Which quota a purchase option draws on; reservations consume quota when they are created, not when nodes use them
# (https://cloud.google.com/compute/docs/instances/reservations-overview, read 2026-12-03; flex-start VERIFY).
QUOTA_KIND_BY_OPTION = {"on-demand": "on-demand", "spot": "preemptible", "flex-start": "preemptible"}

# Zones that offer each GPU machine type, for regions we ship stacks in; a config naming other zones for a pool is
# refused before anything is planned. Regions or machine types not listed are not checked offline (`tritonfleet
# preflight` asks Compute Engine). Source: https://github.com/skypilot-org/skypilot-catalog catalogs/v7/gcp/vms.csv
# @017e2502 (one row per offering zone), read 2026-12-03; zones are added over time (VERIFY with preflight).
MACHINE_TYPE_ZONES: dict[str, dict[str, tuple[str, ...]]] = {
    "us-central1": {
        "g2-standard-8": ("us-central1-a", "us-central1-b", "us-central1-c"),
        "g2-standard-16": ("us-central1-a", "us-central1-b", "us-central1-c"),
        "g2-standard-48": ("us-central1-a", "us-central1-b", "us-central1-c"),
        "a3-highgpu-8g": ("us-central1-a", "us-central1-b", "us-central1-c"),
        "a3-ultragpu-8g": ("us-central1-b",),
    },
}

# GKE's node limits: 1,000 nodes per node pool per zone (a pool's maxNodes is its total over its zones), and 65,000
# nodes per cluster from GKE 1.31 (15,000 before; past 5,000 the cluster size quota must be lifted by support).
# Sources: https://cloud.google.com/kubernetes-engine/quotas ("Nodes per node pool zone: 1,000") and
# https://cloud.google.com/kubernetes-engine/docs/concepts/planning-large-clusters, read 2026-12-05.
MAX_NODES_PER_POOL_ZONE = 1_000
# Source: https://cloud.google.com/kubernetes-engine/docs/concepts/planning-large-clusters (read 2026-12-05).
MAX_NODES_PER_CLUSTER = 65_000

# A Compute Engine resource name (a reservation's, as a pool's reservationId names it in the stack's project): a
# lower-case letter, then up to 62 lower-case letters, digits or '-', not ending in '-'.
# Source: https://cloud.google.com/compute/docs/naming-resources (read 2026-12-05).
COMPUTE_NAME_PATTERN = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
