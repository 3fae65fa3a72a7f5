"""How long a new Triton replica takes to serve, step by step, and what that time must beat.

A replica on a fresh GPU node waits for the node, pulls the Triton image, copies its model repository from the bucket
(Triton copies an s3:// or gs:// repository to local disk before loading it), loads the models and runs the warm-up.
Each step is a measured value (tritonDeployments[].startup.measured) or an estimate from sourced figures: the image's
published size (pins.TRITON_IMAGE_GB) and the repository's size (repositoryGi) over the node's sustained network
bandwidth (the catalog's `network`). Downloads are floors: the disk and unpacking may be slower. A step with neither a
measurement nor a sourced figure is unknown, and the total is then "at least" the known steps, never a guess.

The sum is compared with what it must beat: the startup probe's patience (modelLoadSeconds: copy, load and warm-up
run inside it), the Helm release's timeout (the first `pulumi up` waits for minReplicas), the HPA reaching maxReplicas
before a spike's peak (startup.spikeRampSeconds at the chart's scale-up policy) and a spot node's notice. Each figure is
shown with and without the image cache and the node-local model cache, which skip the image pull and the model fetch.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from tritonfleet.core import pins
from tritonfleet.core.catalog import InstanceType
from tritonfleet.core.config.schema import StackConfig, TritonDeployment
from tritonfleet.core.scheduling import pool_facts

GIB_IN_GIGABITS = 8 * 2**30 / 1e9
GB_IN_GIGABITS = 8

# The HPA's scale-up policy (the chart's autoscaling.scaleUp, set from here by components/k8s/triton.py): each period
# it may add the larger of `percent` of the current replicas and `pods` replicas (selectPolicy Max, the default).
# Source: https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#scaling-policies, read 2026-12-05.
# Not paced by the start time: the HPA counts replicas still starting at 0 on a scale-up (kubernetes/kubernetes
# pkg/controller/podautoscaler/replica_calculator.go), so this policy asks for the load's replicas and no more while
# they start, and one step per start would only be slower (docs/serving.md "Autoscaling on Triton metrics").
HPA_SCALE_UP = {"percent": 100, "pods": 4, "periodSeconds": 60}
# The Helm release's timeout never goes below 15 minutes; above that it is the deployment's startup plus this margin.
HELM_TIMEOUT_FLOOR_SECONDS = 900
HELM_TIMEOUT_MARGIN_SECONDS = 600
# A replica's start waits at least this long for its node's model cache fill in progress (modelCache).
CACHE_WAIT_MIN_SECONDS = 120

STEPS = ("node", "image pull", "model fetch", "model load", "warm-up")
# The caches and the step each one skips: a preloaded or streamed image (docs/serving.md "Images") and the node-local
# model cache holding the published version (docs/serving.md "Node-local model cache").
CACHES = {"image": "image pull", "model": "model fetch"}
SCENARIOS = {"no cache": (), "image cache": ("image",), "model cache": ("model",), "both caches": ("image", "model")}
_MEASURED_KEY = {
    "node": "nodeSeconds",
    "image pull": "imagePullSeconds",
    "model fetch": "modelFetchSeconds",
    "model load": "loadSeconds",
    "warm-up": "warmupSeconds",
}


@dataclass(frozen=True)
class ImagePullPath:
    """A cloud's faster way to a new node's Triton image (Cloud.image_pull_path): SOCI parallel pull on EKS, image
    streaming on GKE. `seconds` is its sourced figure for the image step; None where the download floor still holds
    (the whole image still crosses the network) and only the basis says what runs it."""

    name: str  # short, for the plan's step line
    seconds: int | None
    basis: str  # where `seconds` comes from (with seconds), or "" (the floor's own basis is used)


@dataclass(frozen=True)
class Step:
    name: str
    seconds: int | None  # None: unknown (no measurement, no sourced figure)
    basis: str  # where the figure comes from, or how to measure it


@dataclass(frozen=True)
class Check:
    against: str
    limit_seconds: int
    needs_seconds: int  # the known part of what must fit
    complete: bool  # False: unknown steps come on top of needs_seconds

    @property
    def short(self) -> bool:
        return self.needs_seconds > self.limit_seconds


@dataclass(frozen=True)
class StartupBudget:
    deployment: str
    steps: tuple[Step, ...]
    totals: dict[str, int]  # scenario -> known seconds from a node's launch to ready
    complete: bool  # every step known
    checks: tuple[Check, ...]
    hpa_seconds_to_max: int  # scale-up periods until the HPA asks for maxReplicas
    max_replicas: int
    network_gbps: float | None  # the node's sustained bandwidth (catalog); None: unknown
    network_source: str | None

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)

    @property
    def short(self) -> bool:
        return any(c.short for c in self.checks)


# Triton's own --model-load-thread-count default (tritonserver --help of the pinned release).
TRITON_DEFAULT_LOAD_THREADS = 4
LOAD_THREADS_MAX = 64


def model_load_threads(deployment: TritonDeployment, replica_cpus: int) -> int:
    """Models Triton loads in parallel: the stated modelLoadThreads, else one per CPU the replica requests, never
    below Triton's default (loading waits on disk as much as on CPU)."""
    if deployment.model_load_threads is not None:
        return deployment.model_load_threads
    return min(LOAD_THREADS_MAX, max(TRITON_DEFAULT_LOAD_THREADS, replica_cpus))


