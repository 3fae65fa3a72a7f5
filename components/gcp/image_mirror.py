"""The Triton image mirror on GCP: an Artifact Registry remote repository for nvcr.io (the decisions and their
sources: tritonfleet/clouds/gcp/image_mirror.py). A builder whose resources are children of the GCP adapter."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from tritonfleet.clouds.gcp.image_mirror import (
    MIRROR_APIS,
    READER_ROLE,
    REMOTE_REPOSITORY_ID,
    REPOSITORY_MODE,
    UPSTREAM_URI,
    mirrored_image,
)


def create_image_mirror(
    name: str, project: str | None, region: str, labels: dict[str, str], node_account_email: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> tuple[gcp.artifactregistry.Repository, pulumi.Output[str]]:  # fmt: skip
    """The remote repository (after the APIs it and image streaming need), the nodes' read on it, and the Triton
    image repository behind it (resolving once the nodes may read it)."""
    apis = [
        gcp.projects.Service(
            f"{name}-api-{api.split('.')[0]}", project=project, service=api,
            disable_on_destroy=False, disable_dependent_services=False, opts=opts,
        )  # fmt: skip
        for api in MIRROR_APIS
    ]
    repository = gcp.artifactregistry.Repository(
        f"{name}-nvcr-mirror",
        project=project,
        location=region,
        repository_id=REMOTE_REPOSITORY_ID,
        format="DOCKER",
        mode=REPOSITORY_MODE,
        description=f"nvcr.io, cached in {region} for the Triton images",
        remote_repository_config=gcp.artifactregistry.RepositoryRemoteRepositoryConfigArgs(
            docker_repository=gcp.artifactregistry.RepositoryRemoteRepositoryConfigDockerRepositoryArgs(
                custom_repository=gcp.artifactregistry.RepositoryRemoteRepositoryConfigDockerRepositoryCustomRepositoryArgs(
                    uri=UPSTREAM_URI
                )
            )
        ),
        labels=labels,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=apis)),
    )
    reader = gcp.artifactregistry.RepositoryIamMember(
        f"{name}-nvcr-mirror-nodes",
        project=project,
        location=region,
        repository=repository.repository_id,
        role=READER_ROLE,
        member=pulumi.Output.from_input(node_account_email).apply(lambda email: f"serviceAccount:{email}"),
        opts=opts,
    )
    image = pulumi.Output.all(repository.registry_uri, reader.id).apply(lambda args: mirrored_image(args[0]))
    return repository, image
