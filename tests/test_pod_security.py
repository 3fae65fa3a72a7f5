"""Pod Security Admission on the namespaces tritonfleet creates: each enforces (and audits and warns at) the level its
pods meet, read from the rendered Namespace objects of every shipped stack's plan, and every pod tritonfleet renders
there — each Triton release through the real Helm engine, the capacity placeholders from the plan — meets that level
by the Pod Security Standards' checks (tests/pod_security.py)."""

from __future__ import annotations

import copy

import pytest
from conftest import STACKS

from components.k8s.pod_security import pod_security_labels
from tests.pod_security import violations
from tests.serving_helpers import by_kind, plan, render, triton_cases, upstream_values
from tritonfleet.core import conventions

NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
EXPECTED = {
    "triton": "restricted",
    conventions.MONITORING_NAMESPACE: "baseline",
    conventions.NODE_EXPORTER_NAMESPACE: "privileged",
    "tritonfleet-capacity": "restricted",
    conventions.MODEL_CACHE_NAMESPACE: "privileged",  # where a stack turns modelCache on
}


def namespaces(stack: str) -> dict[str, dict[str, str]]:
    """Namespace name -> its labels, as the stack's plan creates them."""
    return {
        r["inputs"]["metadata"]["name"]: r["inputs"]["metadata"].get("labels", {})
        for r in plan(stack)["resources"]
        if r["type"] == NAMESPACE_TYPE
    }


def enforced(stack: str, namespace: str) -> str:
    labels = namespaces(stack)[namespace]
    assert "pod-security.kubernetes.io/enforce" in labels, f"{stack}: namespace {namespace} enforces no level"
    return labels["pod-security.kubernetes.io/enforce"]


@pytest.mark.parametrize("stack", STACKS)
def test_every_namespace_enforces_audits_and_warns_at_its_level(stack):
    created = namespaces(stack)
    for name, labels in created.items():
        level = labels.get("pod-security.kubernetes.io/enforce")
        assert level, f"{stack}: namespace {name} has no Pod Security level"
        if name != conventions.GPU_OPERATOR_NAMESPACE:  # privileged by design (its own component)
            assert {k: v for k, v in labels.items() if k.startswith("pod-security.")} == pod_security_labels(level)
        if name in EXPECTED:
            assert level == EXPECTED[name], f"{stack}: {name} enforces {level}"
    assert "triton" in created and conventions.MONITORING_NAMESPACE in created


@pytest.mark.parametrize(("stack", "release"), triton_cases())
def test_rendered_triton_pods_meet_their_namespaces_level(stack, release):
    found = next(r for r in plan(stack)["resources"] if r["type"] == RELEASE_TYPE and r["inputs"]["name"] == release)
    namespace = found["inputs"]["namespace"]
    level = enforced(stack, namespace)
    assert level == "restricted"
    pod = by_kind(render(found["inputs"]["values"], name=release, namespace=namespace))["Deployment"]["spec"]["template"]["spec"]
    assert violations(pod, level) == []


@pytest.mark.parametrize("stack", STACKS)
def test_capacity_placeholders_meet_their_namespaces_level(stack):
    if "tritonfleet-capacity" not in namespaces(stack):
        pytest.skip(f"{stack} keeps no warm capacity")
    placeholders = [
        r for r in plan(stack)["resources"]
        if r["type"] == "kubernetes:apps/v1:Deployment" and r["inputs"]["metadata"].get("namespace") == "tritonfleet-capacity"
    ]
    assert placeholders, f"{stack}: a capacity namespace with no placeholders"
    for deployment in placeholders:
        assert violations(deployment["inputs"]["spec"]["template"]["spec"], enforced(stack, "tritonfleet-capacity")) == []


