"""Single policies called directly on hand-built resources, with props as the engine sends them (floats, proxies)."""

from __future__ import annotations

import copy

import pytest
from policy_cases import run_resource, run_stack, stack_resource

from policies._pools import gpu_pool
from policies.rules import (
    gcs_bucket_prevent_public_access,
    gpu_pool_allowed_instance_types,
    gpu_stack_limit_total_gpus,
    helm_release_require_pinned_chart,
    k8s_disallow_static_cloud_credentials,
    k8s_image_require_pinned_tag,
    s3_bucket_require_versioning,
    stateful_resource_require_protect,
)
from tritonfleet.core.conventions import POOL_LABEL

NG = "aws:eks/nodeGroup:NodeGroup"
NP = "gcp:container/nodePool:NodePool"
NODE_GROUP = {
    "amiType": "AL2023_x86_64_NVIDIA",
    "capacityType": "SPOT",
    "instanceTypes": ["g6e.xlarge"],
    "scalingConfig": {"minSize": 0.0, "maxSize": 4.0, "desiredSize": 0.0},
    "labels": {POOL_LABEL: "l40s"},
    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
}
NODE_POOL = {
    "location": "us-central1",
    "nodeLocations": ["us-central1-a", "us-central1-b"],
    "autoscaling": {"minNodeCount": 0.0, "maxNodeCount": 3.0},
    "nodeConfig": {
        "machineType": "a3-ultragpu-8g",
        "spot": True,
        "guestAccelerators": [{"type": "nvidia-h200-141gb", "count": 8.0}],
    },
}


def changed(base, path, value):
    props = copy.deepcopy(base)
    *parents, last = path.split(".")
    target = props
    for part in parents:
        target = target[part]
    target[last] = value
    return props


def test_allowed_types_reads_floats_and_ignores_non_gpu_groups():
    config = {"allowedInstanceTypes": ["g6e.xlarge"]}
    assert run_resource(gpu_pool_allowed_instance_types.POLICY, NG, NODE_GROUP, config) == []
    [message] = run_resource(
        gpu_pool_allowed_instance_types.POLICY, NG, changed(NODE_GROUP, "instanceTypes", ["p4d.24xlarge"]), config
    )
    assert "uses instance type p4d.24xlarge, which this environment does not allow (allowed: g6e.xlarge)" in message
    system = {"amiType": "AL2023_x86_64_STANDARD", "instanceTypes": ["m6i.xlarge"], "scalingConfig": {"minSize": 2, "maxSize": 3}}
    assert run_resource(gpu_pool_allowed_instance_types.POLICY, NG, system, config) == []


def test_a_node_group_typed_by_its_launch_template_counts_as_any_type():
    """EKS takes the type from the launch template when instanceTypes is empty: a GPU there must not slip past."""
    config = {"allowedInstanceTypes": ["g6e.xlarge"]}
    system = {"amiType": "AL2023_x86_64_STANDARD", "instanceTypes": ["m6i.xlarge"], "scalingConfig": {"minSize": 2, "maxSize": 3},
              "launchTemplate": {"id": "lt-1", "version": "1"}}
    assert run_resource(gpu_pool_allowed_instance_types.POLICY, NG, system, config) == []
    [message] = run_resource(gpu_pool_allowed_instance_types.POLICY, NG, changed(system, "instanceTypes", []), config)
    assert "does not name its instance type" in message
    assert gpu_pool(NG, changed(system, "instanceTypes", []), "urn", "x").max_gpus is None


def test_schema_default_applies_when_the_config_is_absent():
    """The SDK hands policies no defaults; the pack applies them (empty allow-list: every GPU type is refused)."""
    assert run_resource(gpu_pool_allowed_instance_types.POLICY, NG, NODE_GROUP, None)


def test_gke_per_zone_counts_multiply_by_node_locations():
    pool = gpu_pool(NP, NODE_POOL, "urn", "h200")
    assert (pool.min_nodes, pool.max_nodes, pool.max_gpus, pool.purchase) == (0, 6, 48, "spot")
    regional = changed(NODE_POOL, "nodeLocations", [])
    assert gpu_pool(NP, regional, "urn", "h200").max_gpus is None
    total = changed(regional, "autoscaling", {"totalMinNodeCount": 1.0, "totalMaxNodeCount": 2.0})
    assert gpu_pool(NP, total, "urn", "h200").max_gpus == 16


