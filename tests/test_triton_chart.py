"""Our Triton chart, rendered by the real Helm engine (helm-python-sdk) for the values each shipped stack plans and for
edge values; every object validated with kubernetes-validate --strict; the ServiceMonitor against the Prometheus
Operator CRD schema; bad values rejected by values.schema.json or the chart's own checks."""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import STACKS

from components.k8s.autoscaling import INFERENCES_PER_SECOND, QUEUE_MS_PER_REQUEST
from components.k8s.triton import CHART_DIR
from tests.kube_validate import validate_strict
from tests.serving_helpers import KPS_CRDS, by_kind, planned_values, render, triton_cases
from tritonfleet.core import conventions, pins
from tritonfleet.core.catalog import FAST_SAFE_LOADER

# The minors our stacks may run (config default onward) up to the newest schema kubernetes-validate bundles.
KUBERNETES_VERSIONS = [f"1.{minor}" for minor in range(int(pins.KUBERNETES_VERSION.split(".")[1]), 38)]
PLANNED = triton_cases()

EDGE_VALUES: dict[str, dict[str, Any]] = {
    "minimal": {"modelRepository": "gs://models"},
    "explicit-with-models": {
        "modelRepository": "s3://models/llm",
        "modelControlMode": "explicit",
        "loadModels": ["llama", "embed"],
        "gpusPerReplica": 8,
        "replicas": {"min": 1, "max": 40},
        "autoscaling": {"enabled": True, "model": "llama", "inferencesPerSecond": {"target": "1600"}, "queueTime": {"targetMs": "20"}},
        "serviceMonitor": {"enabled": True, "labels": {"release": "kube-prometheus-stack"}},
        "spotNoticeSeconds": 30,
        "shutdown": {"preStopSeconds": 4, "exitTimeoutSeconds": 16, "terminationGracePeriodSeconds": 25},
        "modelLoadSeconds": 7200,
    },
    "poll-fixed-replicas": {
        "modelRepository": "s3://models",
        "modelControlMode": "poll",
        "repositoryPollSeconds": 300,
        "replicas": {"min": 3, "max": 3},
        "autoscaling": {"enabled": True, "queueTime": {"targetMs": "50"}},
        "topologySpread": {"whenUnsatisfiable": "DoNotSchedule"},
        "securityContext": {"readOnlyRootFilesystem": False},
        "extraArgs": ["--log-verbose=1"],
    },
    "model-cache": {
        "modelRepository": "s3://models/llm",
        "nodeSelector": {"tritonfleet.io/pool": "h200"},
        "modelCache": {"enabled": True, "hostPath": "/var/lib/kubelet/tritonfleet-model-cache", "view": "triton.triton-edge",
                       "models": ["llm:2", "embed"]},
    },
}
# (label, stack or None, release name, edge values or None): planned values are read from the plan when the test runs.
RENDERINGS = [(f"{stack}/{name}", stack, name, None) for stack, name in PLANNED] + [
    (f"edge/{label}", None, "triton-edge", values) for label, values in EDGE_VALUES.items()
]
IDS = [r[0] for r in RENDERINGS]


def _values(stack: str | None, name: str, edge: dict[str, Any] | None) -> dict[str, Any]:
    return planned_values(stack, name) if stack else edge


def test_the_shipped_stacks_plan_triton_releases():
    assert {stack for stack, _ in PLANNED} == set(STACKS)


def test_helm_lint_is_clean():
    import helm_python

    for values in [EDGE_VALUES["minimal"], *(planned_values(s, n) for s, n in PLANNED)]:
        result = helm_python.lint(str(CHART_DIR), values=values, strict=True, kube_version=f"v{pins.KUBERNETES_VERSION}.0")
        assert result["errors"] == [] and result["messages"] == [], result


