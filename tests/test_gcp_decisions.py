"""The plain GKE decisions: node pool shapes, driver modes, GPU Operator values, Workload Identity names."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.conftest import UPSTREAM_CHARTS
from tests.gcp_helpers import decoded, encoded, load, mixed_l4_stack
from tritonfleet.clouds.gcp.drivers import (
    cos_driver_installer,
    gke_gpu_operator_values,
    gpu_driver_setup,
    gpu_operator_resource_quota,
)
from tritonfleet.clouds.gcp.identity import workload_identity_principal
from tritonfleet.clouds.gcp.node_pools import gpu_node_pool_specs, system_pool_layout
from tritonfleet.core.capacity import split_capacity
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.gpu_operator import chart_overrides

UPSTREAM_OPERATOR_VALUES = UPSTREAM_CHARTS / "gpu-operator-v26.7.0" / "values.yaml"


def one_pool_config(gpu, machine_type, capacity="mixed", **extra):
    data = decoded("gcp-prod")
    pool = {"name": "p", "gpu": gpu, "instanceType": machine_type, "minNodes": 0, "maxNodes": 2, "capacity": capacity, **extra}
    data["gpuPools"] = [pool]
    data["tritonDeployments"] = []
    return load(data, "gcp-prod")


# Expected accelerator strings come from the issue and GKE's docs, not from the catalog under test.
@pytest.mark.parametrize(
    ("gpu", "machine_type", "accelerator", "count", "capacity", "extra"),
    [
        ("L4", "g2-standard-8", "nvidia-l4", 1, "mixed", {"spotShare": 1}),
        ("L4", "g2-standard-48", "nvidia-l4", 4, "mixed", {}),
        ("H100", "a3-highgpu-8g", "nvidia-h100-80gb", 8, "mixed", {"onDemandBase": 1, "spotShare": 1}),
        ("H200", "a3-ultragpu-8g", "nvidia-h200-141gb", 8, "reservation", {"reservationId": "r1", "zones": ["us-central1-b"]}),
        ("B200", "a4-highgpu-8g", "nvidia-b200", 8, "flex-start", {}),
    ],
)
def test_accelerator_type_and_count_per_machine_type(gpu, machine_type, accelerator, count, capacity, extra):
    config = one_pool_config(gpu, machine_type, capacity, **extra)
    specs = gpu_node_pool_specs(config, config.gpu_pools[0])
    assert specs and all(
        (s.machine_type, s.accelerator, s.accelerator_count) == (machine_type, accelerator, count) for s in specs
    )


def test_gke_managed_driver_mode():
    setup = gpu_driver_setup(load(decoded("gcp-prod"), "gcp-prod"))
    assert (setup.mode, setup.image_type, setup.driver_version) == ("gke-managed", "COS_CONTAINERD", "LATEST")
    assert "gke-no-default-nvidia-gpu-device-plugin" not in setup.node_labels and setup.secure_boot


def test_operator_driver_mode():
    config = load(decoded("gcp-dev"))
    setup = gpu_driver_setup(config)
    assert (setup.mode, setup.image_type, setup.driver_version) == ("operator", "UBUNTU_CONTAINERD", "INSTALLATION_DISABLED")
    assert setup.node_labels == {"gke-no-default-nvidia-gpu-device-plugin": "true"}
    assert not setup.secure_boot  # the operator's driver module is not signed for Secure Boot
    spec = gpu_node_pool_specs(config, config.gpu_pools[0])[0]
    assert spec.labels["gke-no-default-nvidia-gpu-device-plugin"] == "true"
    assert spec.labels["tritonfleet.io/pool"] == "l4"


@pytest.mark.parametrize(
    ("min_nodes", "max_nodes", "base", "share"),
    [(0, 2, 0, 1.0), (2, 8, 2, 0.5), (1, 10, 1, 0.7), (3, 3, 3, 0.0), (0, 7, 2, 0.34), (5, 20, 0, 1.0)],
)
def test_autoscaling_bounds_add_up_to_the_pool(min_nodes, max_nodes, base, share):
    config = load(mixed_l4_stack(min_nodes, max_nodes, base, share))
    pool = config.gpu_pools[0]
    specs = gpu_node_pool_specs(config, pool)
    # The minima hold the floor: the on-demand base (min 0, 7, 2: two on-demand nodes stay up although minNodes is 0)
    # and the node the one resnet replica keeps up; above the base the spot pool fills first.
    assert sum(s.autoscaling.total_min for s in specs) == max(min_nodes, base, 1)
    assert sum(s.autoscaling.total_max for s in specs) == max_nodes
    assert {s.option: s.autoscaling.total_max for s in specs} == {
        o: r.max for o, r in split_capacity(pool).purchase.items()  # the one formula's maxima
    }
    bounds = {s.option: (s.autoscaling.total_min, s.autoscaling.total_max) for s in specs}
    assert bounds.get("on-demand", (base, 0))[0] == min(base, max_nodes)
    for spec in specs:
        assert spec.spot == (spec.option == "spot")
        assert spec.reservation_affinity == ("NO_RESERVATION" if spec.spot else "ANY_RESERVATION")
        assert spec.autoscaling.location_policy == ("ANY" if spec.spot else "BALANCED")


def test_reservation_pool_targets_its_reservation_in_its_zone():
    config = load(decoded("gcp-prod"), "gcp-prod")
    [spec] = gpu_node_pool_specs(config, config.pool("h200"))
    assert (spec.option, spec.spot, spec.reservation_affinity, spec.reservation) == (
        "reservation",
        False,
        "SPECIFIC_RESERVATION",
        "h200-serving",
    )
    assert spec.zones == ["us-central1-b"]
    assert spec.disk_type == "hyperdisk-balanced"


def test_flex_start_pool():
    config = one_pool_config("B200", "a4-highgpu-8g", "flex-start")
    [spec] = gpu_node_pool_specs(config, config.gpu_pools[0])
    assert spec.flex_start and not spec.spot and not spec.auto_repair
    assert spec.reservation_affinity == "NO_RESERVATION" and spec.autoscaling.location_policy == "ANY"


def test_taint_and_disk():
    config = load(decoded("gcp-dev"))
    spec = gpu_node_pool_specs(config, config.gpu_pools[0])[0]
    assert spec.taints == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        {"key": "cloud.google.com/compute-class", "value": "tritonfleet-l4", "effect": "NO_SCHEDULE"},
    ]
    assert spec.labels["cloud.google.com/compute-class"] == "tritonfleet-l4"
    assert (spec.disk_size_gb, spec.disk_type) == (100, "pd-balanced")
    assert spec.zones == ["us-central1-a", "us-central1-c"]


def test_longest_node_pool_names_fit_gke():
    config = one_pool_config("B200", "a4-highgpu-8g", "flex-start")
    pool = config.gpu_pools[0].model_copy(update={"name": "a" * 20})
    assert all(len(s.name) <= 40 and re.fullmatch(r"[a-z][a-z0-9-]*", s.name) for s in gpu_node_pool_specs(config, pool))


def test_system_pool_layout_multiplies_to_the_configured_count():
    """GKE creates initialNodeCount in every zone: per zone x zones is the configured total."""
    prod = system_pool_layout(load(decoded("gcp-prod"), "gcp-prod"))
    assert (prod.zones, prod.nodes_per_zone, prod.total) == (["us-central1-a", "us-central1-b"], 1, 2)
    dev = system_pool_layout(load(decoded("gcp-dev")))  # one system node, two cluster zones: one zone
    assert (dev.zones, dev.nodes_per_zone, dev.total) == (["us-central1-a"], 1, 1)
    data = decoded("gcp-prod")
    data["cluster"]["systemNodes"] = {"count": 4}
    four = system_pool_layout(load(data, "gcp-prod"))
    assert (len(four.zones), four.nodes_per_zone, four.total) == (2, 2, 4)


def test_gke_managed_drivers_install_no_gpu_operator_only_dcgm_exporter():
    values = gke_gpu_operator_values(gpu_driver_setup(load(decoded("gcp-prod"), "gcp-prod")), "1.35")
    assert values == {
        "tritonfleet": {
            "install": False,
            "dcgmExporter": {"driverHostDir": "/home/kubernetes/bin/nvidia", "gpuNodeLabel": "cloud.google.com/gke-accelerator"},
        }
    }


def test_operator_values_operator_mode_and_version_gate():
    setup = gpu_driver_setup(load(decoded("gcp-dev")))
    assert gke_gpu_operator_values(setup, "1.33") == {
        "driver": {"enabled": True},
        "toolkit": {"env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}]},
    }
    assert gke_gpu_operator_values(setup, "1.32") == {"driver": {"enabled": True}, "toolkit": {}}


def test_operator_on_cos_follows_nvidias_google_driver_installer_path():
    data = decoded("gcp-dev")
    data["cluster"]["gpuNodeImage"] = "COS_CONTAINERD"
    setup = gpu_driver_setup(load(data))
    assert (setup.driver_version, setup.installer, setup.secure_boot) == ("INSTALLATION_DISABLED", "google-installer", True)
    assert setup.node_labels == {"gke-no-default-nvidia-gpu-device-plugin": "true"}
    values = gke_gpu_operator_values(setup, "1.35")
    assert values["driver"] == {"enabled": False} and "devicePlugin" not in values  # the operator's own device plugin
    assert values["cdi"] == {"enabled": True}
    assert values["hostPaths"]["driverInstallDir"] == values["toolkit"]["installDir"] == "/home/kubernetes/bin/nvidia"


@pytest.mark.parametrize(("image", "version"), [("COS_CONTAINERD", "LATEST"), ("UBUNTU_CONTAINERD", "DEFAULT")])
def test_gke_managed_driver_version_per_image(image, version):
    data = decoded("gcp-prod")
    data["cluster"]["gpuNodeImage"] = image
    config = load(data, "gcp-prod")
    assert gpu_driver_setup(config).driver_version == version
    spec = gpu_node_pool_specs(config, config.gpu_pools[0])[0]
    assert spec.driver.driver_version == version and spec.driver.image_type == image


def test_the_pinned_cos_driver_installer_is_googles_daemonset():
    installer = cos_driver_installer()
    assert (installer["kind"], installer["metadata"]["name"], installer["metadata"]["namespace"]) == (
        "DaemonSet", "nvidia-driver-installer", "kube-system"
    )
    terms = installer["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    keys = {e["key"]: e["operator"] for e in terms["nodeSelectorTerms"][0]["matchExpressions"]}
    # Only nodes where GKE installed no driver (INSTALLATION_DISABLED pools carry no driver-version label).
    assert keys == {"cloud.google.com/gke-accelerator": "Exists", "cloud.google.com/gke-gpu-driver-version": "DoesNotExist"}


def _paths(values, prefix=()):
    for key, value in values.items():
        if isinstance(value, dict) and value:
            yield from _paths(value, (*prefix, key))
        else:
            yield (*prefix, key)


@pytest.mark.parametrize(("stack", "image"), [("gcp-prod", None), ("gcp-dev", None), ("gcp-dev", "COS_CONTAINERD")])
def test_operator_values_exist_in_the_pinned_chart(stack, image):
    upstream = yaml.safe_load(UPSTREAM_OPERATOR_VALUES.read_text())
    data = decoded(stack)
    if image:
        data["cluster"]["gpuNodeImage"] = image
    profile = gke_gpu_operator_values(gpu_driver_setup(load(data, stack)), "1.35")
    for path in _paths(chart_overrides(profile)):
        node = upstream
        for key in path:
            assert isinstance(node, dict) and key in node, f"{'.'.join(path)} is not a value of gpu-operator v26.7.0"
            node = node[key]


def test_resource_quota_covers_system_critical_classes_and_grows():
    small = gpu_operator_resource_quota(load(decoded("gcp-dev")))
    assert small["scopeSelector"]["matchExpressions"] == [
        {"operator": "In", "scopeName": "PriorityClass", "values": ["system-node-critical", "system-cluster-critical"]}
    ]
    assert small["hard"]["pods"] == "100"
    big = gpu_operator_resource_quota(load(mixed_l4_stack(0, 40, 0, 1.0)))
    assert int(big["hard"]["pods"]) >= 10 * 41


def test_workload_identity_principal():
    assert workload_identity_principal("123", "acme-ml-prod", "triton", "triton-llm") == (
        "principal://iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/acme-ml-prod.svc.id.goog"
        "/subject/ns/triton/sa/triton-llm"
    )



def test_the_gke_address_plan_does_not_overlap():
    import ipaddress
    import itertools

    from tritonfleet.clouds.gcp.facts import PROXY_ONLY_MAX_PREFIX
    from tritonfleet.clouds.gcp.layout import (
        CONTROL_PLANE_CIDR,
        NODE_CIDR,
        PLANNED_RANGES,
        POD_CIDR,
        PROXY_ONLY_CIDR,
        SERVICE_CIDR,
    )

    ranges = [ipaddress.ip_network(cidr) for cidr in (NODE_CIDR, POD_CIDR, SERVICE_CIDR, CONTROL_PLANE_CIDR, PROXY_ONLY_CIDR)]
    assert all(a.is_private for a in ranges)
    assert not any(a.overlaps(b) for a, b in itertools.combinations(ranges, 2))
    assert ipaddress.ip_network(CONTROL_PLANE_CIDR).prefixlen == 28  # GKE requires a /28 for the control plane
    assert ipaddress.ip_network(PROXY_ONLY_CIDR).prefixlen <= PROXY_ONLY_MAX_PREFIX
    assert set(PLANNED_RANGES.values()) == {NODE_CIDR, POD_CIDR, SERVICE_CIDR, CONTROL_PLANE_CIDR}


def test_only_an_internal_application_load_balancer_asks_for_the_proxy_only_subnet():
    from tritonfleet.clouds.gcp.layout import PROXY_ONLY_CIDR, needs_proxy_only_subnet, proxy_only_cidr

    data = decoded("gcp-prod")
    stock = load_stack_config(encoded(data), "gcp-prod")
    assert not needs_proxy_only_subnet(stock) and proxy_only_cidr(stock) == PROXY_ONLY_CIDR
    data["tritonDeployments"][0]["access"] = {
        "exposure": "internal", "loadBalancer": "application", "hostname": "llm.internal.example.com", "tls": {"secretName": "llm-tls"},
        "loadBalancerGrpc": False,
    }  # fmt: skip
    data["cluster"]["proxyOnlySubnetCidr"] = "10.30.0.0/23"
    config = load_stack_config(encoded(data), "gcp-prod")
    assert needs_proxy_only_subnet(config) and proxy_only_cidr(config) == "10.30.0.0/23"
    data["tritonDeployments"][0]["access"] = {"exposure": "internal", "clientCidrs": ["10.0.0.0/8"]}  # network: no proxies
    assert not needs_proxy_only_subnet(load_stack_config(encoded(data), "gcp-prod"))


def test_gke_exposure_facts_per_mode():
    from tritonfleet.clouds.gcp.exposure import GOOGLE_FRONT_END_RANGES, gcp_exposure_facts

    facts = gcp_exposure_facts("10.30.0.0/23")
    assert facts.ingress_classes == {"internal-application": "gce-internal", "public": "gce"}
    assert facts.ingress_class_annotation == "kubernetes.io/ingress.class"
    assert facts.load_balancer_sources["internal-application"] == ("10.30.0.0/23", *GOOGLE_FRONT_END_RANGES)
    assert facts.load_balancer_sources["public"] == GOOGLE_FRONT_END_RANGES and facts.load_balancer_sources["internal"] == ()
    assert facts.keeps_client_address == frozenset({"internal"})  # proxies hide the client's address