def test_gpu_ceiling_counts_every_pool_at_its_maximum():
    resources = [stack_resource(NG, NODE_GROUP, "l40s-spot"), stack_resource(NP, NODE_POOL, "h200-spot")]
    assert run_stack(gpu_stack_limit_total_gpus.POLICY, resources, {"maxGpus": 52.0}) == []
    [(message, urn)] = run_stack(gpu_stack_limit_total_gpus.POLICY, resources, {"maxGpus": 51.0})
    assert "can run 52 GPUs at its maximum (l40s-spot 4, h200-spot 48), over the environment's ceiling of 51" in message
    assert urn is None


def test_v2_bucket_spelling_is_covered():
    bucket = stack_resource("aws:s3/bucketV2:BucketV2", {"bucket": "models"}, "models")
    versioning = stack_resource(
        "aws:s3/bucketVersioningV2:BucketVersioningV2",
        {"bucket": "models", "versioningConfiguration": {"status": "Enabled"}},
        "v",
    )
    assert run_stack(s3_bucket_require_versioning.POLICY, [bucket, versioning]) == []
    [(message, urn)] = run_stack(s3_bucket_require_versioning.POLICY, [bucket])
    assert "S3 bucket 'models' does not keep versions" in message and urn == bucket.urn


def test_gcs_public_access_prevention_unset_is_a_violation():
    [message] = run_resource(
        gcs_bucket_prevent_public_access.POLICY, "gcp:storage/bucket:Bucket", {"uniformBucketLevelAccess": True}
    )
    assert "publicAccessPrevention unset (inherited); required: enforced" in message


def test_credentials_in_secret_data_are_found_after_base64():
    import base64

    key = base64.b64encode(b'{"type": "service_account", "private_key": "x"}').decode()
    [message] = run_resource(
        k8s_disallow_static_cloud_credentials.POLICY, "kubernetes:core/v1:Secret", {"data": {"sa": key}}, name="gcs"
    )
    assert "Secret 'gcs' carries static cloud credentials at data.sa" in message
    assert (
        run_resource(k8s_disallow_static_cloud_credentials.POLICY, "kubernetes:core/v1:Secret", {"data": {"token": "aGVsbG8="}})
        == []
    )


def test_chart_pins_accept_exact_versions_digests_and_local_charts():
    release = "kubernetes:helm.sh/v3:Release"
    for props in (
        {"chart": "gpu-operator", "version": "v26.7.0"},
        {"chart": "oci://r/c@sha256:" + "1" * 64},
        {"chart": "/repo/charts/triton-inference-server"},
        {"chart": "./charts/x"},
    ):
        assert run_resource(helm_release_require_pinned_chart.POLICY, release, props) == [], props
    assert run_resource(
        helm_release_require_pinned_chart.POLICY, "kubernetes:helm.sh/v4:Chart", {"chart": "oci://r/c", "version": "1.x"}
    )


def test_operator_style_image_values_are_read_as_name_plus_version():
    release = "kubernetes:helm.sh/v3:Release"
    values = {"values": {"driver": {"repository": "nvcr.io/nvidia", "image": "driver", "version": "580.95.05"}}}
    assert run_resource(k8s_image_require_pinned_tag.POLICY, release, values) == []
    latest = changed(values, "values.driver.version", "latest")
    assert "driver: nvcr.io/nvidia/driver:latest uses the moving tag latest" in run_resource(
        k8s_image_require_pinned_tag.POLICY, release, latest
    )[0]


DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    ("image", "why"),
    [  # issue 37: only latest was refused
        ("nvcr.io/nvidia/tritonserver:main", "uses the moving tag main"),
        ("nvcr.io/nvidia/tritonserver:nightly", "uses the moving tag nightly"),
        ("nvcr.io/nvidia/tritonserver:", "has an empty tag"),
        ("nvcr.io/nvidia/tritonserver@sha256:abc", "has a malformed digest 'sha256:abc'"),
        ("nvcr.io/nvidia/tritonserver@sha256:" + "g" * 64, "has a malformed digest"),
        ("nvcr.io/nvidia/tritonserver:26.07-py3@sha256:" + "A" * 64, "has a malformed digest"),
        ("localhost:5000/triton", "has no tag (means latest)"),
    ],
)
def test_moving_empty_and_malformed_references_are_refused(image, why):
    [message] = k8s_image_require_pinned_tag.problems({"containers": [{"image": image}]})
    assert why in message, message


