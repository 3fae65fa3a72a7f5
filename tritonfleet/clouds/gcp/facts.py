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
# How GKE's cluster autoscaler turns pending pods into nodes (tritonfleet/core/placement.py counts the plan's nodes
# with these). It scales up for pods the scheduler cannot place, simulating the scheduler's filters: a ScheduleAnyway
# spread is a score, not a filter, so it never adds a node; a DoNotSchedule spread does. Sources:
# https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md ("How does scale-up work?") and
# https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/ (whenUnsatisfiable), read
# 2026-12-05.
PREFERRED_SPREADS_ADD_NODES = False
# A new node the autoscaler simulates is one more domain of a hostname spread, counted like every other eligible node
# (kube-scheduler's rule), so a hostname spread does not cap what one new node takes. Source:
# https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/ (skew = pods in the domain
# minus the global minimum over eligible domains), read 2026-12-05.
HOSTNAME_SPREAD_CAPS_NEW_NODES = False
# A mixed pool is an on-demand node pool and a spot node pool, each with its own autoscaling bounds: the spot pool's
# maximum is the spotShare of the burst, so the split holds (tritonfleet/core/cost.py). The compute class tries the
# spot pool before the on-demand one (components/gcp/compute_classes.py), so below maxNodes the burst is spot first.
# Source: https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes (priorities are tried
# in order), read 2026-12-05.
SPOT_SHARE_ENFORCED = True
# No exposure mode splits a canary's traffic by weight here: the GKE Ingress has no weighted backends, and weights
# need Gateway API HTTPRoutes (Argo Rollouts' Gateway API plugin), which tritonfleet does not ship; every mode is a
# replica-ratio canary. Source: https://github.com/argoproj/argo-rollouts/blob/v1.9.1/docs/features/traffic-management/
# google-cloud.md (read 2026-12-05).
ROLLOUT_TRAFFIC_ROUTERS: dict[str, str] = {}
# GKE labels a GPU or TPU node whose VM has a host maintenance event scheduled (GPUs do not live-migrate, and host
# events bypass maintenance windows and exclusions) with this label, its value the start time in epoch seconds, from
# 1.31.1-gke.2008000. Triton replicas prefer nodes without it (components/gcp/compute_classes.py). Sources:
# https://cloud.google.com/ai-hypercomputer/docs/manage/manage-gke-clusters ("Monitor host maintenance events",
# "Schedule Pods on nodes without a future scheduled maintenance") and
# https://cloud.google.com/kubernetes-engine/docs/how-to/view-maintenance-events, read 2026-12-05.
SCHEDULED_MAINTENANCE_LABEL = "cloud.google.com/scheduled-maintenance-time"
# The GKE version from which GPU nodes carry that label (same source,
# https://cloud.google.com/kubernetes-engine/docs/how-to/view-maintenance-events, read 2026-12-05).
SCHEDULED_MAINTENANCE_LABEL_MIN_VERSION = "1.31.1-gke.2008000"
# Flex-start VMs run at most seven days, then GKE removes them; a node pool sets the limit with max_run_duration
# (node_config.max_run_duration, seconds with an "s"). Source:
# https://cloud.google.com/kubernetes-engine/docs/concepts/dws ("up to seven days"), and the pulumi-gcp 9.x
# NodePoolNodeConfig.max_run_duration field, read 2026-12-05.
FLEX_START_MAX_RUN_SECONDS = 7 * 24 * 3600

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

