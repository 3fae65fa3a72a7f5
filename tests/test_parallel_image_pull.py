"""Faster image pulls per GPU pool (docs/serving.md "Images that are already there, or stream"): SOCI parallel pull on
EKS (gpuPools[].parallelImagePull, rendered into the pool's EC2NodeClass userData), image streaming on GKE, and what
each puts in the startup budget's image step. Pure: configs, node classes and budgets as data."""

from __future__ import annotations

import json
import tomllib
from datetime import date

import pytest

from tests.conftest import engine_config, one_line
from tests.test_aws_node_pools import validate
from tritonfleet.clouds.aws import facts as aws_facts
from tritonfleet.clouds.aws.config_rules import parallel_pull_since, release_at_least
from tritonfleet.clouds.aws.node_pools import image_pull_path, node_class_spec
from tritonfleet.clouds.gcp import facts as gcp_facts
from tritonfleet.clouds.gcp import image_mirror as gcp_mirror
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.cloud import cloud
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.startup import budget_lines, first_request_wait, startup_budget
from tritonfleet.plan.document import startup_section


def _stack(stack: str = "dev", pool: dict | None = None, **cluster):
    """A shipped stack with its first GPU pool and cluster changed."""
    raw = dict(engine_config(stack))
    pools = json.loads(raw["tritonfleet:gpuPools"])
    pools[0].update(pool or {})
    raw["tritonfleet:gpuPools"] = json.dumps(pools)
    raw["tritonfleet:cluster"] = json.dumps({**json.loads(raw["tritonfleet:cluster"]), **cluster})
    return raw


def _config(stack: str = "dev", pool: dict | None = None, **cluster):
    return load_stack_config(_stack(stack, pool, **cluster), stack)


def _refusal(stack: str = "dev", pool: dict | None = None, **cluster) -> str:
    with pytest.raises(ConfigError) as error:
        _config(stack, pool, **cluster)
    return one_line(str(error.value))


BOTTLEROCKET = {"gpuNodeImage": "bottlerocket", "amiReleaseVersion": "1.46.0-a1b2c3d4"}


def test_parallel_pull_on_al2023_is_nodeadms_fast_image_pull_gate_in_the_node_class():
    config = _config(pool={"parallelImagePull": True})
    spec = node_class_spec(config, config.enabled_pools[0], config.cluster_name)
    node_config = json.loads(spec["userData"])
    assert node_config == {"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig",
                           "spec": {"featureGates": {aws_facts.AL2023_FAST_IMAGE_PULL_GATE: True}}}  # fmt: skip
    assert spec["instanceStorePolicy"] == "RAID0"  # SOCI's layers on the NVMe array, as containerd's were
    validate("EC2NodeClass", "l40s", {**spec, "role": "tf-node"})


def test_parallel_pull_on_bottlerocket_is_the_soci_snapshotter_settings():
    config = _config(pool={"parallelImagePull": True}, **BOTTLEROCKET)
    spec = node_class_spec(config, config.enabled_pools[0], config.cluster_name)
    assert tomllib.loads(spec["userData"]) == {"settings": aws_facts.BOTTLEROCKET_SOCI_SETTINGS}
    assert spec["amiSelectorTerms"] == [{"alias": "bottlerocket@v1.46.0"}]
    validate("EC2NodeClass", "l40s", {**spec, "role": "tf-node"})


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_shipped_node_classes_have_no_user_data(stack):
    config = load_stack_config(engine_config(stack), stack)
    assert all("userData" not in node_class_spec(config, pool, config.cluster_name) for pool in config.enabled_pools)
    assert all(image_pull_path(pool) is None for pool in config.gpu_pools)


def test_an_al2023_release_without_soci_is_refused_with_the_pinned_one_as_the_fix():
    message = _refusal(pool={"parallelImagePull": True}, amiReleaseVersion="1.35.7-20250807")
    assert "tritonfleet:cluster.amiReleaseVersion = \"1.35.7-20250807\"" in message
    assert "GPU nodes of al2023 release 20250821 or later" in message
    assert "pulumi config set --path 'tritonfleet:cluster.amiReleaseVersion' 1.35.7-20260903 --stack dev" in message


def test_a_bottlerocket_release_before_the_default_bind_is_refused_with_the_key_removed():
    message = _refusal(pool={"parallelImagePull": True}, gpuNodeImage="bottlerocket", amiReleaseVersion="1.44.0-a1b2c3d4")
    assert "tritonfleet:gpuPools[0].parallelImagePull = true" in message
    assert "RAID0 leaves SOCI's layers on the EBS data volume" in message
    assert "pulumi config rm --path 'tritonfleet:gpuPools[0].parallelImagePull' --stack dev" in message


def test_gke_refuses_parallel_pull_and_names_image_streaming():
    message = _refusal("gcp-dev", pool={"parallelImagePull": True})
    assert "tritonfleet:gpuPools[0].parallelImagePull = true" in message and "image streaming" in message
    assert "pulumi config rm --path 'tritonfleet:gpuPools[0].parallelImagePull' --stack gcp-dev" in message


def test_a_parallel_pull_value_that_is_not_a_boolean_is_refused():
    assert "tritonfleet:gpuPools[0].parallelImagePull = \"soon\"" in _refusal(pool={"parallelImagePull": "soon"})


