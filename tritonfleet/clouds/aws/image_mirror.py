"""The Triton image mirror on AWS (cluster.imageMirror): an ECR repository in the stack's region that the pinned
Triton images are copied into, so a new GPU node pulls them from the region (its layers through the VPC's S3 gateway
endpoint, facts.ECR_LAYER_BUCKET) instead of from nvcr.io through NAT.

A copy, not a pull-through cache: ECR's pull-through cache rules support these upstreams only, and nvcr.io is not
one of them (https://docs.aws.amazon.com/AmazonECR/latest/userguide/pull-through-cache.html, read 2026-12-05).
"""

from __future__ import annotations

from collections.abc import Iterable

from tritonfleet.core import pins

PULL_THROUGH_UPSTREAMS = (
    "public.ecr.aws",  # Amazon ECR Public
    "registry.k8s.io",  # Kubernetes
    "quay.io",
    "registry-1.docker.io",  # Docker Hub
    "<name>.azurecr.io",  # Microsoft Azure Container Registry
    "ghcr.io",  # GitHub Container Registry
    "registry.gitlab.com",  # GitLab Container Registry (SaaS only)
    "Chainguard Registry",
    "<account>.dkr.ecr.<region>.amazonaws.com",  # another Amazon ECR registry
)
PULL_THROUGH_SOURCE = "https://docs.aws.amazon.com/AmazonECR/latest/userguide/pull-through-cache.html, read 2026-12-05"
# The copy tool the documented step uses: crane (go-containerregistry) copies every platform of a tag registry to
# registry without a local Docker daemon (https://github.com/google/go-containerregistry/blob/main/cmd/crane/doc/
# crane_copy.md, read 2026-12-05).
COPY_TOOL = "crane copy"


def repository_name(cluster_name: str) -> str:
    """The ECR repository: one per cluster (an account and region may hold several stacks), the upstream path kept."""
    return f"{cluster_name}/{pins.TRITON_IMAGE_PATH}"


def copy_commands(repository_url: str, tags: Iterable[str]) -> list[str]:
    """The commands that fill the mirror with the tags the stack's deployments run (after `aws ecr get-login-password
    | crane auth login <registry> -u AWS --password-stdin`); run them on every pin bump, before `pulumi up`."""
    return [f"{COPY_TOOL} {pins.TRITON_IMAGE_REPOSITORY}:{tag} {repository_url}:{tag}" for tag in sorted(set(tags))]
