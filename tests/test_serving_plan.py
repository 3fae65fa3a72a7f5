"""The serving releases in the plan (the real program under the mock runtime): pinned names and versions, values,
ordering, timeouts; and the GKE operator path with its ResourceQuota in a small program run by the same harness."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import STACKS, run_program
from tests.serving_helpers import RELEASE_TYPE, plan, releases
from tritonfleet.core import conventions, pins

AWS_STACKS = [s for s in STACKS if not s.startswith("gcp-")]


def _by_urn(stack: str) -> dict[str, dict]:
    return {r["urn"]: r for r in plan(stack)["resources"]}


@pytest.mark.parametrize("stack", STACKS)
def test_release_names_are_pinned(stack, stack_config):
    config = stack_config(stack)
    names = set(releases(stack))
    expected = {conventions.triton_release_name(d.name) for d in config.triton_deployments}
    if config.monitoring.enabled:
        expected |= {conventions.PROMETHEUS_ADAPTER_RELEASE, conventions.KUBE_PROMETHEUS_STACK_RELEASE}
    if config.cloud == "aws" or config.cluster.gke_gpu_driver == "operator":
        expected.add(conventions.GPU_OPERATOR_RELEASE)  # gke-managed: GKE's own GPU stack, no operator
    if config.cloud == "aws":
        expected |= {"karpenter-crd", "karpenter"}  # its CRDs as their own release; GKE autoscales node pools itself
    if config.monitoring.enabled and any(d.rollout for d in config.triton_deployments):
        expected.add("argo-rollouts")  # the controller of the deployments' canary rollouts
    assert names == expected


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_gpu_operator_release(stack):
    release = releases(stack)[conventions.GPU_OPERATOR_RELEASE]
    inputs = release["inputs"]
    assert inputs["chart"] == "gpu-operator" and inputs["version"] == "v26.7.0" == pins.GPU_OPERATOR_CHART["version"]
    assert inputs["repositoryOpts"] == {"repo": "https://helm.ngc.nvidia.com/nvidia"}
    assert inputs["namespace"] == conventions.GPU_OPERATOR_NAMESPACE
    assert inputs["timeout"] >= 1200 and inputs["atomic"] is False
    assert inputs["values"]["driver"] == {"enabled": False} and inputs["values"]["toolkit"] == {"enabled": False}
    assert inputs["values"]["dcgmExporter"]["serviceMonitor"]["additionalLabels"] == conventions.MONITOR_SELECTOR_LABELS
    resources = _by_urn(stack)
    namespace = next(resources[u] for u in release["dependsOn"] if resources[u]["type"] == "kubernetes:core/v1:Namespace")
    assert namespace["inputs"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert not any(r["type"] == "kubernetes:core/v1:ResourceQuota" for r in resources.values()), "EKS needs no quota"


def test_gke_managed_drivers_get_no_operator_only_a_dcgm_exporter_under_the_quota():
    resources = _by_urn("gcp-prod")
    assert conventions.GPU_OPERATOR_RELEASE not in releases("gcp-prod")
    exporter = {r["type"]: r for r in resources.values() if r["inputs"].get("metadata", {}).get("name") == "nvidia-dcgm-exporter"}
    assert set(exporter) == {"kubernetes:apps/v1:DaemonSet", "kubernetes:core/v1:Service", "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"}
    daemonset = exporter["kubernetes:apps/v1:DaemonSet"]
    volumes = daemonset["inputs"]["spec"]["template"]["spec"]["volumes"]
    assert {"name": "nvidia-install-dir-host", "hostPath": {"path": "/home/kubernetes/bin/nvidia"}} in volumes
    needs = {resources[u]["type"] for u in daemonset["dependsOn"]}
    assert "kubernetes:core/v1:ResourceQuota" in needs, "GKE admits system-node-critical pods only under a ResourceQuota"
    assert exporter["kubernetes:monitoring.coreos.com/v1:ServiceMonitor"]["inputs"]["metadata"]["labels"]["release"] == (
        conventions.KUBE_PROMETHEUS_STACK_RELEASE
    )
    assert not any(r["inputs"].get("metadata", {}).get("name") == "nvidia-driver-installer" for r in resources.values())


@pytest.mark.parametrize("stack", STACKS)
def test_triton_releases(stack, stack_config):
    config = stack_config(stack)
    all_releases = releases(stack)
    operator = all_releases.get(conventions.GPU_OPERATOR_RELEASE)
    for d in config.triton_deployments:
        release = all_releases[conventions.triton_release_name(d.name)]
        inputs = release["inputs"]
        assert inputs["chart"] == "./charts/triton-inference-server"
        assert inputs["namespace"] == d.namespace and inputs["createNamespace"] is True
        assert inputs["timeout"] >= d.model_load_seconds
        assert inputs["values"]["modelRepository"].startswith("s3://" if config.cloud == "aws" else "gs://")
        # Replicas spread over how nodes were bought on GKE (ours: one purchase option per node pool), where a
        # preferred spread only scores existing nodes; not on EKS, where Karpenter would hold it as required.
        spread_key = "" if config.cloud == "aws" else conventions.CAPACITY_LABEL
        assert inputs["values"]["topologySpread"]["capacityTypeKey"] == spread_key
        if operator:
            assert operator["urn"] in release["dependsOn"], "GPUs are advertised by the operator's device plugin"


@pytest.mark.parametrize("stack", STACKS)
def test_prometheus_adapter_release(stack):
    inputs = releases(stack)[conventions.PROMETHEUS_ADAPTER_RELEASE]["inputs"]
    assert (inputs["chart"], inputs["version"]) == ("prometheus-adapter", pins.PROMETHEUS_ADAPTER_CHART["version"])
    assert inputs["namespace"] == conventions.MONITORING_NAMESPACE
    assert inputs["values"]["rules"]["default"] is False
    assert f"{inputs['values']['prometheus']['url']}:{inputs['values']['prometheus']['port']}" == conventions.PROMETHEUS_URL


GKE_PROGRAM = textwrap.dedent(
    """
    import pulumi, pulumi_kubernetes as k8s
    from components.k8s.gpu_operator import GpuOperator
    from components.k8s.triton import TritonRelease
    from tritonfleet.core.catalog import load_catalog
    from tritonfleet.core.config import TritonDeployment
    from tritonfleet.clouds.gcp.drivers import GpuDriverSetup, gke_gpu_operator_values
    from tritonfleet.core.scheduling import PoolFacts
    from tritonfleet.core.conventions import gpu_taint

    provider = k8s.Provider("k8s", kubeconfig="{}")
    crds = k8s.yaml.v2.ConfigGroup("monitoring-crds", yaml="", opts=pulumi.ResourceOptions(provider=provider))
    pool = PoolFacts("l4", "L4", 1, {"tritonfleet.io/pool": "l4"}, (gpu_taint("gcp"),), True, 30)
    setup = GpuDriverSetup("operator", "UBUNTU_CONTAINERD", "INSTALLATION_DISABLED", "gpu-operator")
    quota = {"hard": {"pods": "100"}, "scopeSelector": {"matchExpressions": [
        {"operator": "In", "scopeName": "PriorityClass", "values": ["system-node-critical", "system-cluster-critical"]}]}}
    operator = GpuOperator(
        "gpu-operator", gke_gpu_operator_values(setup, "1.33"), list(pool.taints), True, provider, [crds], quota_spec=quota
    )
    TritonRelease(
        "triton-vision", TritonDeployment(name="vision", pool="l4"), pool, load_catalog().find("gcp", "g2-standard-8"),
        "gs://models", {}, {"iam.gke.io/gcp-service-account": "triton@p.iam.gserviceaccount.com"}, True, provider,
        depends_on=[crds, operator.release],
    )
    """
)


def test_gke_operator_gets_its_quota_first_and_triton_waits_for_crds(tmp_path):
    (tmp_path / "__main__.py").write_text(GKE_PROGRAM)
    run = run_program(tmp_path, "tritonfleet", "gke-test", {}, [])
    by_name = {(r.type, r.name): r for r in run.resources}
    quota = by_name[("kubernetes:core/v1:ResourceQuota", "gpu-operator-quota")]
    expression = quota.inputs["spec"]["scopeSelector"]["matchExpressions"][0]
    assert expression["values"] == ["system-node-critical", "system-cluster-critical"]
    assert quota.inputs["metadata"]["namespace"] == conventions.GPU_OPERATOR_NAMESPACE
    operator = by_name[(RELEASE_TYPE, "gpu-operator")]
    crds = by_name[("kubernetes:yaml/v2:ConfigGroup", "monitoring-crds")]
    assert {quota.urn, crds.urn} <= set(operator.depends_on)
    assert operator.inputs["values"]["toolkit"]["env"] == [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}]
    triton = by_name[(RELEASE_TYPE, "triton-vision")]
    assert {crds.urn, operator.urn} <= set(triton.depends_on)
    values = triton.inputs["values"]
    assert values["serviceAccount"]["annotations"] == {"iam.gke.io/gcp-service-account": "triton@p.iam.gserviceaccount.com"}
    assert values["shutdown"]["terminationGracePeriodSeconds"] < 30


PREVIEW_PROGRAM = textwrap.dedent(
    """
    import asyncio

    import pulumi, pulumi_kubernetes as k8s
    from components.k8s.triton import TritonRelease
    from tritonfleet.core.catalog import load_catalog
    from tritonfleet.core.config import TritonDeployment
    from tritonfleet.core.conventions import gpu_taint
    from tritonfleet.core.scheduling import PoolFacts

    def unknown() -> pulumi.Output:
        # What a first preview hands over for a role ARN or service account email that does not exist yet.
        value, known = asyncio.Future(), asyncio.Future()
        value.set_result(None)
        known.set_result(False)
        return pulumi.Output(set(), value, known)

    provider = k8s.Provider("k8s", kubeconfig="{}")
    pool = PoolFacts("l4", "L4", 1, {"tritonfleet.io/pool": "l4"}, (gpu_taint("gcp"),), True, 30)
    TritonRelease(
        "triton-vision", TritonDeployment(name="vision", pool="l4"), pool, load_catalog().find("gcp", "g2-standard-8"),
        "gs://models", {}, {"iam.gke.io/gcp-service-account": unknown()}, True, provider,
    )
    """
)


def test_an_unknown_identity_leaves_the_rest_of_the_triton_values_known(tmp_path):
    """In a first `pulumi preview` the identity does not exist yet; the policy pack must still see the pool
    selection, tolerations and access values (a wholly unknown `values` makes it skip every Triton policy)."""
    (tmp_path / "__main__.py").write_text(PREVIEW_PROGRAM)
    run = run_program(tmp_path, "tritonfleet", "preview-test", {}, [])
    (triton,) = [r for r in run.resources if r.type == RELEASE_TYPE]
    values = triton.inputs["values"]
    assert values["serviceAccount"]["annotations"] == {"iam.gke.io/gcp-service-account": "<unknown>"}
    assert values["nodeSelector"] == {"tritonfleet.io/pool": "l4"}
    assert values["tolerations"] == [{"operator": "Equal", "key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    assert values["modelRepository"] == "gs://models"
    assert values["networkPolicy"]["enabled"] is True