# The DNS-based control-plane endpoint: a per-cluster name under gke.goog that, with allow_external_traffic, takes
# traffic from any address and passes a request only when IAM grants the caller container.clusters.connect; the IP
# endpoints stay as configured (private in prod). Its name is the cluster's controlPlaneEndpointsConfig
# .dnsEndpointConfig.endpoint; its server certificate chains to a public root, so a kubeconfig gives no cluster CA for
# it (VERIFY). Sources: https://cloud.google.com/kubernetes-engine/docs/concepts/network-isolation ("DNS-based
# endpoint") and https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters
# (DNSEndpointConfig.allowExternalTraffic), read 2026-12-05.
DNS_ENDPOINT_PERMISSION = "container.clusters.connect"
# gke-gcloud-auth-plugin, the exec credential plugin of GKE kubeconfigs, is a gcloud component that GitHub's hosted
# runner images do not install (https://github.com/actions/runner-images/issues/6778, read 2026-12-05; install:
# https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin). The stack's
# Kubernetes provider therefore authenticates with the deployer's OAuth access token
# (gcp.organizations.get_client_config().access_token).
GKE_AUTH_PLUGIN = "gke-gcloud-auth-plugin"
# An OAuth access token lives one hour by default: https://cloud.google.com/docs/authentication/token-types
# ("Access tokens"), read 2026-12-05.
ACCESS_TOKEN_LIFETIME_S = 3600


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
# GKE Gateway (gRPC through an Application load balancer, docs/access.md "Public, GCP"). A GKE Ingress speaks HTTP/2
# to a backend only over TLS (https://cloud.google.com/kubernetes-engine/docs/how-to/ingress-http2, read 2026-12-05);
# the GKE Gateway controller also speaks cleartext HTTP/2 to a Service port whose appProtocol is kubernetes.io/h2c
# ("The supported fields for appProtocol are: HTTP, HTTPS, HTTP2, and kubernetes.io/h2c":
# https://cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway#load-balancer-tls, read 2026-12-05 as quoted
# in github.com/openbao/openbao-helm/issues/151; VERIFY on a cluster), which is what Triton's gRPC port speaks.
# GatewayClasses: gke-l7-global-external-managed (global external Application Load Balancer) and gke-l7-rilb (regional
# internal Application Load Balancer, proxies in the proxy-only subnet); both single-cluster, GA. Source:
# https://cloud.google.com/kubernetes-engine/docs/how-to/gatewayclass-capabilities (read 2026-12-05).
GKE_EXTERNAL_GATEWAY_CLASS = "gke-l7-global-external-managed"
# Same source: https://cloud.google.com/kubernetes-engine/docs/how-to/gatewayclass-capabilities (read 2026-12-05).
GKE_INTERNAL_GATEWAY_CLASS = "gke-l7-rilb"
# Same source as the appProtocol values above: https://cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway
# (read 2026-12-05; VERIFY on a cluster).
GKE_H2C_APP_PROTOCOL = "kubernetes.io/h2c"
# A GKE Standard cluster serves the Gateway API CRDs once gatewayApiConfig.channel is CHANNEL_STANDARD (Autopilot by
# default). Source: https://cloud.google.com/kubernetes-engine/docs/how-to/deploying-gateways ("Enable Gateway API"),
# read 2026-12-05. GKE 1.34.1-gke.1822000 and later install Gateway API v1.4.0, 1.35.2-gke.1842000 and later v1.5.0
# (gatewayclass-capabilities, read 2026-12-05): the tests validate against v1.4.0's CRDs (tests/upstream).
GKE_GATEWAY_API_CHANNEL = "CHANNEL_STANDARD"
# A Gateway listener takes Compute Engine SSL certificates by name through this TLS option (global ones for the
# external class, regional ones in the cluster's region for gke-l7-rilb). Source:
# https://cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway ("pre-shared-certs"), read 2026-12-05.
GKE_GATEWAY_PRE_SHARED_CERT_OPTION = "networking.gke.io/pre-shared-certs"
# HealthCheckPolicy (networking.gke.io/v1) sets the health check of the backend services made from the Service it
# targets (same namespace; a Service for a single-cluster Gateway). Source:
# https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources ("Configure health check"),
# read 2026-12-05.
GKE_HEALTH_CHECK_POLICY = {"apiVersion": "networking.gke.io/v1", "kind": "HealthCheckPolicy"}
# A LoadBalancer Service gets GKE's internal passthrough Network Load Balancer only with this annotation and value
# (without it, an external one). Source: https://cloud.google.com/kubernetes-engine/docs/concepts/service-load-balancer-parameters
# and .../how-to/internal-load-balancing (read 2026-12-05). The policy pack tells internal Services by it.
GKE_LB_TYPE_ANNOTATION = "networking.gke.io/load-balancer-type"
# Source: https://cloud.google.com/kubernetes-engine/docs/concepts/service-load-balancer-parameters (read 2026-12-05).
GKE_INTERNAL_LB_TYPE = "Internal"

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

# The local SSDs a machine type comes with (GKE backs a node's ephemeral storage with them through
# ephemeral_storage_local_ssd_config(local_ssd_count=N)) are a catalog column: tritonfleet/core/catalog.yaml
# `host.localSsd` (source GCPAOM).