@pytest.mark.parametrize(
    "image",
    ["nvcr.io/nvidia/tritonserver:26.07-py3", f"busybox@{DIGEST}", f"nvcr.io/nvidia/tritonserver:26.07-py3@{DIGEST}",
     "localhost:5000/triton:1.2.3"],
)
def test_release_tags_and_digests_pass(image):
    assert k8s_image_require_pinned_tag.problems({"containers": [{"image": image}]}) == []


def test_prod_takes_a_digest_or_a_reviewed_tag_pattern():
    release = "kubernetes:helm.sh/v3:Release"
    prod = {"requireDigest": True, "allowedTagPatterns": [r"^nvcr\.io/nvidia/tritonserver:\d{2}\.\d{2}-py3$", "(unclosed"]}
    reviewed = {"values": {"image": {"repository": "nvcr.io/nvidia/tritonserver", "tag": "26.07-py3"}}}
    assert run_resource(k8s_image_require_pinned_tag.POLICY, release, reviewed, prod) == []
    other = changed(reviewed, "values.image.tag", "26.07-py3-custom")
    [message] = run_resource(k8s_image_require_pinned_tag.POLICY, release, other, prod)
    assert "matches none of allowedTagPatterns" in message and "a digest or a tag allowedTagPatterns admits" in message
    assert run_resource(k8s_image_require_pinned_tag.POLICY, release, other) == []  # outside prod a fixed tag will do
    digest = changed(other, "values.image", {"repository": "nvcr.io/nvidia/tritonserver", "digest": DIGEST})
    assert run_resource(k8s_image_require_pinned_tag.POLICY, release, digest, prod) == []
    empty = changed(reviewed, "values.image.tag", "")
    assert "has an empty tag" in run_resource(k8s_image_require_pinned_tag.POLICY, release, empty)[0]


def test_protect_reads_the_resource_option_and_the_configured_types():
    assert run_resource(stateful_resource_require_protect.POLICY, NG, NODE_GROUP, protect=True) == []
    [message] = run_resource(stateful_resource_require_protect.POLICY, NG, NODE_GROUP, protect=False, name="gpu")
    assert "'gpu' (aws:eks/nodeGroup:NodeGroup) is not protected (protect: false)" in message
    # the fix two ways, for the stack of the resource's URN (urn:pulumi:t::...)
    assert message.endswith("Fix: pulumi config set 'tritonfleet:protect' true --stack t, or in stacks/Pulumi.t.yaml, set tritonfleet:protect to true.")
    assert run_resource(stateful_resource_require_protect.POLICY, NG, NODE_GROUP, {"resourceTypes": []}) == []


KNP = "kubernetes:karpenter.sh/v1:NodePool"
KARPENTER_POOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "h200-burst"},
    "spec": {
        "weight": 10.0,
        "limits": {"nvidia.com/gpu": "16", "cpu": "384"},
        "template": {
            "metadata": {"labels": {POOL_LABEL: "h200", "tritonfleet.io/capacity": "spot"}},
            "spec": {
                "requirements": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5en.48xlarge"]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                ],
                "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
            },
        },
    },
}


