"""Every number and name of a stack within what the real systems take: Kubernetes' int32
counts and quantities, the clouds' node limits, namespaces of its own, bucket prefixes that stay in their folder.
Each bound is a config problem naming the key, the value, what is allowed and the fix; the schema's comments and
the clouds' facts modules carry the sources."""

from __future__ import annotations

import json

import pytest
from conftest import config_problems, engine_config

from tritonfleet.core.config import load_stack_config
from tritonfleet.core.config.schema import INT32_MAX, QUANTITY_MAX

D = "tritonDeployments[0]"


def _edited(stack: str, section: str, index: int | None = 0, **changes) -> dict[str, str]:
    raw = engine_config(stack)
    value = json.loads(raw[f"tritonfleet:{section}"]) if section in ("gpuPools", "tritonDeployments", "budget") else None
    if index is not None:
        value[index].update(changes)
    else:
        value = changes.get("value", value)
    raw[f"tritonfleet:{section}"] = json.dumps(value)
    return raw


@pytest.mark.parametrize(
    ("changes", "key", "allowed"),
    [
        ({"maxReplicas": 10**20}, "maxReplicas", "less than or equal to 2147483647"),
        ({"minReplicas": 2**31, "maxReplicas": 2**31}, "minReplicas", "less than or equal to 2147483647"),
        ({"maxUnavailable": 2**31}, "maxUnavailable", "less than or equal to 2147483647"),
        ({"throughputPerReplica": 1e308}, "throughputPerReplica", "less than or equal to 9223372036854776000"),
        ({"throughputPerReplica": 5e-324}, "throughputPerReplica", "greater than or equal to 0.001"),
        ({"targetLoad": {"peak": 1e300}}, "targetLoad.peak", "less than or equal to 9223372036854776000"),
        ({"targetLoad": {"peak": 1, "average": 1e-320}}, "targetLoad.average", "greater than or equal to 0.001"),
        ({"targetLoad": {"peak": 1, "inferencesPerRequest": 2**40}}, "targetLoad.inferencesPerRequest", "2147483647"),
        ({"latencyTarget": "9" * 400 + "ms"}, "latencyTarget", "such as 50ms or 1.5s"),
        ({"queueTimeTarget": "0.00001ms"}, "queueTimeTarget", "such as 20ms or 0.5s"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_deployment_numbers_are_bounded_by_kubernetes(changes, key, allowed):
    """Replica counts are int32 in the Deployment, HPA and PDB APIs; a capacity becomes an HPA target, a Kubernetes
    quantity (at most 2^63-1, three decimals): throughputPerReplica 1e308 once ended in an OverflowError, 5e-324
    (subnormal) in a traceback from the sizing's division."""
    found = config_problems(_edited("dev", "tritonDeployments", **changes), "dev")
    assert allowed in found[f"{D}.{key}"][1]


def test_the_boundary_values_themselves_plan_or_are_refused_cleanly():
    raw = _edited("dev", "tritonDeployments", throughputPerReplica=QUANTITY_MAX, maxReplicas=2)
    assert load_stack_config(raw, "dev").triton_deployments[0].throughput_per_replica == QUANTITY_MAX
    found = config_problems(_edited("dev", "tritonDeployments", maxReplicas=INT32_MAX), "dev")
    assert found[f"{D}.maxReplicas"][1].startswith("at most 2: pool 'l40s' holds 2 replicas of 1 GPU(s) at its 2 nodes")


def test_max_replicas_beyond_what_the_pool_holds_is_refused():
    found = config_problems(_edited("gcp-prod", "tritonDeployments", maxReplicas=100_000), "gcp-prod")
    value, allowed, fix = found[f"{D}.maxReplicas"]
    assert value == 100_000 and "or raise that pool's maxNodes" in allowed
    assert fix.endswith(f"'tritonfleet:{D}.maxReplicas' {allowed.split()[2].rstrip(':').replace(',', '')} --stack gcp-prod")


@pytest.mark.parametrize(
    ("stack", "max_nodes", "allowed"),
    [
        ("dev", 10**20, "at most 100,000: EKS runs at most 100,000 nodes in a cluster"),
        ("dev", 100_001, "at most 100,000: EKS runs at most 100,000 nodes in a cluster"),
        ("gcp-dev", 10**20, "GKE runs at most 1,000 nodes of a node pool per zone"),
    ],
)
def test_max_nodes_within_the_clouds_node_limits(stack, max_nodes, allowed):
    found = config_problems(_edited(stack, "gpuPools", maxNodes=max_nodes), stack)
    value, text, fix = found["gpuPools[0].maxNodes"]
    assert value == max_nodes and allowed in text
    assert len(found) == 1 or all("maxNodes" not in key or key == "gpuPools[0].maxNodes" for key in found)


def test_a_gke_pool_may_have_a_thousand_nodes_per_zone():
    """gcp-dev's cluster has two zones: its pool (all of them) takes 2,000 nodes, a pool in one zone 1,000."""
    assert load_stack_config(_edited("gcp-dev", "gpuPools", maxNodes=2000), "gcp-dev").gpu_pools[0].max_nodes == 2000
    found = config_problems(_edited("gcp-dev", "gpuPools", maxNodes=1001, zones=["us-central1-a"]), "gcp-dev")
    assert found["gpuPools[0].maxNodes"][1].startswith("at most 1,000: GKE runs at most 1,000 nodes of a node pool per zone (1 zone(s) here)")


def test_all_pools_together_within_the_clusters_node_limit():
    pools = json.loads(engine_config("prod")["tritonfleet:gpuPools"])
    for pool in pools:
        pool["maxNodes"] = 60_000
    raw = engine_config("prod")
    raw["tritonfleet:gpuPools"] = json.dumps(pools)
    found = config_problems(raw, "prod")
    [(key, (_, allowed, _))] = [(k, v) for k, v in found.items() if "adding up to" in v[1]]
    assert key.endswith(".maxNodes") and "at most 100,000 with the" in allowed and "EKS runs at most 100,000" in allowed


@pytest.mark.parametrize("namespace", ["kube-system", "kube-public", "kube-node-lease", "kube-anything", "default",
                                       "monitoring", "gpu-operator", "tritonfleet-capacity",
                                       "tritonfleet-model-cache"])
def test_a_deployment_namespace_of_the_system_or_the_platform_is_refused(namespace):
    value, allowed, fix = config_problems(_edited("dev", "tritonDeployments", namespace=namespace), "dev")[f"{D}.namespace"]
    assert value == namespace and "a namespace of its own" in allowed and fix.endswith(" triton --stack dev")


def test_the_capacity_namespace_is_the_one_the_aws_placeholders_use():
    from tritonfleet.clouds.aws.node_pools import PLACEHOLDER_NAMESPACE
    from tritonfleet.core.conventions import CAPACITY_NAMESPACE

    assert PLACEHOLDER_NAMESPACE == CAPACITY_NAMESPACE


@pytest.mark.parametrize("namespace", ["a" * 64, "Triton", "-x", "x" * 10_000])
def test_namespace_names_are_dns_labels(namespace):
    _, allowed, _ = config_problems(_edited("dev", "tritonDeployments", namespace=namespace), "dev")[f"{D}.namespace"]
    assert "at most 63 characters" in allowed


@pytest.mark.parametrize("prefix", ["../" * 2, "../", "a/../", "./", "a/./b/", "/abs/", ".hidden/", "a//", "a" * 600 + "/"])
def test_a_model_prefix_stays_inside_the_bucket_folder(prefix):
    value, allowed, _ = config_problems(_edited("dev", "tritonDeployments", modelPrefix=prefix), "dev")[f"{D}.modelPrefix"]
    assert value == prefix and "none starting with '.' (no '..')" in allowed


@pytest.mark.parametrize("prefix", ["", "resnet/", "team-a/models.v2/", "a_b/c-d/"])
def test_ordinary_model_prefixes_pass(prefix):
    assert load_stack_config(_edited("dev", "tritonDeployments", modelPrefix=prefix), "dev").triton_deployments[0].model_prefix == prefix


@pytest.mark.parametrize(
    ("section", "value", "key", "allowed"),
    [
        ("budget", {"monthlyUsd": 1e308}, "budget.monthlyUsd", "less than or equal to 9007199254740991"),
        ("gpuLimit", 10**20, "gpuLimit", "less than or equal to 2147483647"),
    ],
)
def test_stack_numbers_are_bounded(section, value, key, allowed):
    raw = engine_config("dev")
    raw[f"tritonfleet:{section}"] = json.dumps(value)
    assert allowed in config_problems(raw, "dev")[key][1]


def test_an_assumed_price_is_a_finite_amount():
    found = config_problems(_edited("dev", "gpuPools", assumedPrice={"usdPerHour": 1e308, "note": "quote Q-1"}), "dev")
    assert "less than or equal to 9007199254740991" in found["gpuPools[0].assumedPrice.usdPerHour"][1]


@pytest.mark.parametrize("reservation", ["a" * 64, "My-Reservation", "r-", "projects/p/reservations/r"])
def test_a_gcp_reservation_id_is_a_compute_engine_name(reservation):
    """Names (and a shared reservation's project) follow Compute Engine's naming rules (reservations.py)."""
    raw = engine_config("gcp-prod")
    pools = json.loads(raw["tritonfleet:gpuPools"])
    index = next(i for i, pool in enumerate(pools) if pool.get("reservationId"))
    pools[index]["reservationId"] = reservation
    raw["tritonfleet:gpuPools"] = json.dumps(pools)
    value, allowed, _ = config_problems(raw, "gcp-prod")[f"gpuPools[{index}].reservationId"]
    assert value == reservation and "a GCP reservation" in allowed


@pytest.mark.parametrize(
    ("labels", "key", "allowed"),
    [
        ({"team/" + "a" * 64: "x"}, "gpuPools[0].nodeLabels", "a name of at most 63 characters"),
        ({"a" * 254 + "/team": "x"}, "gpuPools[0].nodeLabels", "an optional DNS prefix"),
        ({"team": "a" * 64}, "gpuPools[0].nodeLabels.team", "a label value: at most 63"),
        ({"team": "-x"}, "gpuPools[0].nodeLabels.team", "starting and ending alphanumeric"),
    ],
    ids=["long-name", "long-prefix", "long-value", "bad-value"],
)
def test_node_labels_are_kubernetes_labels(labels, key, allowed):
    """They go on every node of the pool: a label Kubernetes refuses would fail the deploy, not the plan."""
    assert allowed in config_problems(_edited("dev", "gpuPools", nodeLabels=labels), "dev")[key][1]


def test_a_storage_class_name_is_at_most_253_characters():
    raw = engine_config("dev")
    raw["tritonfleet:monitoring"] = json.dumps({**json.loads(raw["tritonfleet:monitoring"]), "storageClass": "a" * 254})
    assert "at most 253 characters" in config_problems(raw, "dev")["monitoring.storageClass"][1]


@pytest.mark.parametrize("path", ["../" * 2 + "etc/x.json", "/etc/x.json", "a/" + "../" * 2 + "x.json", ".hidden/x.json"])
def test_a_loadtest_result_is_a_file_inside_the_project(path):
    found = config_problems(_edited("dev", "tritonDeployments", loadtestResult={"path": path, "model": "resnet"}), "dev")
    assert "inside it (no '..', no leading '/')" in found[f"{D}.loadtestResult.path"][1]


@pytest.mark.parametrize("stack", ["../" * 2 + "etc/passwd", "a/b", "", "x" * 101, "dev\n"])
def test_a_stack_name_cannot_reach_other_files(stack):
    """The name becomes part of file paths (stacks/Pulumi.<stack>.yaml, plans/<stack>.json, policies/config/...)."""
    from conftest import ROOT

    from tritonfleet.plan.project import ProjectError, load_project, stack_config

    with pytest.raises(ProjectError, match="a stack name has letters, digits, '-', '_' and '.' only"):
        stack_config(load_project(ROOT), stack)
