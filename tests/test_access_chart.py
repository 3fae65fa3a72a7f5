"""Our chart in every exposure mode, rendered by the real Helm engine: objects pass kubernetes-validate --strict, the
keys reach Triton only as $(VAR) from a Secret (the admin key only the control proxy, Triton a per-pod key), Services/Ingresses/NetworkPolicies match the mode, and the schema
refuses a key written in clear."""

from __future__ import annotations

import copy
import ipaddress
import json

import pytest

from components.k8s.access import ADMIN, CONTROL_PROXY_PORT, GRPC_PATHS, INFERENCE, MODEL_CONTROL_APIS
from tests.access_helpers import ACCESS_CASES, FACTS, chart_values, deployment, pod_containers
from tests.kube_validate import CUSTOM_RESOURCE_GROUPS, validate_strict
from tests.serving_helpers import render
from tests.test_triton_chart import KUBERNETES_VERSIONS
from tritonfleet.core.exposure import INTERNAL, INTERNAL_APPLICATION, PUBLIC, uses_gateway

IDS = [c[0] for c in ACCESS_CASES]


def _objects(cloud: str, access: dict) -> tuple[dict, list[dict]]:
    values = chart_values(cloud, access)
    return values, render(values, name="triton-llm")


def _kind(objects: list[dict], kind: str) -> list[dict]:
    """Objects of a kind; the gRPC headless Service (docs/serving.md) is left out: these tests are about exposure."""
    return [o for o in objects if o["kind"] == kind and not o["metadata"]["name"].endswith("-grpc-headless")]


def _container(objects: list[dict]) -> dict:
    return _kind(objects, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]


# Custom resources: the Prometheus Operator's (tests/test_triton_chart.py), the Gateway API's and GKE's
# (tests/test_gcp_gateway.py).


@pytest.mark.parametrize(("label", "cloud", "access"), ACCESS_CASES, ids=IDS)
def test_every_mode_passes_kubernetes_validate_strict(label, cloud, access):
    _, objects = _objects(cloud, access)
    for obj in objects:
        if obj["apiVersion"].startswith(CUSTOM_RESOURCE_GROUPS):  # validated against their CRDs elsewhere
            continue
        for version in KUBERNETES_VERSIONS:
            validate_strict(obj, version)


@pytest.mark.parametrize(("label", "cloud", "access"), ACCESS_CASES, ids=IDS)
def test_keys_come_only_from_the_secret(label, cloud, access):
    values, objects = _objects(cloud, access)
    container = _container(objects)
    containers = pod_containers(objects)
    restricted = [a for a in container["args"] if a.startswith(("--http-restricted-api", "--grpc-restricted-protocol"))]
    restrict_control = access.get("restrictModelControl", True)
    groups = [INFERENCE] if access.get("restrictInference", False) else []
    assert len(restricted) == 2 * len(groups)
    for group in groups:
        apis = ",".join(group.apis)
        assert f"--http-restricted-api={apis}:{group.header}=$({group.env})" in restricted
        assert f"--grpc-restricted-protocol={apis}:{group.header}=$({group.env})" in restricted
        env = next(e for e in container["env"] if e["name"] == group.env)
        assert env == {"name": group.env, "valueFrom": {"secretKeyRef": {"name": "triton-llm-access-keys", "key": group.secret_key}}}
    # Nothing in any object carries a literal key: every restricted arg ends in an env reference.
    assert all(a.rsplit("=", 1)[1].startswith("$(") for a in restricted)
    assert not _kind(objects, "Secret"), "the chart never holds the keys; Pulumi creates the Secret"
    # The admin key reaches the control proxy only; Triton's admin group takes the per-pod key from the init container.
    holders = {name for name, c in containers.items() for e in c.get("env", []) if _secret_key(e) == ADMIN.secret_key}
    assert holders == ({"control-proxy"} if restrict_control else set())
    apis = ",".join(ADMIN.apis)
    script = " ".join(container["command"])
    assert (f'--http-restricted-api={apis}:{ADMIN.header}="$pod_key"' in script) == restrict_control
    assert (f'--grpc-restricted-protocol={apis}:{ADMIN.header}="$pod_key"' in script) == restrict_control
    assert ("pod-key" in containers) == ("control-proxy" in containers) == restrict_control


