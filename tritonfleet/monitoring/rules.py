"""Prometheus recording and alerting rules for Triton, GPUs and cost, built from the stack config.

Names follow Prometheus' `level:metric:operations` convention. Units are the trap here: Triton counters are
cumulative microseconds without a `_total` suffix, `nv_gpu_utilization` is 0-1, `DCGM_FI_DEV_GPU_UTIL` is 0-100 and
`DCGM_FI_DEV_FB_USED`/`_FB_FREE` are MiB. Recorded series say their unit in the name (`seconds`, `percent`, `ratio`,
`mib`, `usd`).

Cost: the catalog price of every (pool, purchase option) the plan prices is written into the rules as a constant
series; nodes are matched to it by the labels the cloud adapters put on every GPU node (`tritonfleet.io/pool`,
`tritonfleet.io/capacity`, exported by kube-state-metrics). A price the catalog does not know is left out, never 0:
its nodes are counted by `pool_capacity:tritonfleet_nodes_without_price:count`, and every cost sum they would enter
is omitted rather than understated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tritonfleet.core.capacity import split_capacity
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.cloud import cloud
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import (
    CAPACITY_LABEL,
    GPU_LABEL,
    HOURS_PER_MONTH,
    MODEL_CACHE_NAMESPACE,
    POOL_LABEL,
    triton_release_name,
)
from tritonfleet.monitoring.autoscaling import autoscaling_group
from tritonfleet.monitoring.llm_rules import OUTPUT_TOKENS, llm_deployments, llm_rules

RATE_WINDOW = "5m"

# Alert thresholds (documented in docs/monitoring.md).
QUEUE_SECONDS_HIGH = 0.1  # average time a request waits in Triton's scheduler queue
FAILURE_RATIO_HIGH = 0.05  # failed / all requests of a model
GPU_UTIL_LOW_PERCENT = 10  # DCGM utilisation (0-100) averaged over a pool ...
GPU_UTIL_LOW_FOR = "3h"  # ... for this long counts as waste
GPU_IDLE_PERCENT = 5  # a GPU below this DCGM utilisation counts as idle (cost dashboard)
GPU_MEMORY_FULL_RATIO = 0.95  # framebuffer used / (used + free) ...
GPU_MEMORY_GROWTH_WINDOW = "1h"  # ... and used memory above what it was this long ago ...
GPU_MEMORY_GROWING_FOR = "2h"  # ... continuously for this long (longer than the window: one allocation cannot fire it)
XID_WINDOW = "15m"  # a new XID keeps GpuXidErrors firing this long
SPOT_NODES_STARTED_PER_HOUR = 3  # more new spot nodes in a pool within an hour means capacity is being reclaimed
MODEL_NOT_READY_FOR = "10m"  # a model reported not ready by the model-state exporter (a load retry may still succeed)
NOT_READY_GRACE_SECONDS = 300  # added to the slowest model load time before "replicas not ready" fires
SECONDS_PER_HOUR = 3600


def kube_state_label(node_label: str) -> str:
    """The label kube-state-metrics gives a Kubernetes label on `kube_node_labels` (non-alphanumerics become '_')."""
    return "label_" + "".join(c if c.isalnum() else "_" for c in node_label)


@dataclass(frozen=True)
class NodePrice:
    """What one node of a pool costs per hour when bought one way; `usd_per_hour` None means unknown."""

    pool: str
    capacity: str
    instance_type: str
    usd_per_hour: float | None
    source: str | None
    as_of: str | None


def node_prices(config: StackConfig) -> list[NodePrice]:
    """The prices the plan uses: every purchase option of every enabled pool, from the same catalog entry."""
    catalog = load_catalog()
    prices = []
    for pool in config.enabled_pools:
        itype = config.instance_type(pool)
        for option in split_capacity(pool).purchase:
            price = itype.price(option, config.region)
            prices.append(
                NodePrice(
                    pool=pool.name,
                    capacity=option,
                    instance_type=itype.name,
                    usd_per_hour=price.usd if price else None,
                    source=price.source if price else None,
                    as_of=str(catalog.sources[price.source].as_of) if price else None,
                )
            )
    return prices


def unknown_prices(config: StackConfig) -> list[str]:
    """`pool/option` for each price the catalog does not know (their cost series are omitted)."""
    return [f"{p.pool}/{p.capacity}" for p in node_prices(config) if p.usd_per_hour is None]


def _record(name: str, expr: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {"record": name, "expr": expr}
    if labels:
        rule["labels"] = labels
    return rule


def _alert(name: str, expr: str, duration: str, severity: str, summary: str, description: str) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": duration,
        "labels": {"severity": severity},
        "annotations": {"summary": summary, "description": description},
    }


# Triton counters recorded as per-second rates per namespace, pod and model.
TRITON_COUNTERS = (
    "nv_inference_request_success",
    "nv_inference_request_failure",
    "nv_inference_count",
    "nv_inference_exec_count",
    "nv_inference_request_duration_us",
    "nv_inference_queue_duration_us",
    "nv_inference_compute_input_duration_us",
    "nv_inference_compute_infer_duration_us",
    "nv_inference_compute_output_duration_us",
)
BY_POD = "namespace, pod, model"


def _pod_rate(metric: str) -> str:
    return f"namespace_pod_model:{metric}:rate{RATE_WINDOW}"


def triton_rules() -> list[dict[str, Any]]:
    """Rates per pod and model, then averages (seconds per request), batch size, queue/compute and failure ratios."""
    rules = [_record(_pod_rate(m), f"sum by ({BY_POD}) (rate({m}[{RATE_WINDOW}]))") for m in TRITON_COUNTERS]
    success = _pod_rate("nv_inference_request_success")
    compute = " + ".join(
        _pod_rate(m)
        for m in (
            "nv_inference_compute_input_duration_us",
            "nv_inference_compute_infer_duration_us",
            "nv_inference_compute_output_duration_us",
        )
    )
    for level, by in (("namespace_pod_model", BY_POD), ("namespace_model", "namespace, model")):

        def per_request(numerator: str, by: str = by) -> str:
            # microseconds per successful request -> seconds; no traffic gives no sample rather than NaN
            return f"sum by ({by}) ({numerator}) / 1e6 / (sum by ({by}) ({success}) > 0)"

        rules += [
            _record(
                f"{level}:tritonfleet_triton_request_seconds:avg{RATE_WINDOW}",
                per_request(_pod_rate("nv_inference_request_duration_us")),
            ),
            _record(
                f"{level}:tritonfleet_triton_queue_seconds:avg{RATE_WINDOW}",
                per_request(_pod_rate("nv_inference_queue_duration_us")),
            ),
            _record(f"{level}:tritonfleet_triton_compute_seconds:avg{RATE_WINDOW}", per_request(compute)),
            _record(
                f"{level}:tritonfleet_triton_batch_size:avg{RATE_WINDOW}",
                f"sum by ({by}) ({_pod_rate('nv_inference_count')})"
                f" / (sum by ({by}) ({_pod_rate('nv_inference_exec_count')}) > 0)",
            ),
            _record(
                f"{level}:tritonfleet_triton_queue_compute:ratio{RATE_WINDOW}",
                f"sum by ({by}) ({_pod_rate('nv_inference_queue_duration_us')})"
                f" / (sum by ({by}) ({_pod_rate('nv_inference_compute_infer_duration_us')}) > 0)",
            ),
        ]
    failure = _pod_rate("nv_inference_request_failure")
    rules.append(
        _record(
            f"namespace_model:tritonfleet_triton_failure:ratio{RATE_WINDOW}",
            f"sum by (namespace, model) ({failure}) / (sum by (namespace, model) ({success} + {failure}) > 0)",
        )
    )
    return rules


POOL_INFO = "node:tritonfleet_pool:info"
PRICE_UNKNOWN = "pool_capacity:tritonfleet_catalog_price:unknown"
POD_POOL_INFO = "namespace_pod:tritonfleet_pool:info"
PRICE = "tritonfleet_catalog_usd_per_node_hour"


def topology_rules(capacity_type_label: str | None = None) -> list[dict[str, Any]]:
    """Which pool (and purchase option) each node is in, and which pool each pod runs in. Where the cloud's
    provisioner labels how a node was bought (`capacity_type_label`), its spot/on-demand wins over the NodePool's
    preference: a burst node that fell back to on-demand is priced on-demand."""
    node_labels = f'kube_node_labels{{{kube_state_label(POOL_LABEL)}!=""}}'
    for target, source in (("pool", POOL_LABEL), ("capacity", CAPACITY_LABEL), ("gpu", GPU_LABEL)):
        node_labels = f'label_replace({node_labels}, "{target}", "$1", "{kube_state_label(source)}", "(.*)")'
    if capacity_type_label:
        node_labels = f'label_replace({node_labels}, "capacity", "$1", "{kube_state_label(capacity_type_label)}", "(spot|on-demand)")'
    return [
        _record(POOL_INFO, f"max by (node, pool, capacity, gpu) ({node_labels})"),
        _record(
            POD_POOL_INFO,
            f'max by (namespace, pod, node, pool) (kube_pod_info{{node!=""}} * on (node) group_left (pool) {POOL_INFO})',
        ),
    ]


DCGM_PER_GPU = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_POWER_USAGE")


def gpu_series(metric: str) -> str:
    return f"node_gpu_pool:{metric}:max"


def gpu_rules() -> list[dict[str, Any]]:
    """DCGM per GPU with the node and pool it sits in (joined through the exporter pod's own `namespace`/`pod`)."""
    rules = [
        _record(
            gpu_series(m),
            f"max by (node, pool, gpu, UUID) ({m} * on (namespace, pod) group_left (node, pool) {POD_POOL_INFO})",
        )
        for m in DCGM_PER_GPU
    ]
    used, free, util = gpu_series("DCGM_FI_DEV_FB_USED"), gpu_series("DCGM_FI_DEV_FB_FREE"), gpu_series("DCGM_FI_DEV_GPU_UTIL")
    rules += [
        _record("node_gpu_pool:tritonfleet_gpu_memory_used:ratio", f"{used} / (({used} + {free}) > 0)"),
        _record("pool:tritonfleet_gpu_util:avg_percent", f"avg by (pool) ({util})"),
        _record("pool:tritonfleet_gpus:count", f"count by (pool) ({util})"),
        _record("pool:tritonfleet_idle_gpus:count", f"sum by (pool) ({util} < bool {GPU_IDLE_PERCENT})"),
    ]
    return rules


def cost_rules(config: StackConfig) -> list[dict[str, Any]]:
    """Catalog prices as constants, $/hour per node, pool and stack, the monthly run rate and $ per 1M inferences."""
    rules = [
        _record(
            PRICE,
            f"vector({p.usd_per_hour!r})",
            {"pool": p.pool, "capacity": p.capacity, "instance_type": p.instance_type, "price_source": str(p.source)},
        )
        for p in node_prices(config)
        if p.usd_per_hour is not None
    ]
    # Prices the plan already reported as unknown: their nodes are expected, so they raise no alert.
    rules += [
        _record(PRICE_UNKNOWN, "vector(1)", {"pool": p.pool, "capacity": p.capacity})
        for p in node_prices(config)
        if p.usd_per_hour is None
    ]
    unpriced = "pool_capacity:tritonfleet_nodes_without_price:count"
    pool_usd = "pool:tritonfleet_usd_per_hour:sum"
    stack_usd = "stack:tritonfleet_usd_per_hour:sum"
    pool_ips = f"pool:tritonfleet_inferences_per_second:rate{RATE_WINDOW}"
    rules += [
        _record("node:tritonfleet_usd_per_hour:catalog", f"{POOL_INFO} * on (pool, capacity) group_left (instance_type) {PRICE}"),
        _record("pool_capacity:tritonfleet_nodes:count", f"count by (pool, capacity) ({POOL_INFO})"),
        _record(unpriced, f"count by (pool, capacity) ({POOL_INFO} unless on (pool, capacity) {PRICE})"),
        # A pool with any unpriced node has no cost figure at all (not an understated one); same for the stack,
        # which is 0 only when kube-state-metrics reports nodes and none of them is a GPU node.
        _record(pool_usd, f"sum by (pool) (node:tritonfleet_usd_per_hour:catalog) unless on (pool) {unpriced}"),
        _record(
            stack_usd,
            "(sum(node:tritonfleet_usd_per_hour:catalog) or vector(0))"
            f" unless on () (count({unpriced}) or absent(kube_node_labels))",
        ),
        _record("stack:tritonfleet_usd_per_month:run_rate", f"{stack_usd} * {HOURS_PER_MONTH}"),
        _record(
            pool_ips,
            f"sum by (pool) ({_pod_rate('nv_inference_count')} * on (namespace, pod) group_left (pool) {POD_POOL_INFO})",
        ),
        _record("stack:tritonfleet_inferences_per_second:rate" + RATE_WINDOW, f"sum({pool_ips})"),
    ]
    # $ per 1M inferences = $/hour / (inferences/s x 3600) x 1e6: the formula of tritonfleet.core.cost.cost_per_million.
    for level, usd, ips in (
        (("pool", pool_usd, pool_ips)),
        ("stack", stack_usd, "stack:tritonfleet_inferences_per_second:rate" + RATE_WINDOW),
    ):
        rules.append(
            _record(f"{level}:tritonfleet_usd_per_1m_inferences:ratio", f"{usd} / (({ips} * {SECONDS_PER_HOUR}) > 0) * 1e6")
        )
    rules.append(
        _record(
            "pool:tritonfleet_idle_usd_per_hour:estimate",
            f"{pool_usd} * on (pool) pool:tritonfleet_idle_gpus:count / on (pool) (pool:tritonfleet_gpus:count > 0)",
        )
    )
    return rules


GPU_RESOURCE = 'resource="nvidia_com_gpu"'  # kube-state-metrics' spelling of nvidia.com/gpu
POD_USD = "namespace_pod:tritonfleet_usd_per_hour:gpu_share"
DEPLOYMENT_USD = "deployment:tritonfleet_usd_per_hour:gpu_share"
MODEL_USD = "namespace_pod_model:tritonfleet_usd_per_hour:compute_share"
DEPLOYMENT_LABEL = "app.kubernetes.io/instance"  # the Triton chart's release name on every pod


def allocation_rules(config: StackConfig) -> list[dict[str, Any]]:
    """Each node's catalog $/hour split by the GPUs each pod requests (a pod pays requested / allocatable of its
    node), the unrequested rest shown as idle per node (the plan counts idle GPUs alike), and the pods' shares summed
    per Triton deployment (its release, `app.kubernetes.io/instance`). Pods, idle and the node add up exactly.

    Per model: a replica's share split by each model's compute time on it (input + infer + output), and $ per 1M
    inferences per model; a replica that computed nothing in the window leaves its cost with the deployment only. The
    stack's `team` and `cost-center` tags label its total, so several stacks in one Prometheus show back per team."""
    allocatable = "node:tritonfleet_gpus:allocatable"
    requested = "namespace_pod:tritonfleet_gpus:requested"
    compute = "(" + " + ".join(
        _pod_rate(f"nv_inference_compute_{part}_duration_us") for part in ("input", "infer", "output")
    ) + ")"
    node_usd = "node:tritonfleet_usd_per_hour:catalog"
    release = f'label_replace(kube_pod_labels{{{kube_state_label(DEPLOYMENT_LABEL)}!=""}}, "deployment", "$1", ' \
        f'"{kube_state_label(DEPLOYMENT_LABEL)}", "(.*)")'
    found = [
        _record(allocatable, f"sum by (node) (kube_node_status_allocatable{{{GPU_RESOURCE}}}) > 0"),
        _record(requested, f'sum by (namespace, pod, node) (kube_pod_container_resource_requests{{{GPU_RESOURCE}, node!=""}})'),
        _record(
            POD_USD,
            f"{requested} / on (node) group_left () {allocatable} * on (node) group_left (pool) {node_usd}",
        ),
        _record(
            "node:tritonfleet_idle_usd_per_hour:unrequested",
            f"({allocatable} - (sum by (node) ({requested}) or on (node) {allocatable} * 0)) / {allocatable}"
            f" * on (node) group_left (pool) {node_usd}",
        ),
        _record(
            DEPLOYMENT_USD,
            f"sum by (namespace, deployment) ({POD_USD} * on (namespace, pod) group_left (deployment) max by (namespace, pod, deployment) ({release}))",
        ),
        _record(MODEL_USD, f"{compute} / on (namespace, pod) group_left () (sum by (namespace, pod) ({compute}) > 0)"
                f" * on (namespace, pod) group_left (node, pool) {POD_USD}"),
        _record(
            "model:tritonfleet_usd_per_1m_inferences:ratio",
            f"sum by (model) ({MODEL_USD}) / ((sum by (model) ({_pod_rate('nv_inference_count')}) * {SECONDS_PER_HOUR}) > 0) * 1e6",
        ),
    ]
    for d in llm_deployments(config):  # an LLM's unit of work is the output token: $ per 1M of them in production
        share = f'sum({DEPLOYMENT_USD}{{namespace="{d.namespace}", deployment="{triton_release_name(d.name)}"}})'
        tokens = f'sum({OUTPUT_TOKENS}{{deployment="{d.name}"}})'
        found.append(_record("deployment:tritonfleet_usd_per_1m_output_tokens:ratio",
                             f"{share} / (({tokens} * {SECONDS_PER_HOUR}) > 0) * 1e6", {"deployment": d.name}))  # fmt: skip
    owners = {key.replace("-", "_"): value for key, value in config.tags.items() if key in ("team", "cost-center")}
    if owners:  # the stack's GPU nodes in all, pods' shares and idle, under its team and cost center
        found.append(
            _record("team:tritonfleet_usd_per_hour:gpu_share", f"sum({POD_USD}) + sum(node:tritonfleet_idle_usd_per_hour:unrequested)", owners)
        )
    return found


def _not_ready_for(config: StackConfig) -> str:
    slowest = max(d.model_load_seconds for d in config.triton_deployments)
    return f"{math.ceil((slowest + NOT_READY_GRACE_SECONDS) / 60)}m"


def alert_rules(config: StackConfig) -> list[dict[str, Any]]:
    queue = f"namespace_model:tritonfleet_triton_queue_seconds:avg{RATE_WINDOW}"
    failure = f"namespace_model:tritonfleet_triton_failure:ratio{RATE_WINDOW}"
    alerts = [
        _alert(
            "TritonQueueTimeHigh",
            f"{queue} > {QUEUE_SECONDS_HIGH}",
            "10m",
            "warning",
            "Triton requests wait in the queue",
            "Requests for model {{ $labels.model }} in {{ $labels.namespace }} wait {{ $value | humanizeDuration }} on average "
            "in Triton's queue: add replicas (check the HPA's maximum and the pool's GPUs) or raise the model's instance count.",
        ),
        _alert(
            "TritonFailureRatioHigh",
            f"{failure} > {FAILURE_RATIO_HIGH}",
            "10m",
            "critical",
            "Triton requests are failing",
            "{{ $value | humanizePercentage }} of requests for model {{ $labels.model }} in {{ $labels.namespace }} fail "
            "(see nv_inference_request_failure by reason).",
        ),
    ]
    alerts.append(
        _alert(
            "TritonModelNotReady",
            "max by (namespace, pod, model, state) (tritonfleet_triton_model_ready == 0)",
            MODEL_NOT_READY_FOR,
            "warning",
            "A Triton model failed to load",
            "Model {{ $labels.model }} is {{ $labels.state }} on {{ $labels.namespace }}/{{ $labels.pod }}: the replica serves "
            "its other models (it is not in requiredModels). Triton's log says why: search the pod's logs for "
            "\"failed to load '{{ $labels.model }}'\" (docs/monitoring.md, Logs).",
        )
    )
    if config.triton_deployments:
        namespaces = "|".join(sorted({d.namespace for d in config.triton_deployments}))
        selector = f'{{namespace=~"{namespaces}"}}'
        alerts.append(
            _alert(
                "TritonReplicasNotReady",
                f"kube_deployment_spec_replicas{selector} - kube_deployment_status_replicas_available{selector} > 0",
                _not_ready_for(config),
                "warning",
                "Triton replicas are not ready",
                "{{ $value }} replica(s) of {{ $labels.namespace }}/{{ $labels.deployment }} have not been available for longer "
                "than the slowest model load time: check for pending pods (no GPU capacity) or failing model loads.",
            )
        )
    if any(d.model_cache for d in config.triton_deployments):
        alerts.append(model_cache_cold_alert())
    alerts += [
        _alert(
            "GpuUtilizationLow",
            f"pool:tritonfleet_gpu_util:avg_percent < {GPU_UTIL_LOW_PERCENT}",
            GPU_UTIL_LOW_FOR,
            "warning",
            "GPUs are mostly idle",
            'GPUs of pool {{ $labels.pool }} averaged {{ $value | printf "%.1f" }}% utilisation for '
            f"{GPU_UTIL_LOW_FOR}: you are paying for idle GPUs; lower the pool's minNodes or the deployments' minReplicas.",
        ),
        # Backends that pre-allocate GPU memory by design (TensorRT-LLM's and vLLM's KV cache) sit near full all day:
        # a full framebuffer alone is no fault. What is one: memory that is near full AND kept growing for the whole
        # window (a leak, an unbounded cache). A one-off allocation at model load stops growing within the hour.
        _alert(
            "GpuMemoryNearFull",
            f"DCGM_FI_DEV_FB_USED / ((DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > 0) > {GPU_MEMORY_FULL_RATIO}"
            f" and DCGM_FI_DEV_FB_USED - DCGM_FI_DEV_FB_USED offset {GPU_MEMORY_GROWTH_WINDOW} > 0",
            GPU_MEMORY_GROWING_FOR,
            "warning",
            "GPU memory is nearly full and still growing",
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} uses {{ $value | humanizePercentage }} of its memory and its use "
            f"has grown over every {GPU_MEMORY_GROWTH_WINDOW} for {GPU_MEMORY_GROWING_FOR}: a leak or an unbounded cache; the "
            "next model load or a larger batch will fail with out-of-memory. (Memory pre-allocated once at load, such as a KV "
            "cache, does not fire this.)",
        ),
        # DCGM_FI_DEV_XID_ERRORS is a sticky gauge: it keeps the last XID until the exporter restarts
        # (NVIDIA/dcgm-exporter#500), so alert on a new value within the window, not on the value.
        _alert(
            "GpuXidErrors",
            f"changes(DCGM_FI_DEV_XID_ERRORS[{XID_WINDOW}]) > 0 and DCGM_FI_DEV_XID_ERRORS > 0",
            "0m",
            "critical",
            "GPU reported an XID error",
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} reported XID {{ $value }} within the last "
            f"{XID_WINDOW}: see NVIDIA's XID catalog; hardware XIDs (48, 63, 64, 74, 79, 94, 95) mean the node should be "
            "drained and replaced. The alert resolves on its own after the window (the gauge keeps the last XID); a repeat "
            "of the same XID does not change the gauge and is not seen again.",
        ),
        _alert(
            "SpotNodeChurn",
            f"count by (pool) (((time() - kube_node_created) < {SECONDS_PER_HOUR})"
            f' * on (node) group_left (pool) {POOL_INFO}{{capacity="spot"}}) >= {SPOT_NODES_STARTED_PER_HOUR}',
            "0m",
            "warning",
            "Spot nodes are being replaced",
            "{{ $value }} spot nodes of pool {{ $labels.pool }} started within the last hour: spot capacity for this GPU is "
            "being reclaimed (or the pool is scaling fast). Consider a larger on-demand base.",
        ),
        _alert(
            "NodesWithoutPrice",
            f"pool_capacity:tritonfleet_nodes_without_price:count > 0 unless on (pool, capacity) {PRICE_UNKNOWN}",
            "30m",
            "info",
            "Cost figures are incomplete",
            "{{ $value }} node(s) of pool {{ $labels.pool }} ({{ $labels.capacity }}) have no catalog price and the plan did "
            "not expect them, so cost series for that pool and the stack are omitted. (Prices the plan reported as unknown "
            "raise no alert: see the PrometheusRule's tritonfleet.io/unknown-prices annotation.)",
        ),
    ]
    budget = config.budget
    run_rate = "stack:tritonfleet_usd_per_month:run_rate"
    for name, fraction, severity in (
        ("BudgetRunRateHigh", budget.warn_fraction, "warning"),
        ("BudgetRunRateExceeded", 1.0, "critical"),
    ):
        limit = round(budget.monthly_usd * fraction, 2)
        alerts.append(
            _alert(
                name,
                f"{run_rate} > {limit}",
                "1h",
                severity,
                "GPU spend is on course to exceed the budget" if fraction == 1.0 else "GPU spend is approaching the budget",
                "At the current node count the GPU pools cost {{ $value | humanize }} USD a month, above "
                f"{limit} USD ({fraction:.0%} of the {budget.monthly_usd} USD budget).",
            )
        )
    return alerts


