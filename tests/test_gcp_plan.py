"""The real program for GCP stacks under the Pulumi mock runtime: what GKE, IAM and the stack outputs receive."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, run_program
from tests.gcp_helpers import decoded, encoded, mixed_l4_stack

NODE_POOL = "gcp:container/nodePool:NodePool"
BUCKET_READ = "gcp:storage/bucketIAMMember:BucketIAMMember"
WI_BINDING = "gcp:serviceaccount/iAMMember:IAMMember"


@pytest.fixture(scope="module")
def prod(stock_plan):
    return stock_plan("gcp-prod")


@pytest.fixture(scope="module")
def dev(stock_plan):
    return stock_plan("gcp-dev")


def of_type(resources, typ):
    return [r for r in resources if r["type"] == typ]


def gpu_pools(resources):
    return [r for r in of_type(resources, NODE_POOL) if r["inputs"]["nodeConfig"].get("guestAccelerators")]


def by_pool(resources):
    pools = {}
    for r in gpu_pools(resources):
        pools.setdefault(r["inputs"]["nodeConfig"]["labels"]["tritonfleet.io/pool"], []).append(r)
    return pools


def test_cluster_is_private_vpc_native_with_workload_identity(prod):
    [cluster] = of_type(prod["resources"], "gcp:container/cluster:Cluster")
    inputs = cluster["inputs"]
    assert inputs["networkingMode"] == "VPC_NATIVE" and inputs["ipAllocationPolicy"]["clusterSecondaryRangeName"] == "pods"
    assert inputs["privateClusterConfig"]["enablePrivateNodes"] is True
    assert inputs["workloadIdentityConfig"] == {"workloadPool": "acme-ml-prod.svc.id.goog"}
    assert inputs["releaseChannel"] == {"channel": "REGULAR"} and inputs["minMasterVersion"] == "1.35.0-gke.1171000"  # gkeVersion
    assert inputs["enableShieldedNodes"] is True and inputs["removeDefaultNodePool"] is True
    assert inputs["deletionProtection"] is True and cluster["protect"] is True
    assert of_type(prod["resources"], "gcp:compute/routerNat:RouterNat"), "private nodes need NAT to pull nvcr.io images"


def test_system_pool_is_small_and_gpu_free(prod):
    [system] = [r for r in of_type(prod["resources"], NODE_POOL) if r["inputs"]["name"] == "system"]
    assert "guestAccelerators" not in system["inputs"]["nodeConfig"]
    assert system["inputs"]["autoscaling"]["totalMaxNodeCount"] == 2


def test_gke_managed_gpu_pools(prod):
    pools = gpu_pools(prod["resources"])
    assert {r["inputs"]["name"] for r in pools} == {"l4-on-demand", "l4-spot", "h200-reservation", "h200-spot-spot"}
    for r in pools:
        node = r["inputs"]["nodeConfig"]
        [accelerator] = node["guestAccelerators"]
        assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "LATEST"}
        assert node["imageType"] == "COS_CONTAINERD"
        assert "gke-no-default-nvidia-gpu-device-plugin" not in node["labels"]
        assert node["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
        klass = node["labels"]["cloud.google.com/compute-class"]
        assert node["taints"] == [
            {"effect": "NO_SCHEDULE", "key": "nvidia.com/gpu", "value": "present"},
            {"effect": "NO_SCHEDULE", "key": "cloud.google.com/compute-class", "value": klass},
        ]
        assert node["spot"] is (node["labels"]["tritonfleet.io/capacity"] == "spot")
        assert not node.get("preemptible"), "legacy preemptible VMs are never used"
        assert r["protect"] is True and r["deleteBeforeReplace"] is True
    h200 = next(r for r in pools if r["inputs"]["name"] == "h200-reservation")["inputs"]
    [accelerator] = h200["nodeConfig"]["guestAccelerators"]
    assert (accelerator["type"], accelerator["count"]) == ("nvidia-h200-141gb", 8)
    assert h200["nodeConfig"]["machineType"] == "a3-ultragpu-8g"
    assert h200["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["h200-serving"],
    }
    assert h200["nodeLocations"] == ["us-central1-b"]


def test_operator_gpu_pools(dev):
    [pool] = gpu_pools(dev["resources"])
    node = pool["inputs"]["nodeConfig"]
    assert node["guestAccelerators"] == [
        {"count": 1, "type": "nvidia-l4", "gpuDriverInstallationConfig": {"gpuDriverVersion": "INSTALLATION_DISABLED"}}
    ]
    assert node["imageType"] == "UBUNTU_CONTAINERD"
    assert node["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"
    assert node["shieldedInstanceConfig"]["enableSecureBoot"] is False
    assert node["spot"] is True and node["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert pool["protect"] is False


def test_pool_bounds_add_up_in_the_plan(prod):
    """Maxima: the pool's maxNodes; minima: the plan's floor (h200-spot keeps the node llm's second minimum replica
    needs beside the one reserved node)."""
    config = decoded("gcp-prod")
    floors = {p["pool"]: p["floorNodes"] for p in prod["cost"]["pools"]}
    assert floors == {"l4": 2, "h200": 1, "h200-spot": 1}
    for name, resources in by_pool(prod["resources"]).items():
        wanted = next(p for p in config["gpuPools"] if p["name"] == name)
        assert sum(r["inputs"]["autoscaling"]["totalMinNodeCount"] for r in resources) == floors[name]
        assert sum(r["inputs"]["autoscaling"]["totalMaxNodeCount"] for r in resources) == wanted["maxNodes"]


@pytest.mark.parametrize(
    ("min_nodes", "max_nodes", "base", "share"), [(2, 8, 2, 0.5), (1, 9, 0, 0.75), (0, 4, 4, 1.0), (0, 5, 0, 1.0)]
)
def test_mixes_become_spot_and_on_demand_pools(min_nodes, max_nodes, base, share):
    run = run_program(ROOT, "tritonfleet", "gcp-dev", encoded(mixed_l4_stack(min_nodes, max_nodes, base, share)), [])
    resources = [r.document() for r in run.resources]
    pools = gpu_pools(resources)
    # The minima hold the floor: the on-demand base (0, 4, 4, 1.0: four on-demand nodes stay up) and the node
    # gcp-dev's one resnet replica keeps up.
    assert sum(r["inputs"]["autoscaling"]["totalMinNodeCount"] for r in pools) == max(min_nodes, base, 1)
    assert sum(r["inputs"]["autoscaling"]["totalMaxNodeCount"] for r in pools) == max_nodes
    for r in pools:
        capacity = r["inputs"]["nodeConfig"]["labels"]["tritonfleet.io/capacity"]
        assert r["inputs"]["nodeConfig"]["spot"] is (capacity == "spot")
        assert r["inputs"]["name"] == f"l4-{capacity}"


def test_each_deployment_reads_only_its_own_bucket():
    data = decoded("gcp-prod")
    data["modelBuckets"] = [{"name": "models"}, {"name": "vision-models"}]
    data["tritonDeployments"][1]["bucket"] = "vision-models"
    run = run_program(ROOT, "tritonfleet", "gcp-prod", encoded(data), [])
    resources = [r.document() for r in run.resources]
    reads = of_type(resources, BUCKET_READ)
    granted = {(r["inputs"]["member"], r["inputs"]["bucket"], r["inputs"]["role"]) for r in reads}
    llm = f"{PRINCIPAL}acme-ml-prod.svc.id.goog/subject/ns/triton/sa/triton-llm"
    vision = f"{PRINCIPAL}acme-ml-prod.svc.id.goog/subject/ns/triton/sa/triton-vision"
    assert granted == {
        (llm, "tf-gcp-prod-models-acme-ml-prod-us-central1", "roles/storage.objectViewer"),
        (llm, "tf-gcp-prod-models-acme-ml-prod-us-central1", "roles/storage.legacyBucketReader"),
        (vision, "tf-gcp-prod-vision-models-acme-ml-prod-us-central1", "roles/storage.objectViewer"),
        (vision, "tf-gcp-prod-vision-models-acme-ml-prod-us-central1", "roles/storage.legacyBucketReader"),
    }
    project_roles = [r["inputs"]["role"] for r in of_type(resources, "gcp:projects/iAMMember:IAMMember")]
    assert not [role for role in project_roles if "storage" in role], "no project-wide storage roles"
    assert run.outputs["tritonServiceAccounts"]["vision"]["bucket"] == "tf-gcp-prod-vision-models-acme-ml-prod-us-central1"


PRINCIPAL = "principal://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/"


def test_workload_identity_principals_read_their_buckets_without_google_service_accounts(prod):
    reads = of_type(prod["resources"], BUCKET_READ)
    assert {(r["inputs"]["member"], r["inputs"]["role"]) for r in reads} == {
        (f"{PRINCIPAL}acme-ml-prod.svc.id.goog/subject/ns/triton/sa/triton-{d}", role)
        for d in ("llm", "vision")
        for role in ("roles/storage.objectViewer", "roles/storage.legacyBucketReader")
    }
    assert all(any(dep.endswith("::tf-gcp-gke") for dep in r["dependsOn"]) for r in reads), "the pool needs the cluster"
    assert not of_type(prod["resources"], WI_BINDING), "no impersonation hop"
    accounts = [r["inputs"]["accountId"] for r in of_type(prod["resources"], "gcp:serviceaccount/account:Account")]
    assert accounts == ["tf-gcp-prod-nodes"], "the nodes' account only: no Google account per deployment"
    assert not of_type(prod["resources"], "gcp:serviceaccount/key:Key"), "no service account keys"


def test_outputs(prod):
    outputs = prod["outputs"]
    assert outputs["kubeconfig"] == "[secret]"
    assert outputs["gkeNodePools"] == {
        "h200": ["h200-reservation"],
        "h200-spot": ["h200-spot-spot"],
        "l4": ["l4-on-demand", "l4-spot"],
    }
    assert outputs["tritonServiceAccounts"]["llm"] == {
        "bucket": "tf-gcp-prod-models-acme-ml-prod-us-central1",
        "kubernetesServiceAccount": "triton/triton-llm",
        "principal": f"{PRINCIPAL}acme-ml-prod.svc.id.goog/subject/ns/triton/sa/triton-llm",
        "roles": ["roles/storage.objectViewer", "roles/storage.legacyBucketReader"],
    }


def test_plan_shows_pools_and_costs(prod):
    assert [p["pool"] for p in prod["cost"]["pools"]] == ["l4", "h200", "h200-spot"]
    assert prod["cost"]["pools"][0]["nodes"] == {"on-demand": {"min": 2, "max": 5}, "spot": {"min": 0, "max": 3}}


def test_operator_on_cos_gets_googles_installer_and_an_operator_without_driver():
    data = decoded("gcp-dev")
    data["cluster"]["gpuNodeImage"] = "COS_CONTAINERD"
    run = run_program(ROOT, "tritonfleet", "gcp-dev", encoded(data), [])
    resources = [r.document() for r in run.resources]
    [installer] = [r for r in of_type(resources, "kubernetes:apps/v1:DaemonSet") if r["inputs"]["metadata"]["name"] == "nvidia-driver-installer"]
    assert installer["inputs"]["metadata"]["namespace"] == "kube-system"
    for pool in gpu_pools(resources):
        node = pool["inputs"]["nodeConfig"]
        assert node["imageType"] == "COS_CONTAINERD" and node["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"
        assert node["guestAccelerators"][0]["gpuDriverInstallationConfig"]["gpuDriverVersion"] == "INSTALLATION_DISABLED"
    [operator] = [r for r in of_type(resources, "kubernetes:helm.sh/v3:Release") if r["inputs"]["name"] == "gpu-operator"]
    values = operator["inputs"]["values"]
    assert values["driver"]["enabled"] is False and values["cdi"] == {"enabled": True}
    assert values["toolkit"]["installDir"] == "/home/kubernetes/bin/nvidia"


def test_gke_managed_on_ubuntu_asks_for_the_default_driver(prod):
    data = decoded("gcp-prod")
    data["cluster"]["gpuNodeImage"] = "UBUNTU_CONTAINERD"
    run = run_program(ROOT, "tritonfleet", "gcp-prod", encoded(data), [])
    versions = {
        a["gpuDriverInstallationConfig"]["gpuDriverVersion"]
        for pool in gpu_pools([r.document() for r in run.resources])
        for a in pool["inputs"]["nodeConfig"]["guestAccelerators"]
    }
    assert versions == {"DEFAULT"}  # LATEST is documented for COS only
    assert {
        a["gpuDriverInstallationConfig"]["gpuDriverVersion"]
        for pool in gpu_pools(prod["resources"])
        for a in pool["inputs"]["nodeConfig"]["guestAccelerators"]
    } == {"LATEST"}


SERVICE = "gcp:projects/service:Service"


def test_the_stack_enables_its_project_apis_and_never_disables_them(prod):
    services = of_type(prod["resources"], SERVICE)
    assert {s["inputs"]["service"] for s in services} == {
        "container.googleapis.com", "compute.googleapis.com", "iam.googleapis.com", "iamcredentials.googleapis.com",
        "storage.googleapis.com", "logging.googleapis.com", "monitoring.googleapis.com", "dns.googleapis.com",
        # the project IAM binding of the nodes' role, and enabling APIs at all (cloud review 2026-12-05)
        "cloudresourcemanager.googleapis.com", "serviceusage.googleapis.com",
    }
    for s in services:
        assert s["inputs"]["project"] == "acme-ml-prod"
        assert s["inputs"]["disableOnDestroy"] is False and s["inputs"]["disableDependentServices"] is False


def test_google_api_names_resolve_to_private_google_access_where_tritons_egress_goes(prod):
    """Triton's NetworkPolicy allows HTTPS to private.googleapis.com's range only: the VPC's private zone for
    googleapis.com sends every Google API name (Cloud Storage's among them) there."""
    (zone,) = of_type(prod["resources"], "gcp:dns/managedZone:ManagedZone")
    assert zone["inputs"]["dnsName"] == "googleapis.com." and zone["inputs"]["visibility"] == "private"
    (network,) = of_type(prod["resources"], "gcp:compute/network:Network")
    assert len(zone["inputs"]["privateVisibilityConfig"]["networks"]) == 1 and network["urn"] in zone["dependsOn"]
    records = {r["inputs"]["name"]: r["inputs"] for r in of_type(prod["resources"], "gcp:dns/recordSet:RecordSet")}
    assert records["private.googleapis.com."]["rrdatas"] == ["199.36.153.8", "199.36.153.9", "199.36.153.10", "199.36.153.11"]
    assert records["*.googleapis.com."]["type"] == "CNAME"
    assert records["*.googleapis.com."]["rrdatas"] == ["private.googleapis.com."]
    tritons = [r for r in prod["resources"] if r["inputs"].get("chart") == "./charts/triton-inference-server"]
    assert tritons and all(r["inputs"]["values"]["networkPolicy"]["egressHttpsCidrs"] == ["199.36.153.8/30"] for r in tritons)


def test_every_gcp_resource_waits_for_the_apis(prod):
    urns = {s["urn"] for s in of_type(prod["resources"], SERVICE)}
    by_urn = {r["urn"]: r for r in prod["resources"]}

    def waits(resource, seen=()):
        deps = set(resource.get("dependsOn", []))
        parent = resource.get("parent")
        return urns <= deps or (parent in by_urn and parent not in seen and waits(by_urn[parent], (*seen, parent)))

    gcp = [r for r in prod["resources"] if r["type"].startswith("gcp:") and r["type"] != SERVICE]
    assert gcp and [r["urn"] for r in gcp if not waits(r)] == []


def test_a_kms_key_enables_cloud_kms():
    data = decoded("gcp-prod")
    data["modelBuckets"][0]["kmsKeyId"] = "projects/acme-ml-prod/locations/us-central1/keyRings/models/cryptoKeys/models"
    run = run_program(ROOT, "tritonfleet", "gcp-prod", encoded(data), [])
    services = {r.document()["inputs"]["service"] for r in run.resources if r.type == SERVICE}
    assert "cloudkms.googleapis.com" in services
