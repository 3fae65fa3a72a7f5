"""GKE compute classes, spot shutdown budgets and node pool settings, on the rendered objects of every shipped GCP
stack (the plan's resources) and on the plain decisions behind them; bad input refused at config time."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from components.k8s.triton import shutdown_budget
from components.k8s.values import tolerates
from tests.conftest import STACKS
from tests.gcp_helpers import decoded, encoded
from tritonfleet.clouds.gcp.compute_classes import compute_class_manifest, compute_class_specs, gke_pool_facts
from tritonfleet.clouds.gcp.facts import (
    COMPUTE_CLASS_LABEL,
    SPOT_EXTENDED_SHUTDOWN_MIN_VERSION,
    gke_version_at_least,
)
from tritonfleet.clouds.gcp.maintenance import maintenance_for
from tritonfleet.clouds.gcp.node_pools import gpu_node_pool_specs, local_ssd_count, spot_shutdown, upgrade_settings
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.diff.compare import compare_stack

SCHEMA = json.loads((Path(__file__).parent / "data" / "computeclass-v1.schema.json").read_text())
GCP_STACKS = [s for s in STACKS if s.startswith("gcp-")]
NODE_POOL = "gcp:container/nodePool:NodePool"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
RELEASE = "kubernetes:helm.sh/v3:Release"
K8S_EFFECT = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}


def of_type(plan, typ):
    return [r for r in plan["resources"] if r["type"] == typ]


def gpu_node_pools(plan):
    return [r for r in of_type(plan, NODE_POOL) if r["inputs"]["nodeConfig"].get("guestAccelerators")]


def triton_releases(plan):
    return [r for r in of_type(plan, RELEASE) if "triton-inference-server" in str(r["inputs"].get("chart", ""))]


def selects(selector: dict, node_pool: dict) -> bool:
    labels = node_pool["inputs"]["nodeConfig"]["labels"]
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def k8s_taints(node_pool: dict) -> list[dict]:
    return [{**t, "effect": K8S_EFFECT[t["effect"]]} for t in node_pool["inputs"]["nodeConfig"]["taints"]]


def problems(data: dict, stack: str = "gcp-prod") -> str:
    with pytest.raises(ConfigError) as failure:
        load_stack_config(encoded(data), stack)
    return str(failure.value)


# ---------------------------------------------------------------- the rendered objects of every shipped GCP stack


@pytest.mark.parametrize("stack", GCP_STACKS)
def test_every_counted_node_pool_is_reachable_by_the_deployments_it_serves(stack, stock_plan):
    """Each release's selector and tolerations reach every node pool of its class, and every GPU node pool the plan
    counts is reached by some release: no GPU is paid for that no pod can use."""
    plan = stock_plan(stack)
    pools, releases = gpu_node_pools(plan), triton_releases(plan)
    assert releases
    reached = set()
    for release in releases:
        values = release["inputs"]["values"]
        selected = [p for p in pools if selects(values["nodeSelector"], p)]
        assert selected, f"{release['name']} selects no GPU node pool"
        for node_pool in selected:
            for taint in k8s_taints(node_pool):
                assert tolerates(values["tolerations"], taint), (release["name"], node_pool["inputs"]["name"], taint)
        reached |= {p["inputs"]["name"] for p in selected}
    assert reached == {p["inputs"]["name"] for p in pools}


@pytest.mark.parametrize("stack", GCP_STACKS)
def test_compute_classes_validate_and_list_exactly_their_node_pools(stack, stock_plan):
    plan = stock_plan(stack)
    pools = gpu_node_pools(plan)
    classes = of_type(plan, COMPUTE_CLASS)
    assert classes
    for klass in classes:
        jsonschema.validate(klass["inputs"], SCHEMA)
        name, spec = klass["inputs"]["metadata"]["name"], klass["inputs"]["spec"]
        members = {p["inputs"]["name"] for p in pools if p["inputs"]["nodeConfig"]["labels"][COMPUTE_CLASS_LABEL] == name}
        listed = [n for priority in spec["priorities"] for n in priority["nodepools"]]
        assert sorted(listed) == sorted(members) and len(listed) == len(set(listed))
        assert spec["nodePoolAutoCreation"] == {"enabled": False} and spec["whenUnsatisfiable"] == "DoNotScaleUp"
        # The class waits for its own node pools.
        assert {p["urn"] for p in pools if p["inputs"]["name"] in members} == set(klass["dependsOn"])


@pytest.mark.parametrize("stack", GCP_STACKS)
def test_triton_releases_wait_for_the_compute_classes(stack, stock_plan):
    plan = stock_plan(stack)
    classes = {c["urn"] for c in of_type(plan, COMPUTE_CLASS)}
    for release in triton_releases(plan):
        assert classes <= set(release["dependsOn"]), release["name"]


def test_the_h200_class_prefers_the_reservation_then_the_spot_pool(stock_plan):
    [klass] = [c for c in of_type(stock_plan("gcp-prod"), COMPUTE_CLASS) if c["inputs"]["metadata"]["name"] == "tritonfleet-h200"]
    spec = klass["inputs"]["spec"]
    assert spec["priorities"] == [{"nodepools": ["h200-reservation"]}, {"nodepools": ["h200-spot-spot"]}]
    # Both deployments of the class keep 2+ replicas: migrating back to the reservation never empties serving.
    assert spec["activeMigration"] == {"optimizeRulePriority": True}


def test_a_single_replica_deployment_turns_active_migration_off():
    data = decoded("gcp-prod")
    data["tritonDeployments"][1]["minReplicas"] = 1  # vision on l4 (on-demand, then spot)
    data["tritonDeployments"][1].pop("rollout", None)  # a rollout needs two replicas at least
    config = load_stack_config(encoded(data), "gcp-prod")
    by_head = {spec.head: spec for spec in compute_class_specs(config)}
    assert by_head["l4"].optimize_rule_priority is False and by_head["h200"].optimize_rule_priority is True


def test_a_manifest_outside_the_schema_is_refused():
    config = load_stack_config(encoded(decoded("gcp-dev")), "gcp-dev")
    manifest = compute_class_manifest(compute_class_specs(config)[0])
    manifest["spec"]["whenUnsatisfiable"] = "ScaleUpSometimes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(manifest, SCHEMA)
    manifest["spec"]["whenUnsatisfiable"] = "DoNotScaleUp"
    manifest["spec"]["priorities"] = [{"nodePools": ["l4-spot"]}]  # the field is spelt nodepools
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(manifest, SCHEMA)


# ---------------------------------------------------------------- spot shutdown inside GKE's budget


@pytest.mark.parametrize("stack", GCP_STACKS)
def test_triton_shutdown_fits_the_pods_share_on_every_spot_pool(stack, stock_plan):
    """On a spot node GKE gives non-system Pods the first 15 s of the 30 s notice, or 105 s of the extended 120 s
    window where the cluster's full GKE build offers it (gcp-prod's gkeVersion): preStop + drain < grace <= that."""
    plan = stock_plan(stack)
    pods_share = 105 if stack == "gcp-prod" else 15
    pools = gpu_node_pools(plan)
    for release in triton_releases(plan):
        values = release["inputs"]["values"]
        reaches_spot = any(p["inputs"]["nodeConfig"]["spot"] for p in pools if selects(values["nodeSelector"], p))
        shutdown = values["shutdown"]
        assert shutdown["preStopSeconds"] + shutdown["exitTimeoutSeconds"] < shutdown["terminationGracePeriodSeconds"]
        if reaches_spot:
            assert shutdown["terminationGracePeriodSeconds"] <= pods_share == values["spotNoticeSeconds"]


def test_the_extended_window_needs_its_gke_version():
    assert not spot_shutdown("1.35").extended, "a bare minor may be any of its builds: not relied on"
    assert not spot_shutdown("1.35.0-gke.1170999").extended
    assert spot_shutdown(SPOT_EXTENDED_SHUTDOWN_MIN_VERSION).extended and spot_shutdown("1.36").extended
    extended = spot_shutdown("1.36")
    assert (extended.window_seconds, extended.pod_seconds) == (120, 105)
    assert gke_version_at_least("1.33", "1.30.3-gke.1451000") and not gke_version_at_least("1.30", "1.30.3-gke.1451000")


def test_spot_pools_set_the_extended_window_where_the_version_allows_and_triton_uses_it():
    config = load_stack_config(encoded(decoded("gcp-dev")), "gcp-dev")
    newer = config.model_copy(update={"cluster": config.cluster.model_copy(update={"kubernetes_version": "1.36"})})
    [spot] = gpu_node_pool_specs(newer, newer.gpu_pools[0])
    assert spot.shutdown is not None and spot.shutdown.window_seconds == 120
    facts = gke_pool_facts(newer, newer.gpu_pools[0])
    assert (facts.spot_notice_seconds, facts.spot_pod_shutdown_seconds) == (120, 105)
    budget = shutdown_budget(facts)
    assert budget.termination_grace_period_seconds == 105 and budget.pre_stop_seconds == 15
    [today] = gpu_node_pool_specs(config, config.gpu_pools[0])
    assert today.shutdown is None, "below the version GKE's default 30 s window stays (no kubelet config)"


# ---------------------------------------------------------------- node pool settings


def test_upgrade_settings_per_purchase_option_and_machine():
    assert upgrade_settings("reservation", 1) == {"max_surge": 0, "max_unavailable": 1}
    assert upgrade_settings("on-demand", 8) == {"max_surge": 0, "max_unavailable": 1}, "a surge H200 node is scarce"
    assert upgrade_settings("on-demand", 1) == {"max_surge": 1, "max_unavailable": 0}
    assert upgrade_settings("spot", 1) == {"max_surge": 1, "max_unavailable": 0}
    assert upgrade_settings("flex-start", 8) is None


def test_prod_node_pools_in_the_plan(stock_plan):
    plan = stock_plan("gcp-prod")
    by_name = {p["inputs"]["name"]: p["inputs"] for p in gpu_node_pools(plan)}
    assert by_name["h200-reservation"]["upgradeSettings"] == {"maxSurge": 0, "maxUnavailable": 1, "strategy": "SURGE"}
    assert by_name["l4-spot"]["upgradeSettings"] == {"maxSurge": 1, "maxUnavailable": 0, "strategy": "SURGE"}
    # a3-ultragpu-8g comes with 32 local SSDs: they back the node's ephemeral storage (Triton's model copy).
    assert by_name["h200-reservation"]["nodeConfig"]["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 32}
    assert "ephemeralStorageLocalSsdConfig" not in by_name["l4-on-demand"]["nodeConfig"]
    assert local_ssd_count("g2-standard-8") is None


@pytest.mark.parametrize("stack", GCP_STACKS)
def test_every_pool_runs_as_the_node_account_after_its_role_binding(stack, stock_plan):
    plan = stock_plan(stack)
    [binding] = [r for r in of_type(plan, "gcp:projects/iAMMember:IAMMember") if r["name"].endswith("-nodes-role")]
    [cluster] = of_type(plan, "gcp:container/cluster:Cluster")
    account = f"tf-{stack}-nodes@"
    assert cluster["inputs"]["nodeConfig"]["serviceAccount"].startswith(account), "the temporary default pool too"
    assert binding["urn"] in cluster["dependsOn"]
    for pool in of_type(plan, NODE_POOL):
        assert pool["inputs"]["nodeConfig"]["serviceAccount"].startswith(account)
        assert binding["urn"] in pool["dependsOn"], pool["inputs"]["name"]


@pytest.mark.parametrize(("stack", "zones", "per_zone", "total"), [("gcp-dev", ["us-central1-a"], 1, 1), ("gcp-prod", ["us-central1-a", "us-central1-b"], 1, 2)])
def test_system_pool_counts_per_zone_and_in_total(stack, zones, per_zone, total, stock_plan):
    [system] = [p for p in of_type(stock_plan(stack), NODE_POOL) if p["inputs"]["name"] == "system"]
    inputs = system["inputs"]
    assert (inputs["nodeLocations"], inputs["initialNodeCount"]) == (zones, per_zone)
    assert inputs["autoscaling"]["totalMinNodeCount"] == inputs["autoscaling"]["totalMaxNodeCount"] == total
    assert len(zones) * per_zone == total


def test_prod_has_a_maintenance_window_and_a_minor_upgrade_exclusion(stock_plan):
    [prod] = of_type(stock_plan("gcp-prod"), "gcp:container/cluster:Cluster")
    policy = prod["inputs"]["maintenancePolicy"]
    assert policy["recurringWindow"]["recurrence"] == "FREQ=WEEKLY;BYDAY=SA,SU"
    [exclusion] = policy["maintenanceExclusions"]
    assert exclusion["exclusionOptions"] == {"scope": "NO_MINOR_UPGRADES", "endTimeBehavior": "UNTIL_END_OF_SUPPORT"}
    [dev] = of_type(stock_plan("gcp-dev"), "gcp:container/cluster:Cluster")
    assert "maintenancePolicy" not in dev["inputs"] and maintenance_for("dev") is None


# ---------------------------------------------------------------- tritonfleet diff


def test_an_initial_node_count_change_is_a_replacement_said_in_words(stock_plan):
    base, head = stock_plan("gcp-prod"), stock_plan("gcp-prod")
    [system] = [r for r in head["resources"] if r["type"] == NODE_POOL and r["inputs"]["name"] == "system"]
    system["inputs"]["initialNodeCount"] = 2
    [flag] = [f for f in compare_stack(base, head).flags if f.reasons == ("initialNodeCount",)]
    assert flag.action == "replace"
    assert any("initial node count" in note for note in flag.notes)


# ---------------------------------------------------------------- bad input, refused before anything is created


def test_a_stack_name_whose_node_account_id_is_too_long_names_cluster_name():
    data = decoded("gcp-dev")
    message = problems(data, "gcp-dev-with-a-very-long-name")
    assert "cluster.name" in message and "tf-gcp-dev-with-a-very-long-name-nodes" in message
    assert "pulumi config set --path 'tritonfleet:cluster.name' tf-gcp-dev-with-a-very-l" in message
    data["cluster"]["name"] = "ml-dev"
    load_stack_config(encoded(data), "gcp-dev-with-a-very-long-name")


def test_a_system_node_count_that_does_not_split_over_the_zones_is_refused():
    data = decoded("gcp-prod")
    data["cluster"]["systemNodes"] = {"count": 3}
    message = problems(data)
    assert "cluster.systemNodes.count" in message and "multiple of the zone count" in message
    assert "'tritonfleet:cluster.systemNodes.count' 4" in message


def test_a_reservation_on_a_spot_pool_is_refused():
    data = decoded("gcp-prod")
    spot = next(p for p in data["gpuPools"] if p["name"] == "h200-spot")
    spot["reservationId"] = "h200-serving"
    message = problems(data)
    assert "gpuPools[2].reservationId" in message and "pulumi config rm --path 'tritonfleet:gpuPools[2].reservationId'" in message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda pools: pools[1].update(fallbackPool="h200-sport"), "'tritonfleet:gpuPools[1].fallbackPool' h200-spot"),
        (lambda pools: pools[1].update(fallbackPool="l4"), "a pool of the same instanceType"),
        (lambda pools: pools[1].update(fallbackPool="h200"), "the name of another pool"),
        (lambda pools: pools[0].update(fallbackPool="h200-spot"), "already l4's"),
        (lambda pools: pools[2].update(fallbackPool="h200"), "without a fallbackPool of its own"),
        (lambda pools: pools[2].update(enabled=False), "an enabled pool"),
    ],
)
def test_bad_fallback_pools_are_refused(change, expected):
    data = decoded("gcp-prod")
    change(data["gpuPools"])
    assert expected in problems(data)


def test_fallback_pools_are_refused_on_aws():
    from tests.conftest import engine_config

    data = {k.split(":", 1)[1]: (json.loads(v) if isinstance(v, str) and v[:1] in "[{" else v) for k, v in engine_config("prod").items()}
    data["gpuPools"][0]["fallbackPool"] = data["gpuPools"][1]["name"]
    with pytest.raises(ConfigError) as failure:
        load_stack_config(encoded(data), "prod")
    assert "gpuPools[0].fallbackPool" in str(failure.value) and "AWS has no fallback between pools" in str(failure.value)


def test_a_repository_larger_than_the_local_ssds_is_refused():
    data = decoded("gcp-prod")
    llm = data["tritonDeployments"][0]
    llm["repositoryGi"] = 3000  # 4 two-GPU replicas per a3-ultragpu-8g node x 3001 GiB > 12000 GiB
    message = problems(data)
    assert "tritonDeployments[0].repositoryGi" in message and "local SSD" in message


def test_compute_classes_need_their_gke_version():
    data = decoded("gcp-prod")
    del data["cluster"]["gkeVersion"]
    data["cluster"]["kubernetesVersion"] = "1.30"
    assert "1.30.3-gke.1451000" in problems(data)


def test_a_gke_build_belongs_to_the_stacks_minor_and_decides_the_spot_window(stack_config):
    data = decoded("gcp-prod")
    data["cluster"]["gkeVersion"] = "1.34.1-gke.1000"
    message = problems(data)
    assert "tritonfleet:cluster.gkeVersion = \"1.34.1-gke.1000\"" in message and "a GKE build of kubernetesVersion 1.35" in message
    data["cluster"]["gkeVersion"] = "1.35"
    assert "cluster.gkeVersion" in problems(data)  # a minor is not a build
    data = decoded("gcp-dev")
    data["cluster"]["gkeVersion"] = "1.35.2-gke.100"
    config = load_stack_config(encoded(data), "gcp-dev")
    assert config.cluster.gke_build == "1.35.2-gke.100"
    assert gke_pool_facts(config, config.enabled_pools[0]).spot_pod_shutdown_seconds == 105
    config = load_stack_config(encoded(decoded("gcp-dev")), "gcp-dev")  # "1.35" alone: its first build, 30 s
    assert gke_pool_facts(config, config.enabled_pools[0]).spot_pod_shutdown_seconds == 15


def test_the_plan_says_which_pool_falls_back_to_which(stock_plan):
    from tritonfleet.plan.text import pool_lines

    cost = stock_plan("gcp-prod")["cost"]
    assert {p["pool"]: p.get("fallbackPool") for p in cost["pools"]} == {"l4": None, "h200": "h200-spot", "h200-spot": None}
    text = " ".join(line.text for line in pool_lines(cost, 200))
    assert "h200: reservation 1..1 at $86.76/h; its pods fall back to pool h200-spot" in text
