"""Recording rules and alerts on the HPA's own signal: replicas wanted by load against running, and capacity headroom.

The HPA scales on inferences/s per pod (`nv_inference_count`, batch rows) over `SIGNAL_WINDOW` against the per-replica
capacity × targetUtilization: the measured capacity (a usable loadtestResult) where one exists, else the stated
`throughputPerReplica` (components/k8s/autoscaling.py serves it through prometheus-adapter). It counts only the models
clients call (`clientModels`, else the loadtest's model): an ensemble's steps report inferences of their own, and
summing every model of the pod would read 10 requests to a one-step ensemble as 20. These rules compute the same
figure per deployment, so a dashboard and an alert show what the HPA sees. Deployments without a capacity (queue-time
guard only) get the "scaling inactive" alert but no wanted/headroom series.
"""

from __future__ import annotations

from typing import Any

from tritonfleet.core.config import StackConfig, TritonDeployment
from tritonfleet.core.conventions import triton_release_name
from tritonfleet.core.llm_exports import serving_layout

SIGNAL_COUNTER = "nv_inference_count"  # inferences (batch rows), not requests: see docs/serving.md
SIGNAL_WINDOW = "1m"  # the adapter's rate window

# LLM deployments' HPA signals by layout (served by components/k8s/autoscaling.py): what saturates a replica is its
# batch of sequences and its KV cache, and what users feel is the first token. Each signal reads only what its layout
# exports (tritonfleet/core/llm_exports.py, the one table, with sources; tests/test_llm_exports.py): an HPA that reads
# a series its pods lack never scales down.
#   vllm: sequences in a pod from vLLM's end-to-end latency histogram by Little's law (the vllm_backend exports no
#     scheduler gauge, only with the open vllm_backend#92), TTFT from vllm:time_to_first_token_seconds; no KV cache.
#   engine (TensorRT-LLM's C++ in-flight batcher): nv_trt_llm_request_metrics{request_type="active"} and
#     nv_trt_llm_kv_cache_block_metrics used/max (blocks). Its "waiting" is active minus scheduled (r25.05
#     model_instance_state.cc), so it is inside "active"; the requests its executor queues past its max sequences
#     (TensorRT-LLM executorImpl.cpp, mMaxNumActiveRequests) are in no family: that signal tops out at the batch and
#     the TTFT guard sees the queue.
#   llmapi (TensorRT-LLM's LLM API model): no TensorRT-LLM family at all; only the TTFT guard, and the request-rate
#     signal where a capacity is stated or measured.
# The TensorRT-LLM layouts' TTFT is Triton's own first-response histogram of the decoupled model (ms).
SEQUENCES, KV_CACHE, TTFT = "sequences", "kvCache", "ttft"
LLM_SIGNALS = {
    "vllm": {SEQUENCES: "triton_vllm_sequences", TTFT: "triton_vllm_ttft_ms"},
    "engine": {SEQUENCES: "triton_trtllm_sequences", KV_CACHE: "triton_trtllm_kv_cache_usage",
               TTFT: "triton_trtllm_ttft_ms"},
    "llmapi": {TTFT: "triton_trtllm_ttft_ms"},
}  # fmt: skip

SERVED = "deployment:tritonfleet_inferences_per_second:rate" + SIGNAL_WINDOW
WANTED = "deployment:tritonfleet_replicas_wanted:count"
RUNNING = "deployment:tritonfleet_replicas_running:count"
HEADROOM = "deployment:tritonfleet_capacity_headroom:ratio"
HEADROOM_LOW = 0.1  # share of the running replicas' stated capacity still free
HEADROOM_LOW_FOR = "10m"
AT_MAXIMUM_FOR = "15m"


def hpa_target(capacity: float, target_utilization: float) -> float:
    """The load the HPA holds each replica at: its capacity (inferences/s, or an LLM's sequences) times
    targetUtilization, so the HPA's `desired = ceil(load / target)` is offered load ÷ usable capacity per replica.
    The HPA's own target (components/k8s/autoscaling.py) and these rules' wanted replicas both read it."""
    return capacity * target_utilization


def _pods_of(deployment: TritonDeployment) -> str:
    """The label matchers of a Deployment's pods (<release>-<replicaset hash>-<suffix>), narrowed to the models the
    HPA counts."""
    pods = f'namespace="{deployment.namespace}",pod=~"{triton_release_name(deployment.name)}-[a-z0-9]{{1,10}}-[a-z0-9]{{5}}"'
    models = deployment.counted_models
    if not models:
        return pods
    escaped = "|".join(m.replace(".", "\\\\.") for m in models)  # a literal dot in a PromQL regex string
    return f'{pods},model=~"{escaped}"'


def _labels(deployment: TritonDeployment) -> dict[str, str]:
    return {"deployment": triton_release_name(deployment.name)}


def _autoscaled(config: StackConfig) -> list[TritonDeployment]:
    return [d for d in config.triton_deployments if config.monitoring.enabled and d.max_replicas > d.min_replicas]