def test_poll_mode_on_gke_spot_polls_within_the_drain_budget():
    """gcp-dev polls its repository on GKE spot (15 s grace): Triton is told to poll every 10 s, not the default 60."""
    values = planned_values("gcp-dev", "triton-resnet")
    args = by_kind(render(values, name="triton-resnet"))["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert values["modelControlMode"] == "poll" and "--repository-poll-secs=10" in args
    assert values["shutdown"]["exitTimeoutSeconds"] == 10


@pytest.mark.parametrize(("edge", "polls"), [("poll-fixed-replicas", True), ("explicit-with-models", False), ("minimal", False)])
def test_only_poll_mode_turns_auto_complete_off(edge, polls):
    """A poll may find a model before its config.pbtxt: Triton must not make one up (tests/test_triton_hardening_live.py)."""
    args = by_kind(render(EDGE_VALUES[edge]))["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert ("--disable-auto-complete-config" in args) is polls
    assert any(a.startswith("--repository-poll-secs=") for a in args) is polls


def test_egress_never_opens_to_anywhere():
    """An egress rule without `to` admits every destination: the chart renders none, with or without HTTPS endpoints
    (by default there are none: tritonfleet names each cloud's)."""
    for https in ([], ["52.216.0.0/15"]):
        values = {"modelRepository": "s3://models", "networkPolicy": {"egressHttpsCidrs": https}}
        (policy,) = [o for o in render(values) if o["kind"] == "NetworkPolicy"]
        egress = policy["spec"]["egress"]
        assert all(rule.get("to") for rule in egress)
        https_rules = [r for r in egress if {"port": 443, "protocol": "TCP"} in r["ports"]]
        assert [[peer["ipBlock"]["cidr"] for peer in r["to"]] for r in https_rules] == ([https] if https else [])


def test_chart_defaults_follow_the_pins():
    values = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    assert (values["image"]["repository"], values["image"]["tag"]) == (pins.TRITON_IMAGE_REPOSITORY, pins.TRITON_IMAGE_TAG)
    assert values["autoscaling"]["inferencesPerSecond"]["metric"] == INFERENCES_PER_SECOND
    assert values["autoscaling"]["queueTime"]["metric"] == QUEUE_MS_PER_REQUEST


@pytest.mark.parametrize(("label", "stack", "name", "edge"), RENDERINGS, ids=IDS)
def test_rendered_objects_pass_kubernetes_validate_strict(label, stack, name, edge):
    import kubernetes_validate

    values = _values(stack, name, edge)
    objects = render(values, name=name)
    for obj in objects:
        if obj["apiVersion"].startswith(("monitoring.coreos.com/", "argoproj.io/")):
            continue  # a CRD kind: checked against its CRD's schema (below; tests/test_rollout_chart.py)
        for version in KUBERNETES_VERSIONS:
            try:
                validate_strict(obj, version)
            except kubernetes_validate.SchemaNotFoundError as error:  # a missing schema would be a silent pass
                pytest.fail(f"{label}: no schema for {obj['kind']} {obj['apiVersion']} on {version}: {error}")


@cache
def _strict_crd_schema(kind: str) -> dict[str, Any]:
    """The CRD's v1 schema with unknown fields made errors (_strict), read once per test process; not to be changed."""
    return _strict(_crd_schema(kind))


def _crd_schema(kind: str) -> dict[str, Any]:
    for path in sorted(KPS_CRDS.glob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=FAST_SAFE_LOADER):
            if doc and doc.get("kind") == "CustomResourceDefinition" and doc["spec"]["names"]["kind"] == kind:
                version = next(v for v in doc["spec"]["versions"] if v["name"] == "v1")
                return version["schema"]["openAPIV3Schema"]
    raise AssertionError(f"no CRD for {kind} in {KPS_CRDS}")


def _strict(schema: Any) -> Any:
    """Structural CRD schemas prune unknown fields silently; for a test, make unknown fields an error instead."""
    if isinstance(schema, dict):
        schema = {k: _strict(v) for k, v in schema.items() if k not in ("x-kubernetes-int-or-string",)}
        if schema.get("type") == "object" and "properties" in schema and "additionalProperties" not in schema:
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


@pytest.mark.parametrize(("label", "stack", "name", "edge"), RENDERINGS, ids=IDS)
def test_service_monitor_matches_the_prometheus_operator_crd(label, stack, name, edge):
    values = _values(stack, name, edge)
    objects = by_kind(render(values, name=name))
    if not values.get("serviceMonitor", {}).get("enabled"):
        assert "ServiceMonitor" not in objects
        return
    monitor = objects["ServiceMonitor"]
    schema = _strict_crd_schema("ServiceMonitor")
    errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(monitor)]
    assert errors == []
    # Scraped by kube-prometheus-stack (its release label), on the Service's metrics port.
    assert monitor["metadata"]["labels"]["release"] == conventions.KUBE_PROMETHEUS_STACK_RELEASE
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"
    services = {o["metadata"]["name"]: o for o in render(values, name=name) if o["kind"] == "Service"}
    selected = [n for n, o in services.items() if monitor["spec"]["selector"]["matchLabels"].items() <= o["metadata"]["labels"].items()]
    assert selected == [f"{name}-metrics"], "only the ClusterIP metrics Service: 8002 is never on a load balancer"
    # The model-state exporter's PodMonitor: valid, and pointed at the sidecar's named port.
    pod_monitor = objects["PodMonitor"]
    schema = _strict_crd_schema("PodMonitor")
    errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(pod_monitor)]
    assert errors == []
    pod = objects["Deployment"]["spec"]["template"]
    ports = {p["name"] for c in pod["spec"]["containers"] for p in c.get("ports", [])}
    assert pod_monitor["spec"]["podMetricsEndpoints"][0]["port"] in ports
    assert pod_monitor["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()


def test_crd_check_catches_a_typo():
    schema = _strict_crd_schema("ServiceMonitor")
    bad = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor"}
    bad["spec"] = {"endpoints": [{"prot": "metrics"}], "selector": {}}
    assert list(jsonschema.Draft7Validator(schema).iter_errors(bad))


@pytest.mark.parametrize(("stack", "name"), PLANNED, ids=[f"{s}/{n}" for s, n in PLANNED])
def test_planned_deployment_shape(stack, name):
    values = planned_values(stack, name)
    rendered = render(values, name=name)
    objects = by_kind(rendered)
    deployment = objects["Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    gpus = values["gpusPerReplica"]
    assert container["resources"]["requests"]["nvidia.com/gpu"] == container["resources"]["limits"]["nvidia.com/gpu"] == gpus
    assert pod["tolerations"] == values["tolerations"]
    assert pod["nodeSelector"] == values["nodeSelector"]
    spread = {c["topologyKey"]: c for c in pod["topologySpreadConstraints"]}
    capacity = values["topologySpread"]["capacityTypeKey"]  # GKE only: Karpenter would hold it as required
    assert set(spread) == {"topology.kubernetes.io/zone", "kubernetes.io/hostname", *filter(None, [capacity])}
    hostname, wanted = spread["kubernetes.io/hostname"], values["topologySpread"]["hostname"]
    assert (hostname["maxSkew"], hostname["whenUnsatisfiable"]) == (wanted["maxSkew"], wanted["whenUnsatisfiable"])
    if wanted["whenUnsatisfiable"] == "DoNotSchedule":  # a prod minimum kept off one node
        assert hostname["minDomains"] == wanted["minDomains"] == 2 and hostname["nodeTaintsPolicy"] == "Honor"
    else:
        assert "minDomains" not in hostname
    # Probes: startup sized to the model load time, ready for readiness, live for liveness.
    startup = container["startupProbe"]
    assert startup["httpGet"]["path"] == container["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert container["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
    assert startup["periodSeconds"] * startup["failureThreshold"] >= values["modelLoadSeconds"]
    # Shutdown: preStop, Triton's drain and the grace period fit inside the spot notice.
    grace = pod["terminationGracePeriodSeconds"]
    pre_stop = int(container["lifecycle"]["preStop"]["exec"]["command"][-1])
    exit_timeout = int(next(a for a in container["args"] if a.startswith("--exit-timeout-secs=")).split("=")[1])
    assert pre_stop + exit_timeout < grace
    if values["spotNoticeSeconds"]:  # what a spot reclaim leaves the pod (GKE: its 15 s share of the notice)
        assert grace <= values["spotNoticeSeconds"]
    # Security and /dev/shm.
    assert pod["securityContext"]["runAsNonRoot"] and pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    shm = values.get("shmSize", "1Gi")  # sized by tritonfleet.core.sizing.shm_gi
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}} in pod["volumes"]
    # Repository, control mode and region.
    assert f"--model-repository={values['modelRepository']}" in container["args"]
    assert f"--model-control-mode={values['modelControlMode']}" in container["args"]
    env = {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}  # keys come from a Secret
    # The per-pod key's file (a path, not a key) where model control is restricted (docs/access.md).
    assert env.pop("CONTROL_KEY_FILE", "/run/tritonfleet/pod-key/key") == "/run/tritonfleet/pod-key/key"
    assert env == {**values["env"], "HOME": "/home/triton-server"}  # writable HOME under the read-only root fs
    if not stack.startswith("gcp-"):
        assert env["AWS_DEFAULT_REGION"] == "us-east-1"
    assert "AWS_ACCESS_KEY_ID" not in env
    # Service ports and the ServiceAccount the identity binding trusts.
    services = {o["metadata"]["name"]: o for o in rendered if o["kind"] == "Service"}
    assert {p["name"]: p["port"] for p in services[name]["spec"]["ports"]} == {"http": 8000, "grpc": 8001}
    assert {p["name"]: p["port"] for p in services[f"{name}-metrics"]["spec"]["ports"]} == {"metrics": 8002}
    assert objects["ServiceAccount"]["metadata"]["name"] == pod["serviceAccountName"] == name
    assert objects["PodDisruptionBudget"]["spec"]["maxUnavailable"] == values["podDisruptionBudget"]["maxUnavailable"] >= 1
    hpa = objects.get("HorizontalPodAutoscaler")
    if values["replicas"]["max"] > values["replicas"]["min"]:
        assert hpa["apiVersion"] == "autoscaling/v2"
        metrics = {m["pods"]["metric"]["name"]: m["pods"]["target"]["averageValue"] for m in hpa["spec"]["metrics"]}
        auto = values["autoscaling"]
        wanted = {
            INFERENCES_PER_SECOND: auto.get("inferencesPerSecond", {}).get("target"),
            QUEUE_MS_PER_REQUEST: auto.get("queueTime", {}).get("targetMs"),
            # an llm deployment: its sequences against its batch capacity, its KV cache against the whole cache, and
            # its time-to-first-token guard
            auto.get("sequences", {}).get("metric"): auto.get("sequences", {}).get("target"),
            auto.get("kvCache", {}).get("metric"): auto.get("kvCache", {}).get("target"),
            auto.get("ttft", {}).get("metric"): auto.get("ttft", {}).get("targetMs"),
        }
        assert metrics == {name: target for name, target in wanted.items() if target}
        assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (values["replicas"]["min"], values["replicas"]["max"])
        assert "replicas" not in deployment["spec"], "the HPA owns the replica count"
    else:
        assert hpa is None and deployment["spec"]["replicas"] == values["replicas"]["min"]


def test_spot_pools_get_shorter_grace_on_gcp_than_on_aws():
    graces = {}
    for stack, name in PLANNED:
        values = planned_values(stack, name)
        if values["spotNoticeSeconds"]:
            pod = by_kind(render(values, name=name))["Deployment"]["spec"]["template"]["spec"]
            graces[stack] = pod["terminationGracePeriodSeconds"]
    assert graces["gcp-prod"] < graces["prod"] < 120  # GKE's extended window leaves pods 105 s, AWS's notice 115 s


def test_explicit_mode_loads_the_listed_models_and_model_selector():
    objects = by_kind(render(EDGE_VALUES["explicit-with-models"]))
    args = objects["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [a for a in args if a.startswith("--load-model=")] == ["--load-model=llama", "--load-model=embed"]
    metric = objects["HorizontalPodAutoscaler"]["spec"]["metrics"][0]["pods"]["metric"]
    assert metric["selector"] == {"matchLabels": {"model": "llama"}}
    probe = objects["Deployment"]["spec"]["template"]["spec"]["containers"][0]["startupProbe"]
    assert probe["failureThreshold"] * probe["periodSeconds"] == 7200
    default_explicit = render({"modelRepository": "s3://models", "modelControlMode": "explicit"})
    args = by_kind(default_explicit)["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--load-model=*" in args


def _with(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    values = copy.deepcopy(base)
    *parents, last = path.split(".")
    node = values
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return values


GOOD = {"modelRepository": "s3://tf-prod-models/llm"}
BAD_VALUES = [
    ("modelRepository", "http://models"),
    ("modelRepository", ""),
    ("modelRepository", "s3://UPPER/models"),
    ("modelControlMode", "auto"),
    ("gpusPerReplica", 0),
    ("gpusPerReplica", 9),
    ("gpusPerReplica", "1"),
    ("image.tag", "latest"),
    ("replicas.min", 0),
    ("modelLoadSeconds", 5),
    ("tolerations", [{"key": "nvidia.com/gpu", "operator": "Equals", "effect": "NoSchedule"}]),
    ("tolerations", [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NO_SCHEDULE"}]),
    ("env", {"AWS_SECRET_ACCESS_KEY": "x"}),
    ("env", {"AWS_DEFAULT_REGION": 1}),
    ("resources.cpu", "two"),
    ("shutdown.terminationGracePeriodSeconds", -1),
    ("serviceMonitor.labels", {"release": "not a label value!"}),
    ("autoscaling.inferencesPerSecond.target", "lots"),
    ("autoscaling.queueTime.targetMs", "20ms"),
    ("autoscaling.kvCache.target", "most"),
    ("autoscaling.scaleDown.percent", 0),
    ("extraArgs", ["rm -rf /"]),
    ("nodeSelecter", {"a": "b"}),
    ("spotNoticeSeconds", 0),
    ("topologySpread.whenUnsatisfiable", "Never"),
]


@pytest.mark.parametrize(("path", "value"), BAD_VALUES, ids=[f"{p}={json.dumps(v)}" for p, v in BAD_VALUES])
def test_schema_rejects_bad_values(path, value):
    import helm_python

    with pytest.raises(helm_python.HelmValuesError):
        render(_with(GOOD, path, value))


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"replicas": {"min": 3, "max": 2}}, "replicas.max"),
        ({"shutdown": {"preStopSeconds": 15, "exitTimeoutSeconds": 110, "terminationGracePeriodSeconds": 120}}, "mid-drain"),
        ({"spotNoticeSeconds": 30}, "spot notice"),
        ({"loadModels": ["a"]}, "explicit"),
        ({"replicas": {"min": 1, "max": 3}, "autoscaling": {"enabled": True}}, "inferencesPerSecond.target"),
    ],
)
def test_chart_rejects_inconsistent_values(values, message):
    import helm_python

    with pytest.raises(helm_python.HelmError, match=message):
        render({**GOOD, **values})