# ---- GPU facts: per-type answers (tritonfleet/core/cloud.py) ----
# A GKE node pool attaches GPUs by accelerator type (node_config.guest_accelerator.type), so every catalog row names
# it. Source: https://cloud.google.com/kubernetes-engine/docs/how-to/gpus ("--accelerator type=..."), read 2026-12-03.
MACHINE_TYPES_NAME_THEIR_ACCELERATOR = True
# The CPU architectures tritonfleet's GPU nodes are set up for: its driver setups (Google's driver installer on COS,
# the GPU Operator's driver on Ubuntu) and pinned images are used on x86_64 machine types only. GKE would boot an
# arm64 image on an arm64 type (A4X, NVIDIA Grace: https://cloud.google.com/compute/docs/accelerator-optimized-machines,
# 2026), but tritonfleet's choice is to refuse it until that setup is verified there.
GPU_NODE_ARCHITECTURES = ("x86_64",)
# The node-local model cache's directory: where GKE mounts the local SSDs that back a node's ephemeral storage
# (ephemeral_storage_local_ssd_config), the folder Google's A3 serving recipes mount with hostPath for model caches
# (https://github.com/AI-Hypercomputer/gpu-recipes/blob/main/src/helm-charts/a3mega/sglang-inference/templates/lws-deployment.yaml,
# read 2026-12-05; GKE's own page,
# https://cloud.google.com/kubernetes-engine/docs/concepts/local-ssd, 2026, names emptyDir only: VERIFY on a node
# that `df` of this path names the local SSD array).
MODEL_CACHE_HOST_PATH = "/mnt/stateful_partition/kube-ephemeral-ssd/tritonfleet-model-cache"
# The boot disk type of every catalog machine type: A3 Ultra and A4 boot only from Hyperdisk (no Persistent Disk);
# the others take pd-balanced. Source: https://cloud.google.com/compute/docs/disks/disks-and-machine-series ("Disk
# support by machine series"), written down 2026-12-03 without network access: VERIFY. A row per catalog type
# (tests/test_catalog_facts.py); other machine types (system nodes) boot from DEFAULT_BOOT_DISK_TYPE.
BOOT_DISK_TYPES: dict[str, str] = {
    "g2-standard-8": "pd-balanced",
    "g2-standard-16": "pd-balanced",
    "g2-standard-48": "pd-balanced",
    "a3-highgpu-8g": "pd-balanced",
    "a3-ultragpu-8g": "hyperdisk-balanced",
    "a4-highgpu-8g": "hyperdisk-balanced",
}
# E2 and the other general-purpose series the system nodes use take Persistent Disk (same source,
# https://cloud.google.com/compute/docs/disks/disks-and-machine-series, 2026-12-03).
DEFAULT_BOOT_DISK_TYPE = "pd-balanced"

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
# @017e2502 (one row per offering zone), read 2026-12-03; zones are added over time (VERIFY with preflight). Every
# listed region has a row for every catalog machine type (None: not known offline), tests/test_catalog_facts.py.
MACHINE_TYPE_ZONES: dict[str, dict[str, tuple[str, ...] | None]] = {
    "us-central1": {
        "g2-standard-8": ("us-central1-a", "us-central1-b", "us-central1-c"),
        "g2-standard-16": ("us-central1-a", "us-central1-b", "us-central1-c"),
        "g2-standard-48": ("us-central1-a", "us-central1-b", "us-central1-c"),
        "a3-highgpu-8g": ("us-central1-a", "us-central1-b", "us-central1-c"),
        "a3-ultragpu-8g": ("us-central1-b",),
        "a4-highgpu-8g": None,  # no a4 row in that snapshot: not checked offline (preflight asks Compute Engine)
    },
}


# Private Google Access by name: a private DNS zone for this domain sends the Google API names to
# private.googleapis.com (https://cloud.google.com/vpc/docs/configure-private-google-access#config-domain, read
# 2026-12-05).
GOOGLE_APIS_DOMAIN = "googleapis.com"
# private.googleapis.com answers for the Google APIs on these four addresses, reached from a subnet with Private
# Google Access (https://cloud.google.com/vpc/docs/configure-private-google-access#domain-options, read 2026-12-05).
PRIVATE_GOOGLE_APIS_CIDR = "199.36.153.8/30"
# Project APIs the stack calls, enabled by the stack itself (a new project has most of them off). container: GKE;
# compute: VPC, subnets, NAT, node VMs; iam: service accounts and their bindings; iamcredentials: Workload Identity's
# token exchange for Triton's pods; storage: model buckets; logging and monitoring: GKE's default system logs and
# metrics; cloudresourcemanager: the project IAM bindings (the nodes' role) read and set the project's IAM policy;
# serviceusage: enabling these APIs goes through it; cloudkms only where a bucket names a KMS key. Source: GKE quickstart / "Enable the Google Kubernetes Engine
# API" and the Workload Identity Federation for GKE how-to (https://cloud.google.com/kubernetes-engine/docs/how-to/
# workload-identity, "enable the IAM Service Account Credentials API"), read 2026-12-03; cloudresourcemanager and
# serviceusage: the provider's google_project_iam_member and google_project_service call them
# (https://registry.terraform.io/providers/hashicorp/google/latest/docs/guides/getting_started, "enable the APIs",
# and https://cloud.google.com/service-usage/docs/enable-disable, read 2026-12-05). serviceusage must already be on
# to enable anything through it: preflight reports it (tritonfleet/clouds/gcp/preflight.py), and every API that is off.
PROJECT_APIS = (
    "container.googleapis.com",
    "compute.googleapis.com",
    "iam.googleapis.com",
    "iamcredentials.googleapis.com",
    "storage.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
    "cloudresourcemanager.googleapis.com",
    "serviceusage.googleapis.com",
    "dns.googleapis.com",  # the private zone that sends Google API names to private.googleapis.com (network.py)
)
# cloudkms: only where a bucket names a key (https://cloud.google.com/storage/docs/encryption/using-customer-managed-keys,
# "enable the Cloud KMS API", read 2026-12-05).
KMS_API = "cloudkms.googleapis.com"
# Service Usage: enabling any API goes through it (https://cloud.google.com/service-usage/docs/enable-disable, read
# 2026-12-05).
SERVICE_USAGE_API = "serviceusage.googleapis.com"