def test_release_order_per_node_image():
    assert release_at_least("al2023", "1.35.7-20260903", parallel_pull_since("al2023"))
    assert not release_at_least("al2023", "1.32.7-20250807", parallel_pull_since("al2023"))
    assert release_at_least("bottlerocket", "1.52.1-0123abcd", parallel_pull_since("bottlerocket"))
    assert not release_at_least("bottlerocket", "1.45.9-0123abcd", "1.46.0")
    # Bottlerocket has SOCI from 1.44.0; our RAID0 node classes need Karpenter's default bind (1.46.0) on top.
    assert release_at_least("bottlerocket", aws_facts.SOCI_ON_RAID0_BOTTLEROCKET_SINCE,
                            aws_facts.SOCI_PARALLEL_PULL_SINCE["bottlerocket"])  # fmt: skip


def test_nodeadm_turns_the_gate_on_for_every_catalog_gpu_type():
    smallest = aws_facts.AL2023_FAST_IMAGE_PULL_MIN
    catalog = load_catalog()
    types = [itype for gpu in catalog.gpus_on("aws") for itype in catalog.types_for("aws", gpu)]
    assert len(types) > 5
    for itype in types:
        assert itype.vcpu >= smallest["vcpu"] and itype.memory_gib >= smallest["memory_gib"], itype.name


def test_the_budget_keeps_the_download_floor_with_soci_and_the_note_gives_awss_measurement():
    config = _config(pool={"parallelImagePull": True})
    step = startup_budget(config, config.triton_deployments[0]).step("image pull")
    assert (step.seconds, step.basis) == (50, "15.5 GB at 2.5 Gbps, SOCI parallel pull, a floor")
    [row] = startup_section(config)["deployments"]
    assert "  image pull     50 s  15.5 GB at 2.5 Gbps, SOCI parallel pull, a floor" in budget_lines(row)
    assert all(len(line) <= 80 for line in budget_lines(row))
    note = cloud("aws").plan_notes(config, date(2026, 12, 5))["imagePulls"]
    published = aws_facts.SOCI_PUBLISHED_PULL
    assert f"AWS measured a 10.8 GB image in 60 s instead of 112 s ({published['al2023_s'] / published['default_s']:.2f}x)" in note
    assert "imagePulls" not in cloud("aws").plan_notes(_config(), date(2026, 12, 5))


def test_a_measured_pull_still_wins_over_any_path():
    raw = _stack(pool={"parallelImagePull": True})
    deployments = json.loads(raw["tritonfleet:tritonDeployments"])
    deployments[0]["startup"] = {"measured": {"imagePullSeconds": 41}}
    raw["tritonfleet:tritonDeployments"] = json.dumps(deployments)
    config = load_stack_config(raw, "dev")
    assert startup_budget(config, config.triton_deployments[0]).step("image pull").seconds == 41


def _gke(mirror: bool, driver: str):
    raw = dict(engine_config("gcp-prod"))
    cluster = json.loads(raw["tritonfleet:cluster"])
    cluster.update({"imageMirror": mirror, "gpuDriver": driver})
    cluster.pop("gpuNodeImage", None)
    raw["tritonfleet:cluster"] = json.dumps(cluster)
    return load_stack_config(raw, "gcp-prod")


def test_gke_image_streaming_puts_googles_figure_in_the_image_step():
    config = _gke(mirror=True, driver="gke-managed")
    deployment = config.triton_deployments[0]
    step = startup_budget(config, deployment).step("image pull")
    assert step.seconds == gcp_facts.IMAGE_STREAMING_START_SECONDS == 2
    assert "a couple of seconds" in step.basis
    pool = config.pool(deployment.pool)
    assert first_request_wait(deployment, config.instance_type(pool), True, gcp_mirror.image_pull_path(config)).steps
    assert gcp_mirror.REPOSITORY_MODE in gcp_facts.IMAGE_STREAMING_REPOSITORY_MODES


@pytest.mark.parametrize(("mirror", "driver"), [(False, "gke-managed"), (True, "operator")])
def test_gke_pools_that_do_not_stream_keep_the_whole_pull(mirror, driver):
    config = _gke(mirror, driver)
    assert gcp_mirror.image_pull_path(config) is None
    step = startup_budget(config, config.triton_deployments[0]).step("image pull")
    assert "streaming" not in step.basis and step.seconds != gcp_facts.IMAGE_STREAMING_START_SECONDS


def test_why_no_preloaded_image_snapshot_is_built():
    """Our GPU node classes keep instanceStorePolicy RAID0 (the model cache's NVMe), under which Karpenter binds
    containerd's directory to the array: a data volume restored from a snapshot would be hidden. And its blocks come
    from S3 at 100-300 MiB/s at best, so a 16 GB image is still most of a minute away."""
    config = _config(**BOTTLEROCKET)
    assert node_class_spec(config, config.enabled_pools[0], config.cluster_name)["instanceStorePolicy"] == "RAID0"
    assert "/var/lib/containerd" in aws_facts.SNAPSHOT_HIDDEN_BY_RAID0_DIRS
    assert 16e9 / (max(aws_facts.EBS_VOLUME_INITIALIZATION_MIBPS) * 2**20) > 50
