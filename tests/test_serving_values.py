"""Plain tests of the serving values builders: Triton, GPU Operator, prometheus-adapter (no Pulumi runtime)."""

from __future__ import annotations

import pytest

from components.k8s.autoscaling import prometheus_adapter_values
from components.k8s.gpu_operator import gpu_operator_values, resource_quota
from components.k8s.triton import (
    llm_env,
    model_repository_path,
    replica_resources,
    repository_poll_seconds,
    shutdown_budget,
    triton_values,
)
from components.k8s.values import deep_merge, key_tolerations, pinned_chart, taint_toleration, tolerates
from tests.conftest import STACKS
from tests.kube_validate import validate_strict
from tests.serving_helpers import missing_keys, upstream_values
from tritonfleet.clouds.aws.facts import GPU_OPERATOR_PROFILES as PROFILES
from tritonfleet.clouds.gcp.compute_classes import gke_pool_facts
from tritonfleet.clouds.gcp.drivers import GpuDriverSetup, gke_gpu_operator_values, gpu_operator_resource_quota
from tritonfleet.clouds.gcp.facts import SPOT_POD_SHUTDOWN_SECONDS as GKE_SPOT_POD_SECONDS
from tritonfleet.core import conventions, pins
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.gpu_operator import OPTIONS_KEY, profile_options
from tritonfleet.core.scheduling import PoolFacts, pool_facts


def _pool(cloud: str, spot: bool) -> PoolFacts:
    return PoolFacts(
        name="p",
        gpu="L4",
        gpus_per_node=1,
        node_selector={conventions.POOL_LABEL: "p"},
        taints=(conventions.gpu_taint(cloud),),
        spot=spot,
        spot_notice_seconds=conventions.spot_notice_seconds(cloud) if spot else None,
        # GKE's graceful node shutdown leaves non-system Pods 15 s of the 30 s notice.
        spot_pod_shutdown_seconds=GKE_SPOT_POD_SECONDS if spot and cloud == "gcp" else None,
    )


def adapter_pool_facts(config, pool) -> PoolFacts:
    """The PoolFacts the stack's cloud adapter hands up (GKE: the pool's compute class)."""
    return gke_pool_facts(config, pool) if config.cloud == "gcp" else pool_facts(config, pool)


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
@pytest.mark.parametrize("spot", [True, False])
def test_shutdown_fits_inside_the_spot_notice(cloud, spot):
    pool = _pool(cloud, spot)
    budget = shutdown_budget(pool)
    assert budget.pre_stop_seconds >= 3
    assert budget.exit_timeout_seconds >= 10, "Triton needs time to drain in-flight requests"
    assert budget.pre_stop_seconds + budget.exit_timeout_seconds < budget.termination_grace_period_seconds
    if spot:
        assert budget.termination_grace_period_seconds < conventions.spot_notice_seconds(cloud)
        assert budget.termination_grace_period_seconds <= (pool.spot_pod_shutdown_seconds or 10**6)


@pytest.mark.parametrize(("cloud", "spot", "seconds"), [("aws", True, 60), ("gcp", True, 10), ("gcp", False, 60)])
def test_a_sigterm_lost_during_a_repository_poll_still_drains_before_the_kill(cloud, spot, seconds):
    """Triton may sleep a whole poll interval after a SIGTERM that came during a poll: the interval fits the drain."""
    budget = shutdown_budget(_pool(cloud, spot))
    assert repository_poll_seconds(budget) == seconds <= budget.exit_timeout_seconds


def test_shutdown_numbers_per_cloud():
    assert shutdown_budget(_pool("aws", True)).termination_grace_period_seconds == 115
    gcp = shutdown_budget(_pool("gcp", True))
    assert (gcp.pre_stop_seconds, gcp.exit_timeout_seconds, gcp.termination_grace_period_seconds) == (3, 10, 15)


def test_replica_resources_share_the_node_by_gpus():
    catalog = load_catalog()
    p5en = catalog.find("aws", "p5en.48xlarge")
    one, four = replica_resources(p5en, 1), replica_resources(p5en, 4)
    assert int(four["cpu"]) >= 4 * int(one["cpu"]) - 3
    assert int(one["cpu"]) * p5en.gpu_count < p5en.vcpu
    small = catalog.find("aws", "g6e.xlarge")
    assert replica_resources(small, 1) == {"cpu": "3", "memory": "24Gi"}


@pytest.mark.parametrize(
    ("bucket", "prefix", "expected"),
    [("s3://b", "llm/", "s3://b/llm"), ("gs://b", "", "gs://b"), ("s3://b/", "a/b/", "s3://b/a/b")],
)
def test_model_repository_path(bucket, prefix, expected):
    assert model_repository_path(bucket, prefix) == expected