def autoscaling_rules(config: StackConfig) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    for d in _autoscaled(config):
        capacity = d.capacity_per_replica
        if capacity is None:
            continue
        name = triton_release_name(d.name)
        target = hpa_target(capacity, d.target_utilization)
        selector = f'namespace="{d.namespace}",deployment="{name}"'
        # One set per deployment under the same names: each rule's `deployment` label tells them apart (promtool
        # flags same-named rules without one).
        rules += [
            {
                "record": SERVED,
                "expr": f"sum by (namespace) (rate({SIGNAL_COUNTER}{{{_pods_of(d)}}}[{SIGNAL_WINDOW}]))",
                "labels": _labels(d),
            },
            # What the HPA's load metric asks for before min/max: offered load ÷ usable capacity per replica.
            {"record": WANTED, "expr": f"ceil({SERVED}{{{selector}}} / {target!r})", "labels": _labels(d)},
            {
                "record": RUNNING,
                "expr": f"sum by (namespace, deployment) (kube_deployment_status_replicas_available{{{selector}}})",
                "labels": _labels(d),
            },
            {
                "record": HEADROOM,
                "expr": f"1 - {SERVED}{{{selector}}} / on (namespace, deployment) "
                f"(({RUNNING}{{{selector}}} * {capacity!r}) > 0)",
                "labels": _labels(d),
            },
        ]
    return rules


def autoscaling_alerts(config: StackConfig) -> list[dict[str, Any]]:
    deployments = _autoscaled(config)
    if not deployments:
        return []
    namespaces = "|".join(sorted({d.namespace for d in deployments}))
    hpas = "|".join(sorted(triton_release_name(d.name) for d in deployments))
    alerts = [
        {
            "alert": "TritonAutoscalingInactive",
            "expr": f'kube_horizontalpodautoscaler_status_condition{{namespace=~"{namespaces}",'
            f'horizontalpodautoscaler=~"{hpas}",condition="ScalingActive",status="false"}} == 1',
            "for": "10m",
            "labels": {"severity": "critical"},
            "annotations": {
                "summary": "A Triton HPA cannot read its metrics",
                "description": "HPA {{ $labels.horizontalpodautoscaler }} in {{ $labels.namespace }} is not scaling: the "
                "custom metrics API does not answer (prometheus-adapter down, or on GKE the control plane cannot reach "
                "the adapter on port 6443: check the firewall rule) or Triton's series are missing.",
            },
        }
    ]
    for d in deployments:
        capacity = d.capacity_per_replica
        if capacity is None:
            continue
        selector = f'{{namespace="{d.namespace}",deployment="{triton_release_name(d.name)}"}}'
        alerts += [
            {
                "alert": "TritonLoadAboveMaxReplicas",
                "expr": f"{WANTED}{selector} > {d.max_replicas}",
                "for": AT_MAXIMUM_FOR,
                "labels": {"severity": "warning", **_labels(d)},
                "annotations": {
                    "summary": "Offered load needs more Triton replicas than maxReplicas allows",
                    "description": "{{ $labels.deployment }} in {{ $labels.namespace }} wants {{ $value }} replicas by "
                    f"its load (capacity {capacity:g} inferences/s per replica at "
                    f"{d.target_utilization:g} utilisation); maxReplicas is {d.max_replicas}: raise maxReplicas (and the "
                    "pool's maxNodes) or the per-replica capacity.",
                },
            },
            {
                "alert": "TritonCapacityHeadroomLow",
                "expr": f"{HEADROOM}{selector} < {HEADROOM_LOW}",
                "for": HEADROOM_LOW_FOR,
                "labels": {"severity": "warning", **_labels(d)},
                "annotations": {
                    "summary": "Triton replicas run near their stated capacity",
                    "description": "{{ $labels.deployment }} in {{ $labels.namespace }} has {{ $value | humanizePercentage }} "
                    "of its running replicas' stated capacity free: the HPA is behind (replicas pending, no GPU nodes) "
                    "or at maxReplicas.",
                },
            },
        ]
    return alerts


def load_signals(deployment: TritonDeployment) -> list[str]:
    """What the deployment's HPA scales on in proportion to load (guards aside): inferences/s against a capacity
    (stated, or measured: a loadtestResult, which plan.sizing.with_measured_capacities reads), and an LLM's sequences
    and KV cache where its layout exports them."""
    capacity = deployment.capacity_per_replica is not None or deployment.loadtest_result is not None
    signals = ["inferences/s"] if capacity else []
    if deployment.llm is not None:
        signals += [kind for kind in (SEQUENCES, KV_CACHE) if kind in LLM_SIGNALS[serving_layout(deployment.llm)]]
    return signals


def autoscaling_warnings(config: StackConfig) -> list[str]:
    """An autoscaled LLM deployment whose HPA has no load signal: TensorRT-LLM's LLM API layout without a stated or
    measured capacity scales only on its guards, after users already wait."""
    return [
        f"deployment {d.name}: TensorRT-LLM's LLM API layout exports no sequence or KV-cache metric, so its HPA has "
        "no load signal and scales only on time to first token (queue time stays near 0 for a streaming model); "
        "set throughputPerReplica or loadtestResult (tritonfleet loadtest --llm), or serve the engine layout"
        for d in _autoscaled(config)
        if d.llm is not None and not load_signals(d)
    ]


def autoscaling_group(config: StackConfig) -> dict[str, Any]:
    return {"name": "tritonfleet-autoscaling", "rules": autoscaling_rules(config) + autoscaling_alerts(config)}
