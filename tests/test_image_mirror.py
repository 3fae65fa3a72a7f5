"""Images already there (cluster.imageMirror, docs/serving.md "Images"): each cloud's mirror decisions, the image
reference the Triton release then pulls, and the prod policy configs admitting the mirrored release tags."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, STACKS, engine_config, one_line

from policies.rules.k8s_image_require_pinned_tag import _split, reference_problem
from tritonfleet.clouds.aws import image_mirror as aws_mirror
from tritonfleet.clouds.gcp import image_mirror as gcp_mirror
from tritonfleet.core import pins
from tritonfleet.core.config import ConfigError, load_stack_config


def test_ecr_pull_through_cannot_mirror_nvcr_so_the_stack_copies():
    assert pins.TRITON_IMAGE_REGISTRY == "nvcr.io"
    assert not any("nvcr" in upstream for upstream in aws_mirror.PULL_THROUGH_UPSTREAMS)
    assert aws_mirror.PULL_THROUGH_SOURCE.startswith("https://docs.aws.amazon.com/AmazonECR/")
    url = f"123456789012.dkr.ecr.us-east-1.amazonaws.com/{aws_mirror.repository_name('tf-dev')}"
    assert url.endswith("/tf-dev/nvidia/tritonserver")
    commands = aws_mirror.copy_commands(url, ["26.07-py3", "26.07-trtllm-python-py3", "26.07-py3"])
    assert commands == [
        f"crane copy nvcr.io/nvidia/tritonserver:26.07-py3 {url}:26.07-py3",
        f"crane copy nvcr.io/nvidia/tritonserver:26.07-trtllm-python-py3 {url}:26.07-trtllm-python-py3",
    ]


def test_artifact_registry_mirrors_nvcr_under_the_same_path_and_streams_on_cos_only():
    assert gcp_mirror.UPSTREAM_URI == "https://nvcr.io"
    registry = "us-central1-docker.pkg.dev/my-project/" + gcp_mirror.REMOTE_REPOSITORY_ID
    assert gcp_mirror.mirrored_image(registry) == f"{registry}/nvidia/tritonserver"
    assert gcp_mirror.streams("COS_CONTAINERD") and not gcp_mirror.streams("UBUNTU_CONTAINERD")
    assert "containerfilesystem.googleapis.com" in gcp_mirror.MIRROR_APIS


@pytest.mark.parametrize(
    ("config", "reference"),
    [
        ("prod", "123456789012.dkr.ecr.us-east-1.amazonaws.com/tf-prod/nvidia/tritonserver:26.07-py3"),
        ("prod", "123456789012.dkr.ecr.us-east-1.amazonaws.com/tf-prod/nvidia/tritonserver:26.07-trtllm-python-py3"),
        ("gcp-prod", "us-central1-docker.pkg.dev/my-project/nvcr/nvidia/tritonserver:26.07-vllm-python-py3"),
    ],
)
def test_prod_policies_admit_the_mirrored_release_tags_and_nothing_looser(config, reference):
    settings = json.loads((ROOT / "policies" / "config" / f"{config}.json").read_text())["k8s-image-require-pinned-tag"]
    patterns = settings["allowedTagPatterns"]
    assert reference_problem(*_split(reference), strict=True, patterns=patterns) is None
    moving = reference.rsplit(":", 1)[0] + ":latest"
    other = reference.replace("nvidia/tritonserver", "someone/else")
    assert reference_problem(*_split(moving), strict=True, patterns=patterns) is not None
    assert reference_problem(*_split(other), strict=True, patterns=patterns) is not None


def test_release_values_pull_from_the_mirror_with_the_pinned_tag():
    from components.k8s.triton import release_values
    from tritonfleet.core.scheduling import pool_facts

    config = load_stack_config(engine_config("dev"), "dev")
    deployment = config.triton_deployments[0]
    pool = config.pool(deployment.pool)
    args = (deployment, pool_facts(config, pool), config.instance_type(pool), "s3://models", {}, {}, True)
    from components.k8s.triton import NO_LOAD_BALANCERS

    plain = release_values(*args, NO_LOAD_BALANCERS)
    mirrored = release_values(*args, NO_LOAD_BALANCERS, image_repository="registry.example/tf-dev/nvidia/tritonserver")
    assert plain["image"] == {"repository": pins.TRITON_IMAGE_REPOSITORY, "tag": deployment.image_tag}
    assert mirrored["image"] == {"repository": "registry.example/tf-dev/nvidia/tritonserver", "tag": deployment.image_tag}


def test_shipped_stacks_pull_from_nvcr(stack_config):
    assert not any(stack_config(stack).cluster.image_mirror for stack in STACKS)


def test_a_bad_image_mirror_value_is_refused():
    data = dict(engine_config("dev"))
    cluster = json.loads(data["tritonfleet:cluster"])
    cluster["imageMirror"] = "sometimes"
    data["tritonfleet:cluster"] = json.dumps(cluster)
    with pytest.raises(ConfigError) as error:
        load_stack_config(data, "dev")
    assert "tritonfleet:cluster.imageMirror = \"sometimes\"" in one_line(str(error.value))
