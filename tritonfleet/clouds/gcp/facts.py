"""GCP and GKE facts the program and the policy pack rely on, each with its source and the date it was read.

The neutral core speaks Kubernetes and tritonfleet terms (taint effect NoSchedule); this module maps them to the GKE
API's spelling. Facts only a real account can confirm are marked VERIFY (README list).
"""

from __future__ import annotations

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


def control_plane_firewall_ports(called_ports: dict[str, int]) -> list[int]:
    """The ports the stack's APIServices and webhooks need opened from the control plane (GKE opens the rest)."""
    return sorted({port for port in called_ports.values() if port not in GKE_CONTROL_PLANE_OPEN_PORTS})