# A node's prefetch is Ready once its view is published and fresh (components/k8s/model_cache.py), so its DaemonSet's
# ready count is the warm nodes. A first fill on a new node takes the model fetch (minutes); half an hour without one
# means the prefetch cannot read the bucket or fill the disk, and every replica on that node reads the bucket.
MODEL_CACHE_COLD_FOR = "30m"


def model_cache_cold_alert() -> dict[str, Any]:
    """Nodes whose node-local model cache stays cold: their replicas start from the bucket (docs/serving.md)."""
    selector = f'{{namespace="{MODEL_CACHE_NAMESPACE}"}}'
    return _alert(
        "ModelCacheNodesCold",
        f"kube_daemonset_status_desired_number_scheduled{selector} - kube_daemonset_status_number_ready{selector} > 0",
        MODEL_CACHE_COLD_FOR,
        "warning",
        "Nodes without a warm model cache",
        "{{ $value }} node(s) of prefetch {{ $labels.daemonset }} have had no fresh model cache for "
        f"{MODEL_CACHE_COLD_FOR}: Triton replicas there read the bucket at every start. See the prefetch pod's log in "
        f"{MODEL_CACHE_NAMESPACE} (bucket access, a full disk) and docs/serving.md \"Node-local model cache\".",
    )


def rule_groups(config: StackConfig) -> list[dict[str, Any]]:
    """The rule groups, in the form of a Prometheus rule file and of a PrometheusRule's spec.groups."""
    return [
        {"name": "tritonfleet-triton", "rules": triton_rules()},
        {"name": "tritonfleet-topology", "rules": topology_rules(cloud(config.cloud).node_capacity_type_label)},
        {"name": "tritonfleet-gpu", "rules": gpu_rules()},
        {"name": "tritonfleet-cost", "rules": cost_rules(config) + allocation_rules(config)},
        {"name": "tritonfleet-alerts", "rules": alert_rules(config)},
        autoscaling_group(config),
        *([{"name": "tritonfleet-llm", "rules": llm_rules(config)}] if llm_deployments(config) else []),
    ]


def prometheus_rule(config: StackConfig, namespace: str) -> dict[str, Any]:
    """The PrometheusRule manifest; unknown prices are named in an annotation."""
    annotations = {"tritonfleet.io/unknown-prices": ", ".join(unknown_prices(config)) or "none"}
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": "tritonfleet",
            "namespace": namespace,
            "labels": {"app.kubernetes.io/part-of": "tritonfleet"},
            "annotations": annotations,
        },
        "spec": {"groups": rule_groups(config)},
    }