def test_a_karpenter_node_pool_reads_as_one_tier_priced_for_its_fallback():
    pool = gpu_pool(KNP, KARPENTER_POOL, "urn", "h200-burst")
    assert (pool.pool, pool.max_nodes, pool.max_gpus, pool.purchase, pool.on_demand_fallback) == ("h200", 2, 16, "spot", True)
    assert not pool.guaranteed
    assert pool.monthly_usd("ceiling") == round(2 * 63.296 * 730, 2)  # spot unavailable: on-demand
    without_limit = changed(KARPENTER_POOL, "spec.limits", {"cpu": "384"})
    assert gpu_pool(KNP, without_limit, "urn", "x").max_gpus is None
    assert gpu_pool(KNP, without_limit, "urn", "x").bounds_note == "spec.limits['nvidia.com/gpu'] is not set"
    cpu_types = [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m7i.2xlarge", "c7i.4xlarge"]}]
    system = changed(KARPENTER_POOL, "spec.template.spec.requirements", cpu_types)
    system = changed(system, "spec.limits", {"cpu": "100"})
    assert gpu_pool(KNP, system, "urn", "general") is None  # a NodePool of CPU types is no GPU pool
    # One that lists no types may launch any, accelerated ones included: a GPU pool no bound or price is known for.
    anything = changed(system, "spec.template.spec.requirements", [])
    assert gpu_pool(KNP, anything, "urn", "general").max_gpus is None
    for accelerated in ("gr6.8xlarge", "trn2.48xlarge", "inf2.48xlarge", "g5g.xlarge"):
        requirement = [{**cpu_types[0], "values": [accelerated]}]
        assert gpu_pool(KNP, changed(system, "spec.template.spec.requirements", requirement), "urn", "x") is not None


def test_node_pool_taint_and_allowed_types_are_checked():
    from policies.rules import gpu_pool_require_gpu_taint

    assert run_resource(gpu_pool_require_gpu_taint.POLICY, KNP, KARPENTER_POOL) == []
    untainted = changed(KARPENTER_POOL, "spec.template.spec.taints", [])
    [message] = run_resource(gpu_pool_require_gpu_taint.POLICY, KNP, untainted)
    assert "lacks the GPU taint nvidia.com/gpu=true:NoSchedule" in message
    [message] = run_resource(gpu_pool_allowed_instance_types.POLICY, KNP, KARPENTER_POOL, {"allowedInstanceTypes": ["g6e.xlarge"]})
    assert "uses instance type p5en.48xlarge" in message


def test_warm_placeholders_give_node_pools_their_minimum_by_weight():
    from policies._pools import gpu_pools

    base = changed(KARPENTER_POOL, "spec.weight", 50.0)
    base = changed(base, "spec.limits", {"nvidia.com/gpu": "8", "cpu": "192"})
    base["spec"]["template"]["spec"]["requirements"][1]["values"] = ["on-demand"]
    warm = {"metadata": {"labels": {"app.kubernetes.io/name": "warm-capacity", POOL_LABEL: "h200"}}, "spec": {"replicas": 2.0}}
    pools = gpu_pools(
        [stack_resource(KNP, KARPENTER_POOL, "burst"), stack_resource(KNP, base, "base"),
         stack_resource("kubernetes:apps/v1:Deployment", warm, "warm")]
    )
    assert {p.name: (p.purchase, p.min_nodes, p.max_nodes) for p in pools} == {"burst": ("spot", 1, 2), "base": ("on-demand", 1, 1)}


def test_node_classes_carry_the_cost_tags():
    from policies.rules import aws_resource_require_cost_tags

    node_class = {"spec": {"tags": {"team": "ml", "cost-center": "42"}}}
    kind = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
    assert run_resource(aws_resource_require_cost_tags.POLICY, kind, node_class) == []
    [message] = run_resource(aws_resource_require_cost_tags.POLICY, kind, {"spec": {"tags": {"team": "ml"}}})
    assert "lacks cost-allocation tag(s) cost-center" in message and "EC2NodeClass's spec.tags" in message


def test_gke_labels_count_the_provider_defaults_and_an_empty_value_is_missing():
    from pulumi_policy import PolicyProviderResource

    from policies.rules import gcp_resource_require_cost_labels

    kind = "gcp:container/nodePool:NodePool"
    provider = PolicyProviderResource("pulumi:providers:gcp", {"defaultLabels": '{"team": "ml"}'}, "urn:p", "gcp")
    own = {"nodeConfig": {"resourceLabels": {"cost-center": "42"}}}
    assert run_resource(gcp_resource_require_cost_labels.POLICY, kind, own, provider=provider) == []
    [message] = run_resource(gcp_resource_require_cost_labels.POLICY, kind, {"nodeConfig": {"resourceLabels": {"team": ""}}})
    assert message == (
        "'r' (gcp:container/nodePool:NodePool) lacks cost-allocation label(s) team, cost-center in "
        "nodeConfig.resourceLabels (has: team). Set them in tritonfleet:tags and pass them as nodeConfig.resourceLabels."
    )


def test_a_kept_gke_default_pool_is_a_node_group_like_any_other():
    """A cluster that keeps its default node pool runs its nodeConfig: accelerated, it is a GPU pool; removed, none."""
    cluster = {
        "location": "us-central1-a",
        "initialNodeCount": 3.0,
        "removeDefaultNodePool": False,
        "nodeConfig": {"machineType": "a2-highgpu-1g"},
    }
    pool = gpu_pool("gcp:container/cluster:Cluster", cluster, "urn", "tf-gke")
    assert (pool.instance_types, pool.max_nodes, pool.gpus_per_node) == (("a2-highgpu-1g",), 3, None)
    assert gpu_pool("gcp:container/cluster:Cluster", changed(cluster, "removeDefaultNodePool", True), "urn", "x") is None
    cpu = changed(cluster, "nodeConfig", {"machineType": "e2-standard-4"})
    assert gpu_pool("gcp:container/cluster:Cluster", cpu, "urn", "x") is None


def test_assumed_price_floors_name_catalog_gpus_and_undercut_every_published_price():
    """A floor is a lower bound, never a price: below the cheapest published $/GPU-hour of its class (any purchase
    option, either cloud), so no real quote is refused; the prod configs set one for every catalogued GPU."""
    from policy_cases import stack_policy_config

    from tritonfleet.core.catalog import load_catalog

    catalog = load_catalog()
    cheapest: dict[str, float] = {}
    for entry in catalog.instance_types:
        for price in entry.prices.values():
            per_gpu = price.usd / entry.gpu_count
            cheapest[entry.gpu] = min(cheapest.get(entry.gpu, per_gpu), per_gpu)
    for stack in ("prod", "gcp-prod"):
        for policy in ("cost-stack-enforce-monthly-budget", "cost-stack-warn-monthly-budget"):
            floors = stack_policy_config(stack)[policy]["assumedPriceFloors"]
            assert set(floors) == set(catalog.gpus), (stack, policy)
            assert all(floor < cheapest.get(gpu, float("inf")) for gpu, floor in floors.items()), (stack, floors, cheapest)


def test_alert_credentials_only_in_secrets():
    from policies.rules import k8s_alert_credentials_require_secret as rule

    release, config_map = "kubernetes:helm.sh/v3:Release", "kubernetes:core/v1:ConfigMap"
    values = {"values": {"alertmanager": {"config": {
        "global": {"resolve_timeout": "5m"},
        "receivers": [
            {"name": "oncall", "slack_configs": [{"api_url": "https://hooks.slack.example/T0/B0/x", "channel": "#ops"}]},
            {"name": "pager", "pagerduty_configs": [{"routing_key": "pd-key"}]},
            {"name": "file", "slack_configs": [{"api_url_file": "/etc/alertmanager/secrets/slack"}]},
        ],
    }}}}
    [message] = run_resource(rule.POLICY, release, values)
    assert "values.alertmanager.config.receivers[0].slack_configs[0].api_url" in message
    assert "receivers[1].pagerduty_configs[0].routing_key" in message and "api_url_file" not in message
    text = "global:\n  slack_api_url: https://hooks.slack.example/x\nroute: {receiver: a}\nreceivers: [{name: a}]\n"
    [message] = run_resource(rule.POLICY, config_map, {"data": {"alertmanager.yaml": text}})
    assert "data.alertmanager.yaml.global.slack_api_url" in message
    env = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x:1", "env": [
        {"name": "SLACK_WEBHOOK_URL", "value": "https://hooks.slack.example/x"},
        {"name": "PAGERDUTY_ROUTING_KEY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
    ]}]}}}}
    [message] = run_resource(rule.POLICY, "kubernetes:apps/v1:Deployment", env)
    assert "env[0]=SLACK_WEBHOOK_URL" in message and "PAGERDUTY" not in message
    clean = {"values": {"alertmanager": {"alertmanagerSpec": {"useExistingSecret": True, "configSecret": "am-config"}}}}
    assert run_resource(rule.POLICY, release, clean) == []
    assert run_resource(rule.POLICY, config_map, {"data": {"notes": "webhook_configs are in the Secret"}}) == []