def image_gb(deployment: TritonDeployment) -> tuple[float | None, str]:
    """GB of the deployment's image and where the figure comes from."""
    if deployment.startup.image_gb is not None:
        return deployment.startup.image_gb, "stated"
    flavour = re.sub(r"^\d{2}\.\d{2}-", "", deployment.image_tag)
    size = pins.TRITON_IMAGE_GB.get(flavour)
    return size, ("pins" if size is not None else "")  # pins.TRITON_IMAGE_GB


def helm_timeout_seconds(deployment: TritonDeployment) -> int:
    """The Triton release's Helm timeout: long enough for a node to join, the image to pull and the models to load."""
    return max(HELM_TIMEOUT_FLOOR_SECONDS, deployment.model_load_seconds + HELM_TIMEOUT_MARGIN_SECONDS)


def hpa_periods_to_max(min_replicas: int, max_replicas: int, policy: dict[str, int] = HPA_SCALE_UP) -> int:
    """Scale-up periods the HPA needs from minReplicas to maxReplicas when every period asks for the most it may."""
    replicas, periods = min_replicas, 0
    while replicas < max_replicas:
        replicas = min(max_replicas, max(replicas * (100 + policy["percent"]) // 100, replicas + policy["pods"]))
        periods += 1
    return periods


def _download(gigabits: float | None, gbps: float | None, what: str, source: str | None) -> tuple[int | None, str]:
    if gigabits is None or gbps is None:
        return None, ""
    return math.ceil(gigabits / gbps), f"{what} at {gbps:g} Gbps ({source}), a floor"


def llm_weights_gb(deployment: TritonDeployment) -> float | None:
    """GB of an LLM deployment's weights (parameters x bytes per weight, core/llm.py facts): what its repository holds
    at least, whatever repositoryGi says; None for other deployments or an unknown architecture."""
    if deployment.llm is None:
        return None
    from tritonfleet.core.llm import architecture_of, load_llm_facts

    arch = architecture_of(deployment.llm)
    return arch.parameters_b * load_llm_facts().precision_bytes[deployment.llm.precision] if arch else None


def startup_steps(config: StackConfig, deployment: TritonDeployment) -> tuple[Step, ...]:
    pool = config.pool(deployment.pool)
    return _steps(deployment, config.instance_type(pool), image_pull_path(config, deployment))


def image_pull_path(config: StackConfig, deployment: TritonDeployment) -> ImagePullPath | None:
    """The cloud's faster image pull on the deployment's pool, if it has one on."""
    from tritonfleet.core.cloud import cloud

    return cloud(config.cloud).image_pull_path(config, config.pool(deployment.pool))


def _image_step(size: float | None, size_source: str, gbps: float | None, source: str | None,
                path: ImagePullPath | None) -> tuple[int | None, str]:
    """The image pull's estimate: the pool's faster path where it gives a figure, else the download floor."""
    if path is not None and path.seconds is not None:
        return path.seconds, path.basis
    if path is not None and size and gbps is not None:  # the floor, shortened so the step's line fits 80 columns
        return math.ceil(size * GB_IN_GIGABITS / gbps), f"{size:g} GB at {gbps:g} Gbps, {path.name}, a floor"
    return _download(size * GB_IN_GIGABITS if size else None, gbps, f"{size:g} GB image ({size_source})" if size else "",
                     source)


def _steps(deployment: TritonDeployment, instance_type: InstanceType | None,
           path: ImagePullPath | None = None) -> tuple[Step, ...]:
    network = instance_type.network if instance_type else None
    gbps, source = (network.gbps, network.source) if network else (None, None)
    size, size_source = image_gb(deployment)
    weights = llm_weights_gb(deployment)
    if weights is not None and weights * GB_IN_GIGABITS > deployment.repository_gi * GIB_IN_GIGABITS:
        fetch = (weights * GB_IN_GIGABITS, f"{weights:.1f} GB of weights")
    else:
        fetch = (deployment.repository_gi * GIB_IN_GIGABITS, f"{deployment.repository_gi} GiB repository")
    estimates = {
        "image pull": _image_step(size, size_source, gbps, source, path),
        "model fetch": _download(fetch[0], gbps, fetch[1], source),
    }
    measured = deployment.startup.measured.model_dump(by_alias=True)
    steps = []
    for name in STEPS:
        key = _MEASURED_KEY[name]
        if measured[key] is not None:
            steps.append(Step(name, measured[key], "measured"))
            continue
        seconds, basis = estimates.get(name, (None, ""))
        steps.append(Step(name, seconds, basis or f"unknown: measure, set startup.measured.{key}"))
    return tuple(steps)


def _known(steps: tuple[Step, ...], skip: tuple[str, ...] = ()) -> int:
    return sum(s.seconds or 0 for s in steps if s.name not in skip)


def cached_start_seconds(steps: tuple[Step, ...]) -> int:
    """A new replica's start with the node-local model cache (modelCache): the "model cache" total, where the cache
    already holds the version (minNodes and warm capacity, which the prefetch DaemonSet pre-warms), plus on a new node
    the part of the model fetch its DaemonSet's fill does not hide behind Triton's image pull (both start with the
    node)."""
    fetch = next((s.seconds for s in steps if s.name == "model fetch"), None) or 0
    pull = next((s.seconds for s in steps if s.name == "image pull"), None) or 0
    return _known(steps, (CACHES["model"],)) + max(0, fetch - pull)


def cache_wait_seconds(deployment: TritonDeployment, instance_type: InstanceType | None) -> int:
    """How long a starting replica waits for its node's model cache fill in progress before it reads the bucket
    itself: twice the model fetch estimate (a floor of the real fetch) and at least CACHE_WAIT_MIN_SECONDS, never more
    than half the startup probe's patience (modelLoadSeconds), so the bucket fallback keeps the other half."""
    fetch = next(s.seconds for s in _steps(deployment, instance_type) if s.name == "model fetch")
    half = deployment.model_load_seconds // 2
    return min(half, max(CACHE_WAIT_MIN_SECONDS, 2 * fetch)) if fetch is not None else half


def startup_budget(config: StackConfig, deployment: TritonDeployment) -> StartupBudget:
    steps = startup_steps(config, deployment)
    complete = all(s.seconds is not None for s in steps)
    totals = {name: _known(steps, tuple(CACHES[c] for c in caches)) for name, caches in SCENARIOS.items()}
    in_pod = ("model fetch", "model load", "warm-up")  # what runs inside the startup probe's patience
    in_pod_steps = tuple(s for s in steps if s.name in in_pod)
    periods = hpa_periods_to_max(deployment.min_replicas, deployment.max_replicas)
    hpa_seconds = periods * HPA_SCALE_UP["periodSeconds"]
    checks = [
        Check("startup probe (modelLoadSeconds)", deployment.model_load_seconds, _known(in_pod_steps),
              all(s.seconds is not None for s in in_pod_steps)),
        Check("Helm timeout", helm_timeout_seconds(deployment), totals["no cache"], complete),
    ]
    if deployment.startup.spike_ramp_seconds is not None and deployment.max_replicas > deployment.min_replicas:
        against, start = "spike ramp (maxReplicas serving)", totals["no cache"]
        if deployment.model_cache:
            against, start = "spike ramp (maxReplicas serving, model cache)", cached_start_seconds(steps)
        checks.append(Check(against, deployment.startup.spike_ramp_seconds, hpa_seconds + start, complete))
    notice = pool_facts(config, config.pool(deployment.pool)).spot_notice_seconds
    if notice is not None:
        checks.append(Check("spot notice", notice, totals["no cache"], complete))
    network = config.instance_type(config.pool(deployment.pool)).network
    return StartupBudget(
        deployment=deployment.name,
        steps=steps,
        totals=totals,
        complete=complete,
        checks=tuple(checks),
        hpa_seconds_to_max=hpa_seconds,
        max_replicas=deployment.max_replicas,
        network_gbps=network.gbps if network else None,
        network_source=network.source if network else None,
    )


@dataclass(frozen=True)
class FirstRequest:
    """What the first request after idle waits for when a deployment scaled to zero (docs/serving.md "Idle
    capacity to zero"): a replica's start, from a new node when the pool may have none left."""

    seconds: int  # the known steps
    complete: bool  # False: unknown steps come on top of `seconds`
    new_node: bool  # the pool may be empty (minNodes 0), so the start includes the node's launch
    steps: str  # the steps counted, for messages

    @property
    def text(self) -> str:
        return f"{'' if self.complete else 'at least '}{self.seconds} s"


def first_request_wait(deployment: TritonDeployment, instance_type: InstanceType | None, new_node: bool,
                       path: ImagePullPath | None = None) -> FirstRequest:
    """The cold start a request meets at zero replicas: every step of the startup budget when it needs a new node
    (its pool may scale to none: minNodes 0, which KEDA's zero lets the node autoscaler do), else all but the node's
    launch. `path`: the pool's faster image pull, where the caller knows the stack (config rules do not yet: their
    wait is the whole pull's, never shorter than the plan's)."""
    steps = tuple(s for s in _steps(deployment, instance_type, path) if new_node or s.name != "node")
    return FirstRequest(
        seconds=_known(steps),
        complete=all(s.seconds is not None for s in steps),
        new_node=new_node,
        steps=", ".join(f"{s.name} {s.seconds} s" if s.seconds is not None else f"{s.name} ?" for s in steps),
    )


def _fix(at: str, check: Check, deployment: TritonDeployment) -> str:
    if check.against.startswith("startup probe"):
        value = min(7200, math.ceil(check.needs_seconds * 2 / 60) * 60)
        return f"pulumi config set --path 'tritonfleet:{at}.modelLoadSeconds' {value}"
    if check.against == "Helm timeout":
        value = min(7200, check.needs_seconds - HELM_TIMEOUT_MARGIN_SECONDS + 60)
        return f"measure the steps, or pulumi config set --path 'tritonfleet:{at}.modelLoadSeconds' {value}"
    if check.against.startswith("spike"):
        cache = "" if deployment.model_cache else f", and pulumi config set --path 'tritonfleet:{at}.modelCache' true"
        return (
            f"raise minReplicas (pulumi config set --path 'tritonfleet:{at}.minReplicas' N), or keep warm capacity "
            f"and the image and model caches (docs/serving.md \"Startup budget\"){cache}"
        )
    return "keep replicas on on-demand nodes or spare replicas (minReplicas) to cover a reclaim"


def startup_warnings(config: StackConfig) -> list[str]:
    """A warning per check a deployment's start cannot meet, with the figure, the caches' effect and the fix.

    The spot notice is never met by a fresh node (minutes against 30-120 s), so it is shown in the plan, not warned."""
    warnings = []
    for i, deployment in enumerate(config.triton_deployments):
        budget = startup_budget(config, deployment)
        at = f"tritonDeployments[{i}]"
        warnings.extend(_idle_nodes_warning(config, deployment, at))
        weights = llm_weights_gb(deployment)
        if weights is not None and weights * 1e9 > deployment.repository_gi * 2**30:
            needed = math.ceil(weights * 1e9 / 2**30 * 1.1)
            warnings.append(
                f"{at}.repositoryGi: {deployment.repository_gi} GiB is less than the weights of {deployment.name} "
                f"({weights:.1f} GB): Triton's copy outgrows its /tmp limit and the pod is evicted mid-copy, on every "
                f"start. Fix: pulumi config set --path 'tritonfleet:{at}.repositoryGi' {needed}"
            )
        for check in budget.checks:
            if not check.short or check.against == "spot notice":
                continue
            floor = "" if check.complete else "at least "
            warnings.append(
                f"{at} ({deployment.name}): {check.against} is {check.limit_seconds} s but a new replica needs "
                f"{floor}{check.needs_seconds} s ({_steps_text(budget)}; with the image and model caches "
                f"{budget.totals['both caches']} s). Fix: {_fix(at, check, deployment)}"
            )
    return warnings


def _idle_nodes_warning(config: StackConfig, deployment: TritonDeployment, at: str) -> list[str]:
    """Scale-to-zero stops the replicas; a pool with minNodes > 0 keeps its GPU nodes (and their bill) all the same."""
    if deployment.scale_to_zero is None:
        return []
    index, pool = next((j, p) for j, p in enumerate(config.gpu_pools) if p.name == deployment.pool)
    if pool.min_nodes == 0:
        return []
    return [
        f"{at}.scaleToZero: idle, {deployment.name} runs no replica, but gpuPools[{index}] ({pool.name}) keeps "
        f"minNodes {pool.min_nodes} GPU nodes running and billed. Fix: pulumi config set --path "
        f"'tritonfleet:gpuPools[{index}].minNodes' 0 (the first request then waits for a new node too)"
    ]


def _steps_text(budget: StartupBudget) -> str:
    return ", ".join(f"{s.name} {s.seconds} s" if s.seconds is not None else f"{s.name} ?" for s in budget.steps)


def budget_lines(row: dict) -> list[str]:
    """The plan's text lines for one deployment's startup budget, from its plan row (plan/document.startup_section);
    each fits 80 columns."""
    floor = "" if row["complete"] else " (at least)"
    totals = row["totals"]
    lines = [f"Triton '{row['deployment']}' startup: {totals['no cache']} s{floor}, new node to ready"]
    for step in row["steps"]:
        seconds = step["seconds"] if step["seconds"] is not None else "?"
        lines.append(f"  {step['name']:<11} {seconds:>5} s  {step['basis']}")
    lines.append("  " + ", ".join(f"{name} {seconds} s" for name, seconds in totals.items()) + floor)
    if row["hpa_seconds_to_max"]:
        serving = row["hpa_seconds_to_max"] + totals["no cache"]
        lines.append(
            f"  a spike: HPA asks for {row['max_replicas']} replicas after {row['hpa_seconds_to_max']} s, "
            f"serving after {serving} s{floor}"
        )
    if row.get("modelCache"):  # only where it is on (shipped plans keep their rows)
        lines.append("  model cache on: a node it pre-warmed skips the model fetch; a new node")
        lines.append("    fills it while the image pulls (the spike check counts that)")
    if "scaleToZero" in row:  # only where the deployment scales to zero (shipped plans keep their rows)
        idle = row["scaleToZero"]
        floor_text = "" if idle["complete"] else " (at least)"
        where = "a new node" if idle["newNode"] else "a running node"
        lines.append(f"  scale to zero after {idle['idleMinutes']} min idle: the first request then waits")
        lines.append(f"    {idle['seconds']} s{floor_text}, a replica's start on {where}")
    for check in row["checks"]:
        verdict = "misses" if check["short"] else "meets" if check["complete"] else "may miss (steps unknown)"
        lines.append(f"  {check['against']} {check['limit_seconds']} s: {verdict}")
    return lines
