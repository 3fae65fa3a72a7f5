"""The Triton image mirror on AWS: an ECR repository that the pinned Triton images are copied into (the decisions and
their sources: tritonfleet/clouds/aws/image_mirror.py). A builder whose resources are children of the AWS adapter."""

from __future__ import annotations

from collections.abc import Iterable

import pulumi
import pulumi_aws as aws

from tritonfleet.clouds.aws.image_mirror import copy_commands, repository_name


def create_image_mirror(
    name: str, cluster_name: str, tags: Iterable[str], protected: bool, labels: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> tuple[aws.ecr.Repository, pulumi.Output[list[str]]]:  # fmt: skip
    """The repository (immutable tags: a copied release tag never changes under a running node) and the commands
    that fill it with `tags`."""
    repository = aws.ecr.Repository(
        f"{name}-triton-mirror",
        name=repository_name(cluster_name),
        image_tag_mutability="IMMUTABLE",
        image_scanning_configuration=aws.ecr.RepositoryImageScanningConfigurationArgs(scan_on_push=True),
        force_delete=not protected,
        tags=labels,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(protect=protected)),
    )
    tags = sorted(set(tags))
    return repository, repository.repository_url.apply(lambda url: copy_commands(url, tags))