def test_the_node_local_model_cache_keeps_hostpath_out_of_tritons_namespace():
    """With modelCache, Triton's pod reads the node folder through a claim (restricted admits it) and only the
    prefetch DaemonSet, in its own namespace, mounts the hostPath (privileged: nothing else there needs it)."""
    from components.k8s.model_cache import prefetch_daemonset
    from components.k8s.pod_security import MODEL_CACHE_LEVEL
    from tests.conftest import engine_config
    from tritonfleet.core.config import load_stack_config
    from tritonfleet.core.scheduling import pool_facts

    values = {"modelRepository": "s3://models", "modelCache": {"enabled": True, "hostPath": "/var/lib/x", "view": "t.r"}}
    pod = by_kind(render(values))["Deployment"]["spec"]["template"]["spec"]
    assert violations(pod, "restricted") == [] and any("persistentVolumeClaim" in v for v in pod["volumes"])
    config = load_stack_config(engine_config("dev"), "dev")
    deployment = config.triton_deployments[0]
    daemonset = prefetch_daemonset(deployment, pool_facts(config, config.pool(deployment.pool)), "s3://m", "/x", "i:1", {})
    spec = daemonset["spec"]["template"]["spec"]
    assert violations(spec, "baseline") and violations(spec, MODEL_CACHE_LEVEL) == []
    assert daemonset["metadata"]["namespace"] == conventions.MODEL_CACHE_NAMESPACE


def test_the_node_exporter_leaves_the_baseline_namespace():
    """kube-prometheus-stack's node exporter (hostNetwork, hostPID, hostPath) is moved by the upstream chart's own key
    into the privileged namespace; everything else of the release stays in `monitoring`."""
    stack = next(s for s in STACKS if conventions.MONITORING_NAMESPACE in namespaces(s))
    release = next(
        r for r in plan(stack)["resources"]
        if r["type"] == RELEASE_TYPE and r["inputs"]["name"] == conventions.KUBE_PROMETHEUS_STACK_RELEASE
    )
    assert release["inputs"]["namespace"] == conventions.MONITORING_NAMESPACE
    override = release["inputs"]["values"]["prometheus-node-exporter"]["namespaceOverride"]
    assert override == conventions.NODE_EXPORTER_NAMESPACE
    assert "namespaceOverride" in upstream_values("kube-prometheus-stack-88.5.3")["prometheus-node-exporter"]
    node_exporter = {"hostNetwork": True, "hostPID": True, "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
                     "containers": [{"name": "node-exporter"}]}
    assert violations(node_exporter, "baseline") and violations(node_exporter, enforced(stack, override)) == []


def test_the_checks_refuse_what_each_level_refuses():
    """The checker bites: a Triton pod as rendered passes restricted; each loosening is caught at the right level."""
    pod = by_kind(render({"modelRepository": "s3://models"}))["Deployment"]["spec"]["template"]["spec"]
    assert violations(pod, "restricted") == []

    def loosened(edit) -> dict:
        spec = copy.deepcopy(pod)
        edit(spec)
        return spec

    container = lambda s: s["containers"][0]["securityContext"]  # noqa: E731
    restricted_only = [
        lambda s: container(s).pop("allowPrivilegeEscalation"),
        lambda s: (s["securityContext"].pop("runAsNonRoot"), container(s).pop("runAsNonRoot")),
        lambda s: s["securityContext"].pop("seccompProfile"),
        lambda s: container(s)["capabilities"].update(drop=[]),
        lambda s: s["volumes"].append({"name": "nfs", "nfs": {"server": "x", "path": "/"}}),
    ]
    both = [
        lambda s: s.update(hostNetwork=True),
        lambda s: container(s).update(privileged=True),
        lambda s: container(s)["capabilities"].update(add=["SYS_ADMIN"]),
        lambda s: s["volumes"].append({"name": "host", "hostPath": {"path": "/"}}),
        lambda s: s["securityContext"].update(seccompProfile={"type": "Unconfined"}),
    ]
    for edit in restricted_only:
        spec = loosened(edit)
        assert violations(spec, "restricted") and violations(spec, "baseline") == []
    for edit in both:
        spec = loosened(edit)
        assert violations(spec, "baseline") and violations(spec, "restricted")
        assert violations(spec, "privileged") == []
    with pytest.raises(ValueError):
        pod_security_labels("strict")