def test_an_n1_pool_with_guest_accelerators_and_a_tpu_pool_count():
    n1 = changed(NODE_POOL, "nodeConfig", {"machineType": "n1-standard-8", "guestAccelerators": [{"type": "nvidia-tesla-t4", "count": 2.0}]})
    pool = gpu_pool(NP, n1, "urn", "t4")
    assert (pool.gpus_per_node, pool.max_gpus) == (2, 12)  # declared accelerators, 3 nodes in each of 2 zones
    assert gpu_pool(NP, changed(NODE_POOL, "nodeConfig", {"machineType": "n1-standard-8"}), "urn", "cpu") is None
    tpu = gpu_pool(NP, changed(NODE_POOL, "nodeConfig", {"machineType": "ct5lp-hightpu-4t"}), "urn", "tpu")
    assert tpu is not None and tpu.max_gpus is None  # counted, and its unknown chip count fails the GPU ceiling


def test_a_karpenter_floor_annotation_is_the_node_pools_minimum_by_weight():
    from policies._pools import gpu_pools

    base = changed(KARPENTER_POOL, "spec.weight", 50.0)
    base = changed(base, "spec.limits", {"nvidia.com/gpu": "8", "cpu": "192"})
    base["spec"]["template"]["spec"]["requirements"][1]["values"] = ["on-demand"]
    base["metadata"] = {"annotations": {"tritonfleet.io/floor-nodes": "1"}}
    burst = changed(KARPENTER_POOL, "metadata", {"annotations": {"tritonfleet.io/floor-nodes": "1"}})
    pools = gpu_pools([stack_resource(KNP, burst, "burst"), stack_resource(KNP, base, "base")])
    assert {p.name: p.min_nodes for p in pools} == {"burst": 1, "base": 1}


