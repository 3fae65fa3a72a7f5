"""How big Prometheus must be for a stack: an estimate of the series the stack creates at its ceiling (every pool at
maxNodes, every deployment at maxReplicas), the memory that needs, and the disk the retention needs.

The per-source series counts are planning assumptions (named constants below, rounded up from typical exporters'
output), not measurements of this stack: the plan shows them so a user can compare with
`prometheus_tsdb_head_series` on a live cluster. The disk formula is Prometheus' own
(https://prometheus.io/docs/prometheus/latest/storage/#operational-aspects, as of 2026-12-03):
retention seconds x samples per second x bytes per sample, with "an average of only 1-2 bytes per sample"; we take 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tritonfleet.core.cluster_monitoring import SCRAPE_INTERVAL_SECONDS
from tritonfleet.core.config import StackConfig

# Planning assumptions: active series per source.
SERIES_PER_NODE = 800 + 300 + 40  # node-exporter's default collectors, kubelet, kube-state-metrics per node
SYSTEM_PODS_PER_NODE = 10  # DaemonSets on every node (CNI, kube-proxy, node-exporter, GPU Operator agents, logging)
SERIES_PER_POD = 60 + 40  # cAdvisor per container (1-3 containers) + kube-state-metrics per pod
SERIES_PER_GPU = 40  # dcgm-exporter's default counter set, per GPU
MODELS_PER_REPLICA = 10  # models loaded per Triton pod (the config does not list a repository's models)
SERIES_PER_MODEL_PER_REPLICA = 30  # Triton's nv_inference_* counters and summaries, failure reasons, pending requests
SERIES_CLUSTER_FIXED = 25_000  # API server histograms, CoreDNS/kube-dns, Prometheus, operator, Alertmanager, Grafana
RULE_OVERHEAD = 0.15  # recorded series on top (the chart's k8s.rules and ours)

# Memory: head series cost a few KiB each; we reserve 8 KiB per series for head, queries and compaction, plus a base.
BYTES_PER_SERIES = 8 * 1024
MEMORY_BASE_MIB = 512
MEMORY_LIMIT_FACTOR = 2  # limit = 2 x request: a burst of queries or churn must not OOM-kill it
BYTES_PER_SAMPLE = 2
# Blocks, WAL and head chunks all count against retentionSize; the rest of the volume is headroom for compaction.
RETENTION_SIZE_SHARE = 0.85
CPU_MILLICORES_PER_10K_SERIES = 100
CPU_MIN_MILLICORES = 500


@dataclass(frozen=True)
class PrometheusSizing:
    series: int
    memory_request_mib: int
    memory_limit_mib: int
    cpu_request_millicores: int
    disk_needed_gib: float  # for the configured retention at the estimated series
    retention_size_gib: int  # what Prometheus may keep at most (a share of its volume)
    retention_days: int
    storage_gi: int

    @property
    def retention_fits(self) -> bool:
        return self.disk_needed_gib <= self.retention_size_gib

    def warnings(self) -> list[str]:
        if self.retention_fits:
            return []
        days = self.retention_size_gib / self.disk_needed_gib * self.retention_days
        return [
            f"monitoring.storageGi: {self.retention_days} days of about {self.series} series need about "
            f"{self.disk_needed_gib:.0f} GiB, but retentionSize is {self.retention_size_gib} GiB "
            f"({RETENTION_SIZE_SHARE:.0%} of {self.storage_gi} GiB): Prometheus will keep about {days:.0f} days. Fix: "
            f"pulumi config set --path 'tritonfleet:monitoring.storageGi' {math.ceil(self.disk_needed_gib / RETENTION_SIZE_SHARE)}"
        ]


def estimated_series(config: StackConfig) -> int:
    """Active series at the stack's ceiling, recorded series included."""
    system_nodes = config.cluster.system_nodes.count
    gpu_nodes = sum(p.max_nodes for p in config.enabled_pools)
    gpus = sum(p.max_nodes * config.instance_type(p).gpu_count for p in config.enabled_pools)
    replicas = sum(d.max_replicas for d in config.triton_deployments)
    nodes = system_nodes + gpu_nodes
    series = (
        SERIES_CLUSTER_FIXED
        + nodes * (SERIES_PER_NODE + SYSTEM_PODS_PER_NODE * SERIES_PER_POD)
        + replicas * SERIES_PER_POD
        + gpus * SERIES_PER_GPU
        + replicas * MODELS_PER_REPLICA * SERIES_PER_MODEL_PER_REPLICA
    )
    return math.ceil(series * (1 + RULE_OVERHEAD))


def prometheus_sizing(config: StackConfig) -> PrometheusSizing:
    series = estimated_series(config)
    monitoring = config.monitoring
    request_mib = MEMORY_BASE_MIB + math.ceil(series * BYTES_PER_SERIES / 2**20)
    request_mib = math.ceil(request_mib / 256) * 256
    samples_per_second = series / SCRAPE_INTERVAL_SECONDS
    disk_bytes = monitoring.retention_days * 86_400 * samples_per_second * BYTES_PER_SAMPLE
    return PrometheusSizing(
        series=series,
        memory_request_mib=request_mib,
        memory_limit_mib=request_mib * MEMORY_LIMIT_FACTOR,
        cpu_request_millicores=max(CPU_MIN_MILLICORES, math.ceil(series / 10_000) * CPU_MILLICORES_PER_10K_SERIES),
        disk_needed_gib=round(disk_bytes / 2**30, 1),
        retention_size_gib=math.floor(monitoring.storage_gi * RETENTION_SIZE_SHARE),
        retention_days=monitoring.retention_days,
        storage_gi=monitoring.storage_gi,
    )