@pytest.mark.parametrize("stack", STACKS)
def test_triton_values_per_stack(stack, stack_config):
    config = stack_config(stack)
    for d in config.triton_deployments:
        pool = adapter_pool_facts(config, config.pool(d.pool))
        itype = config.instance_type(config.pool(d.pool))
        env = {"AWS_DEFAULT_REGION": config.region} if config.cloud == "aws" else {}
        values = triton_values(d, pool, itype, f"{'s3' if config.cloud == 'aws' else 'gs'}://bucket", env, {"a": "b"}, True)
        assert values["image"] == {"repository": pins.TRITON_IMAGE_REPOSITORY, "tag": d.image_tag}
        assert values["nodeSelector"] == pool.node_selector
        if config.cloud == "aws":
            assert pool.node_selector == {conventions.POOL_LABEL: d.pool}
        assert values["tolerations"] == [{"operator": "Equal", **taint} for taint in pool.taints]
        assert values["gpusPerReplica"] == d.gpus_per_replica
        assert values["modelLoadSeconds"] == d.model_load_seconds
        assert values["spotNoticeSeconds"] == (pool.spot_pod_shutdown_seconds or pool.spot_notice_seconds)
        assert values["env"] == {**env, **llm_env(d)}
        assert values["serviceMonitor"]["labels"] == conventions.MONITOR_SELECTOR_LABELS
        assert values["autoscaling"]["enabled"] == (d.max_replicas > d.min_replicas)


def test_no_autoscaling_or_servicemonitor_without_monitoring(stack_config):
    config = stack_config("prod")
    d = config.triton_deployments[0]
    pool = pool_facts(config, config.pool(d.pool))
    values = triton_values(d, pool, config.instance_type(config.pool(d.pool)), "s3://b", {}, {}, False)
    assert values["autoscaling"]["enabled"] is False
    assert values["serviceMonitor"] == {"enabled": False, "labels": {}}


def test_taints_and_tolerations_agree_across_pools_operator_and_triton(stack_config):
    """One source (PoolFacts.taints, from the adapter): every pool's taints are tolerated by the operator's
    DaemonSets, the NFD worker and the pool's Triton pods; Triton tolerates no other pool's taint value."""
    for stack in STACKS:
        config = stack_config(stack)
        pools = {p.name: adapter_pool_facts(config, p) for p in config.enabled_pools}
        taints = [t for p in pools.values() for t in p.taints]
        for profile in ALL_PROFILES.values():
            values = gpu_operator_values(profile, taints, monitoring=True)
            for taint in taints:
                assert tolerates(values["daemonsets"]["tolerations"], taint)
                assert tolerates(values["node-feature-discovery"]["worker"]["tolerations"], taint)
        for d in config.triton_deployments:
            pool = pools[d.pool]
            values = triton_values(d, pool, config.instance_type(config.pool(d.pool)), "s3://b", {}, {}, True)
            assert all(tolerates(values["tolerations"], taint) for taint in pool.taints)
            other = conventions.gpu_taint("gcp" if config.cloud == "aws" else "aws")
            assert not tolerates(values["tolerations"], other), "exactly the pool's taint, not any value"
        # Every pool carries the cloud's GPU taint (the GKE compute-class taint besides).
        assert all(conventions.gpu_taint(config.cloud) in p.taints for p in pools.values())
    # System workloads do not tolerate GPU nodes.
    assert "tolerations" not in prometheus_adapter_values()


def test_a_release_takes_chart_version_and_repository_from_its_pin():
    assert pinned_chart(pins.GPU_OPERATOR_CHART) == {
        "chart": "gpu-operator",
        "version": pins.GPU_OPERATOR_CHART["version"],
        "repository_opts": {"repo": "https://helm.ngc.nvidia.com/nvidia"},
    }
    oci = pinned_chart(pins.KARPENTER_CHART)
    assert oci == {"chart": "oci://public.ecr.aws/karpenter/karpenter", "version": pins.KARPENTER_CHART["version"]}


def test_tolerates_follows_kubernetes_rules():
    taint = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
    assert tolerates([taint_toleration(taint)], taint)
    assert tolerates(key_tolerations([taint]), taint)
    assert not tolerates([{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}], taint)
    assert not tolerates([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}], taint)
    assert tolerates([{"operator": "Exists"}], taint)


def test_deep_merge_keeps_siblings_and_replaces_lists():
    merged = deep_merge({"a": {"b": 1, "c": [1]}, "d": 1}, {"a": {"c": [2], "e": 3}})
    assert merged == {"a": {"b": 1, "c": [2], "e": 3}, "d": 1}


def test_eks_al2023_profile_disables_driver_and_toolkit_only():
    values = gpu_operator_values(PROFILES["eks-al2023-nvidia"], [conventions.gpu_taint("aws")], monitoring=True)
    assert values["driver"] == {"enabled": False}
    assert values["toolkit"] == {"enabled": False}
    assert "devicePlugin" not in values, "AL2023 NVIDIA AMIs ship no device plugin: the operator's must run"
    assert values["dcgmExporter"]["serviceMonitor"] == {"enabled": True, "additionalLabels": conventions.MONITOR_SELECTOR_LABELS}