def _release(values: dict, selector: dict) -> dict:
    return {"chart": "./charts/triton-inference-server", "values": {"nodeSelector": selector, **values}}


def _min_apart(release_values: dict, gpus_per_node: float = 8.0) -> list:
    from policies.rules import triton_release_require_min_replicas_apart

    pool = changed(NODE_POOL, "nodeConfig.labels", {POOL_LABEL: "h200"})
    pool = changed(pool, "nodeConfig.guestAccelerators", [{"type": "nvidia-h200-141gb", "count": gpus_per_node}])
    resources = [
        stack_resource(NP, pool, "h200-spot"),
        stack_resource("kubernetes:helm.sh/v3:Release", _release(release_values, {POOL_LABEL: "h200"}), "tf-triton-llm"),
    ]
    return [message for message, _ in run_stack(triton_release_require_min_replicas_apart.POLICY, resources)]


def test_min_replicas_apart_accepts_a_hard_spread_or_replicas_too_big_to_share():
    hard = {"maxSkew": 1.0, "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2.0}
    assert _min_apart({"replicas": {"min": 2.0}, "gpusPerReplica": 1.0, "topologySpread": {"hostname": hard}}) == []
    soft = {"maxSkew": 8.0, "whenUnsatisfiable": "ScheduleAnyway", "minDomains": None}
    assert _min_apart({"replicas": {"min": 2.0}, "gpusPerReplica": 8.0, "topologySpread": {"hostname": soft}}) == []
    assert _min_apart({"replicas": {"min": 3.0}, "gpusPerReplica": 5.0, "topologySpread": {"hostname": soft}}) == []


def test_min_replicas_apart_refuses_a_floor_one_node_can_hold():
    soft = {"maxSkew": 8.0, "whenUnsatisfiable": "ScheduleAnyway", "minDomains": None}
    [message] = _min_apart({"replicas": {"min": 2.0}, "gpusPerReplica": 1.0, "topologySpread": {"hostname": soft}})
    assert "may run all 2 replicas of its minimum on one node" in message and "minDomains 2, maxSkew 1" in message
    wide = {"maxSkew": 3.0, "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2.0}
    [message] = _min_apart({"replicas": {"min": 3.0}, "gpusPerReplica": 1.0, "topologySpread": {"hostname": wide}})
    assert "maxSkew 2" in message  # maxSkew 3 lets one node take all three
    [message] = _min_apart({"replicas": {"min": 1.0}, "gpusPerReplica": 8.0})
    assert "keeps 1 replica at its minimum" in message
    assert "Fix (<i>: the deployment of release 'tf-triton-llm'): pulumi config set --path " in message
    assert message.endswith("or in stacks/Pulumi.t.yaml, set tritonfleet:tritonDeployments[<i>].minReplicas to 2.")


def test_spot_only_and_on_demand_base_fixes_come_two_ways():
    from policies.rules import spot_pool_require_spot_only, spot_serving_pool_require_on_demand_base

    on_demand = changed(NODE_GROUP, "capacityType", "ON_DEMAND")
    [message] = run_resource(spot_pool_require_spot_only.POLICY, NG, on_demand)
    assert message.endswith(
        "or in stacks/Pulumi.t.yaml, set tritonfleet:gpuPools[<i>].capacity to mixed and "
        "tritonfleet:gpuPools[<i>].onDemandBase to 0 and tritonfleet:gpuPools[<i>].spotShare to 1."
    )
    assert "Fix (<i>: pool 'l40s'): pulumi config set --path 'tritonfleet:gpuPools[<i>].capacity' mixed --stack t && " in message
    release = _release({"replicas": {"min": 2.0}}, {POOL_LABEL: "l40s"})
    resources = [stack_resource(NG, NODE_GROUP, "l40s"), stack_resource("kubernetes:helm.sh/v3:Release", release, "tf-triton")]
    [(message, _)] = run_stack(spot_serving_pool_require_on_demand_base.POLICY, resources)
    assert message.endswith(
        "or in stacks/Pulumi.t.yaml, set tritonfleet:gpuPools[<i>].onDemandBase to 1 and tritonfleet:gpuPools[<i>].minNodes to 1."
    )


def test_the_stack_of_a_fix_is_read_from_the_urn():
    from policies._fixes import stack_of

    assert stack_of("urn:pulumi:prod::tritonfleet::aws:eks/nodeGroup:NodeGroup::gpu") == "prod"


def test_an_assumed_price_below_the_floor_is_fixed_to_the_floor_both_ways():
    from policies.rules.cost_stack_enforce_monthly_budget import assumed_price_problems
    from tritonfleet.core.conventions import ASSUMED_PRICE_LABEL

    labels = {POOL_LABEL: "b200", ASSUMED_PRICE_LABEL: "0.01"}
    b200 = changed(NODE_GROUP, "instanceTypes", ["p6-b200.48xlarge"])
    pool = gpu_pool(NG, changed(b200, "labels", labels), "urn:pulumi:prod::tritonfleet::x::b200", "b200")
    [message] = assumed_price_problems([pool], "ceiling", {"B200": 3.0})
    assert "Fix (<i>: pool 'b200'; the quote's price if higher): pulumi config set --path" in message
    assert message.endswith(
        "or in stacks/Pulumi.prod.yaml, set tritonfleet:gpuPools[<i>].assumedPrice.usdPerHour to 24.0 and "
        "tritonfleet:gpuPools[<i>].assumedPrice.note to <quote, date, who>."
    )


def test_registered_bill_lines_count_and_an_unreadable_one_is_unknown():
    """The Platform's billLines (what no resource proves) are priced in the stack's region; a quantity that is not a
    number makes its line unknown, never 0."""
    from policies._platform import platform_lines

    provider = stack_resource("pulumi:providers:aws", {"region": "us-east-1"}, "aws")
    lines = [
        {"line": "log-ingestion", "assumption": "50 GB", "charges": [{"item": "log-ingestion", "floor": 50.0, "expected": 50.0, "ceiling": 50.0}]},
        {"line": "traffic-egress", "assumption": "", "charges": [{"item": "internet-egress", "floor": "<unknown>", "expected": 1.0, "ceiling": 1.0}]},
    ]  # fmt: skip
    platform = stack_resource("tritonfleet:platform:Platform", {"billLines": lines}, "tf")
    found = {line.name: line for line in platform_lines([provider, platform])}
    assert found["log-ingestion"].ceiling_usd == 25.0  # $0.50/GB (catalog log-ingestion, us-east-1)
    assert found["traffic-egress"].ceiling_usd is None
    assert "not numbers" in found["traffic-egress"].unknown