def project_apis(uses_kms: bool) -> list[str]:
    """The APIs the stack enables in its project."""
    return [*PROJECT_APIS, *([KMS_API] if uses_kms else [])]

# What `pulumi up` of a GCP stack does with the deployer's identity, one permission per kind of change (tritonfleet's
# choice of a representative each; names from https://cloud.google.com/iam/docs/permissions-reference, read
# 2026-12-05). Preflight asks the project which of them its caller holds
# (https://cloud.google.com/resource-manager/reference/rest/v1/projects/testIamPermissions).
DEPLOYER_PERMISSIONS = (
    "serviceusage.services.enable",
    "compute.networks.create",
    "compute.firewalls.create",
    "container.clusters.create",
    "container.clusters.connect",
    "iam.serviceAccounts.create",
    "resourcemanager.projects.setIamPolicy",
    "storage.buckets.create",
)

# Managed Service for Prometheus' managed collection is on by default in GKE Standard clusters from 1.27: its collector
# DaemonSet runs on every node (GPU nodes included) and scrapes nothing unless PodMonitorings exist. tritonfleet runs
# kube-prometheus-stack, so the stack turns it off (monitoring_config.managed_prometheus.enabled false) and keeps
# GKE's system metrics (SYSTEM_COMPONENTS, the Standard default). Source:
# https://cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed ("enabled by default ... 1.27", disable
# managed collection) and https://cloud.google.com/kubernetes-engine/docs/how-to/configure-metrics, read 2026-12-05.
GKE_MONITORING_COMPONENTS = ("SYSTEM_COMPONENTS",)

# GKE's node limits: 1,000 nodes per node pool per zone (a pool's maxNodes is its total over its zones), and 65,000
# nodes per cluster from GKE 1.31 (15,000 before; past 5,000 the cluster size quota must be lifted by support).
# Sources: https://cloud.google.com/kubernetes-engine/quotas ("Nodes per node pool zone: 1,000") and
# https://cloud.google.com/kubernetes-engine/docs/concepts/planning-large-clusters, read 2026-12-05.
MAX_NODES_PER_POOL_ZONE = 1_000
# Source: https://cloud.google.com/kubernetes-engine/docs/concepts/planning-large-clusters (read 2026-12-05).
MAX_NODES_PER_CLUSTER = 65_000

# ---- Image streaming's figure for the startup budget (tritonfleet/clouds/gcp/image_mirror.py) ----
# With image streaming a container goes from ImagePulling to Running "in a couple of seconds (regardless of container
# size)" once the streaming mount is prepared (read here as 2 s); the image's files then stream while Triton loads, so
# the reads move into the model load step, and the first pull of an image (before the streaming backend caches it)
# gets no benefit. Sources: https://cloud.google.com/blog/products/containers-kubernetes/introducing-container-image-
# streaming-in-gke (2021-11-03) and https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming
# ("Limitations"), read 2026-12-05.
IMAGE_STREAMING_START_SECONDS = 2
# Eligible images: those in a standard or a remote Artifact Registry repository, or public on Docker Hub (the page's
# "Requirements" as its Chinese edition reads; https://docs.cloud.google.com/kubernetes-engine/docs/how-to/
# image-streaming?hl=zh-cn, read 2026-12-05).
IMAGE_STREAMING_REPOSITORY_MODES = ("STANDARD_REPOSITORY", "REMOTE_REPOSITORY")