def _secret_key(env: dict) -> str | None:
    return env.get("valueFrom", {}).get("secretKeyRef", {}).get("key")


@pytest.mark.parametrize(("label", "cloud", "access"), ACCESS_CASES, ids=IDS)
def test_new_containers_are_restricted_and_the_proxy_only_on_loopback(label, cloud, access):
    _, objects = _objects(cloud, access)
    containers = pod_containers(objects)
    if "control-proxy" not in containers:
        return
    for name in ("pod-key", "control-proxy"):
        context = containers[name]["securityContext"]
        assert context["allowPrivilegeEscalation"] is False and context["runAsNonRoot"] is True
        assert context["capabilities"] == {"drop": ["ALL"]} and context["readOnlyRootFilesystem"] is True
    pod = _kind(objects, "Deployment")[0]["spec"]["template"]["spec"]
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert not pod.get("shareProcessNamespace"), "model code must not see the proxy's /proc"
    key_volume = next(v for v in pod["volumes"] if v["name"] == "pod-key")
    assert key_volume["emptyDir"]["medium"] == "Memory"
    port = containers["control-proxy"]["ports"][0]["containerPort"]
    assert port == CONTROL_PROXY_PORT
    service_ports = {p["targetPort"] for s in _kind(objects, "Service") for p in s["spec"]["ports"]}
    assert "control" not in service_ports and port not in service_ports
    policy = _kind(objects, "NetworkPolicy")[0]["spec"]
    allowed = {p["port"] for rule in policy["ingress"] for p in rule["ports"]}
    assert "control" not in allowed and port not in allowed


@pytest.mark.parametrize(("label", "cloud", "access"), ACCESS_CASES, ids=IDS)
def test_service_and_ingress_follow_the_exposure(label, cloud, access):
    _, objects = _objects(cloud, access)
    facts = FACTS[cloud]
    service = _kind(objects, "Service")[0]
    ingresses = _kind(objects, "Ingress")
    mode = deployment(access).access.mode
    grpc_port = next(p for p in service["spec"]["ports"] if p["name"] == "grpc")
    assert grpc_port["appProtocol"] == facts.grpc_app_protocol
    if mode == INTERNAL:
        assert service["spec"]["type"] == "LoadBalancer"
        assert service["metadata"]["annotations"] == facts.internal_service_annotations
    else:
        assert service["spec"]["type"] == "ClusterIP" and "annotations" not in service["metadata"]
    if mode not in (PUBLIC, INTERNAL_APPLICATION):
        assert ingresses == []
        return
    gateways = _kind(objects, "Gateway")
    if uses_gateway(deployment(access).access, facts):  # tests/test_gcp_gateway.py checks the Gateway itself
        assert ingresses == [] and [g["spec"]["gatewayClassName"] for g in gateways] == [facts.gateway_classes[mode]]
        return
    assert gateways == []
    grpc_routed = access.get("loadBalancerGrpc", True)
    assert len(ingresses) == (2 if facts.ingress_per_protocol and grpc_routed else 1)
    routes = {}
    for ingress in ingresses:
        annotations = ingress["metadata"]["annotations"]
        if facts.ingress_class_annotation:  # GKE: the class in the annotation, never in spec (the controller ignores it)
            assert annotations[facts.ingress_class_annotation] == facts.ingress_classes[mode]
            assert "ingressClassName" not in ingress["spec"]
        else:
            assert ingress["spec"]["ingressClassName"] == facts.ingress_classes[mode]
        (rule,) = ingress["spec"]["rules"]
        assert rule["host"] == access["hostname"]
        for path in rule["http"]["paths"]:
            routes[path["path"]] = path["backend"]["service"]["port"]["name"]
        assert facts.ingress_annotations[mode].items() <= annotations.items()
        tls = access["tls"]
        if "certificateArn" in tls or "preSharedCert" in tls:
            source = next(iter(tls))
            assert annotations[facts.certificate_annotations[source]] == tls[source]
            assert "tls" not in ingress["spec"]
        else:
            secret = tls.get("secretName") or "triton-llm-tls"
            assert ingress["spec"]["tls"] == [{"hosts": [access["hostname"]], "secretName": secret}]
            if "certManagerIssuer" in tls:
                assert annotations["cert-manager.io/cluster-issuer"] == tls["certManagerIssuer"]
    assert routes == {"/v2": "http", **{p: "grpc" for p in GRPC_PATHS if grpc_routed}}
    if facts.ingress_per_protocol and grpc_routed:  # HTTP/2 to the pods on the gRPC Ingress, one load balancer for both
        grpc = next(i for i in ingresses if i["metadata"]["name"].endswith("-grpc"))
        assert facts.grpc_ingress_annotations.items() <= grpc["metadata"]["annotations"].items()
        assert {i["metadata"]["annotations"][facts.ingress_group_annotation] for i in ingresses} == {"triton-llm"}