def test_bottlerocket_profile_leaves_the_device_plugin_to_the_ami():
    values = gpu_operator_values(PROFILES["eks-bottlerocket-nvidia"], [conventions.gpu_taint("aws")], monitoring=False)
    assert values["devicePlugin"] == {"enabled": False}
    assert values["dcgmExporter"]["serviceMonitor"]["enabled"] is False


GKE_OPERATOR_DRIVER = GpuDriverSetup("operator", "UBUNTU_CONTAINERD", "INSTALLATION_DISABLED", "gpu-operator")
GKE_OPERATOR_COS = GpuDriverSetup("operator", "COS_CONTAINERD", "INSTALLATION_DISABLED", "google-installer")
ALL_PROFILES = {
    **PROFILES,
    "gke-operator-driver": gke_gpu_operator_values(GKE_OPERATOR_DRIVER, pins.KUBERNETES_VERSION),
    "gke-operator-cos": gke_gpu_operator_values(GKE_OPERATOR_COS, pins.KUBERNETES_VERSION),
}


def test_operator_managed_driver_upgrades_one_node_at_a_time():
    values = gpu_operator_values(ALL_PROFILES["gke-operator-driver"], [conventions.gpu_taint("gcp")], monitoring=True)
    assert values["driver"]["upgradePolicy"] == {"maxParallelUpgrades": 1, "maxUnavailable": 1}
    assert {"name": "RUNTIME_CONFIG_SOURCE", "value": "file"} in values["toolkit"]["env"]
    assert OPTIONS_KEY not in values


def test_profile_options_default_to_install_and_reject_unknown_keys():
    assert profile_options(PROFILES["eks-al2023-nvidia"]) == {"install": True, "dcgmExporter": None}
    assert profile_options({OPTIONS_KEY: {"install": False}}) == {"install": False, "dcgmExporter": None}
    with pytest.raises(ValueError, match="unknown"):
        profile_options({OPTIONS_KEY: {"instal": False}})
    with pytest.raises(ValueError, match="install: false"):
        profile_options({OPTIONS_KEY: {"dcgmExporter": {"driverHostDir": "/x", "gpuNodeLabel": "gpu"}}})


@pytest.mark.parametrize("monitoring", [True, False])
def test_standalone_dcgm_exporter_objects_are_valid_kubernetes(monitoring):
    from tritonfleet.core.gpu_operator import standalone_dcgm_exporter

    objects = standalone_dcgm_exporter(
        "gpu-operator",
        "/home/kubernetes/bin/nvidia",
        "cloud.google.com/gke-accelerator",
        [conventions.gpu_taint("gcp")],
        monitoring,
    )
    assert [o["kind"] for o in objects] == ["DaemonSet", "Service"] + (["ServiceMonitor"] if monitoring else [])
    for obj in objects[:2]:
        assert validate_strict(obj, pins.KUBERNETES_VERSION)
    pod = objects[0]["spec"]["template"]["spec"]
    assert pod["tolerations"] == [conventions.gpu_taint("gcp")]
    assert pod["priorityClassName"] == "system-node-critical"  # admitted by the GKE quota, like the operator's pods


def test_gke_quota_is_a_valid_resource_quota(stack_config):
    quota = resource_quota(conventions.GPU_OPERATOR_NAMESPACE, gpu_operator_resource_quota(stack_config("gcp-prod")))
    assert validate_strict(quota, pins.KUBERNETES_VERSION)
    assert quota["spec"]["scopeSelector"]["matchExpressions"][0]["values"] == ["system-node-critical", "system-cluster-critical"]


# ---- every values key we set exists in the pinned upstream chart's default values ----


@pytest.mark.parametrize("profile", sorted(ALL_PROFILES))
@pytest.mark.parametrize("monitoring", [True, False])
def test_gpu_operator_keys_exist_upstream(profile, monitoring):
    values = gpu_operator_values(ALL_PROFILES[profile], [conventions.gpu_taint("aws"), conventions.gpu_taint("gcp")], monitoring)
    assert missing_keys(values, upstream_values("gpu-operator-v26.7.0")) == []


def test_prometheus_adapter_keys_exist_upstream():
    assert missing_keys(prometheus_adapter_values(), upstream_values("prometheus-adapter-5.3.0")) == []


def test_key_check_catches_a_typo():
    upstream = upstream_values("gpu-operator-v26.7.0")
    assert missing_keys({"driver": {"rollingUpdate": {"maxUnavailable": 1}}}, upstream) == ["driver.rollingUpdate"]
    assert missing_keys({"dcgmExporter": {"serviceMonitor": {"additionalLabel": {}}}}, upstream) == [
        "dcgmExporter.serviceMonitor.additionalLabel"
    ]


def test_pins_and_shared_names():
    assert pins.GPU_OPERATOR_CHART["version"] == "v26.7.0"
    assert conventions.PROMETHEUS_URL == "http://kube-prometheus-stack-prometheus.monitoring.svc:9090"
    assert prometheus_adapter_values()["prometheus"] == {
        "url": "http://kube-prometheus-stack-prometheus.monitoring.svc",
        "port": 9090,
    }
    assert conventions.triton_service_account("llm") == conventions.triton_release_name("llm") == "triton-llm"