@pytest.mark.parametrize(("label", "cloud", "access"), ACCESS_CASES, ids=IDS)
def test_one_network_policy_selects_only_the_triton_pods(label, cloud, access):
    """The shape; tests/test_access_connectivity.py proves what it allows with a NetworkPolicy engine."""
    _, objects = _objects(cloud, access)
    (policy,) = _kind(objects, "NetworkPolicy")
    spec = policy["spec"]
    assert policy["metadata"]["name"] == "triton-llm"
    assert spec["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "triton-inference-server", "app.kubernetes.io/instance": "triton-llm"}}
    assert spec["policyTypes"] == ["Ingress", "Egress"]  # both: whatever is not allowed is denied to these pods
    clients, *load_balancer_http, metrics = spec["ingress"]
    assert [p["port"] for p in clients["ports"]] == ["http", "grpc"]
    # A load balancer that routes no gRPC (REST only) reaches the HTTP port alone, through a rule of its own.
    values = chart_values(cloud, access)["networkPolicy"]
    rest_only_balancer = values["loadBalancerCidrs"] and access.get("loadBalancerGrpc") is False
    assert [r["ports"] for r in load_balancer_http] == ([[{"port": "http", "protocol": "TCP"}]] if rest_only_balancer else [])
    sources = {p["ipBlock"]["cidr"] for rule in load_balancer_http for p in rule["from"]}
    assert sources == (set(values["loadBalancerCidrs"]) if rest_only_balancer else set())
    # Prometheus scrapes Triton's metrics and the model-state exporter beside it; nothing else reaches either port.
    assert metrics["ports"] == [{"port": "metrics", "protocol": "TCP"}, {"port": "model-state", "protocol": "TCP"}]
    pods = clients["from"][0]
    namespaces = access.get("clientNamespaces")
    if namespaces:
        assert pods["namespaceSelector"]["matchExpressions"][0]["values"] == namespaces
    else:
        assert "namespaceSelector" not in pods  # the release's own namespace only
    labels = access.get("clientPodLabels") or ({} if namespaces else {"tritonfleet.io/triton-llm-client": "true"})
    assert pods.get("podSelector", {}).get("matchLabels", {}) == labels


@pytest.mark.parametrize(("label", "cloud", "access"), ACCESS_CASES, ids=IDS)
def test_no_ip_block_admits_pod_addresses(label, cloud, access):
    """With the VPC CNI pods take VPC addresses, on GKE the pod range: an ipBlock over either admits every pod."""
    from tritonfleet.clouds.aws.layout import subnet_layout
    from tritonfleet.clouds.gcp.layout import POD_CIDR

    _, objects = _objects(cloud, access)
    (policy,) = _kind(objects, "NetworkPolicy")
    blocks = [ipaddress.ip_network(p["ipBlock"]["cidr"]) for rule in policy["spec"]["ingress"] for p in rule["from"] if "ipBlock" in p]
    pod_ranges = [ipaddress.ip_network(p.private_cidr) for p in subnet_layout(["a", "b", "c"])] if cloud == "aws" else [ipaddress.ip_network(POD_CIDR)]
    assert not [(b, r) for b in blocks for r in pod_ranges if b.overlaps(r)]


@pytest.mark.parametrize(("label", "cloud", "access"), ACCESS_CASES, ids=IDS)
def test_metrics_are_never_on_a_load_balancer(label, cloud, access):
    _, objects = _objects(cloud, access)
    services = {s["metadata"]["name"]: s["spec"] for s in _kind(objects, "Service")}
    assert [p["port"] for p in services["triton-llm"]["ports"]] == [8000, 8001]
    assert services["triton-llm-metrics"]["type"] == "ClusterIP"
    assert [p["port"] for p in services["triton-llm-metrics"]["ports"]] == [8002]
    if services["triton-llm"]["type"] == "LoadBalancer":
        assert services["triton-llm"]["externalTrafficPolicy"] == "Local"
        assert services["triton-llm"].get("loadBalancerSourceRanges", []) == access.get("clientCidrs", [])


BASE = {"modelRepository": "s3://models/llm"}
GROUP = {"apis": list(MODEL_CONTROL_APIS), "header": "admin-key", "env": "TRITON_ADMIN_KEY", "secretKey": "admin-key"}
BAD_VALUES = [
    ("clear key in extraArgs", {"extraArgs": ["--http-restricted-api=model-repository:admin-key=hunter2"]}),
    ("clear key via gRPC flag", {"extraArgs": ["--grpc-restricted-protocol=inference:k=v"]}),
    ("unknown API", {"restrictedApis": {"secretName": "s", "groups": [{**GROUP, "apis": ["model-control"]}]}}),
    ("header with upper case", {"restrictedApis": {"secretName": "s", "groups": [{**GROUP, "header": "Admin Key"}]}}),
    ("env var clash with a credential", {"restrictedApis": {"secretName": "s", "groups": [{**GROUP, "env": "AWS_SECRET_ACCESS_KEY"}]}}),
    ("NodePort service", {"service": {"type": "NodePort"}}),
    ("bad CIDR", {"networkPolicy": {"clientCidrs": ["ten/8"]}}),
    ("bad hostname", {"ingress": {"enabled": True, "hostname": "Bad_Host"}}),
    ("control proxy on Triton's HTTP port", {"controlProxy": {"port": 8000}}),
    ("control proxy on a privileged port", {"controlProxy": {"port": 80}}),
]


@pytest.mark.parametrize(("case", "values"), BAD_VALUES, ids=[c[0] for c in BAD_VALUES])
def test_schema_refuses(case, values):
    import helm_python

    with pytest.raises(helm_python.HelmValuesError):
        render({**BASE, **values})


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"restrictedApis": {"secretName": "", "groups": [GROUP]}}, "secretName"),
        ({"restrictedApis": {"secretName": "s", "groups": [GROUP, {**GROUP, "apis": ["trace"], "env": "B"}]}}, "two groups"),
        ({"ingress": {"enabled": True}}, "hostname"),
        ({"ingress": {"enabled": True, "hostname": "a.example.com"}}, "needs TLS"),
        ({"controlProxy": {"port": 8003}}, "each needs its own port"),
        ({"ingress": {"enabled": True, "hostname": "a.example.com", "certificateAnnotation": "x/cert"}}, "needs TLS"),
    ],
)
def test_chart_refuses_inconsistent_access(values, message):
    import helm_python

    with pytest.raises(helm_python.HelmError, match=message):
        render({**BASE, **copy.deepcopy(values)})


def test_defaults_render_private_and_unrestricted_for_standalone_installs():
    objects = render(BASE, name="triton-llm")
    assert _kind(objects, "Service")[0]["spec"]["type"] == "ClusterIP" and not _kind(objects, "Ingress")
    assert not [a for a in _container(objects)["args"] if "restricted" in a]
    assert json.dumps(objects).count("NetworkPolicy") == 1  # one policy, selecting the Triton pods only
