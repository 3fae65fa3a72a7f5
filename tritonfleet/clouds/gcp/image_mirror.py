"""The Triton image mirror on GCP (cluster.imageMirror): an Artifact Registry remote repository whose upstream is
nvcr.io, in the stack's region, and image streaming on the GPU node pools whose node image supports it.

A remote repository fetches an image from its upstream on the first pull and serves the regional copy after that
(https://cloud.google.com/artifact-registry/docs/repositories/remote-repo, read 2026-12-05); nvcr.io is a "custom"
Docker upstream (remoteRepositoryConfig.dockerRepository.customRepository.uri). The path below the repository is the
upstream's: <region>-docker.pkg.dev/<project>/nvcr/nvidia/tritonserver:<tag> is nvcr.io/nvidia/tritonserver:<tag>.

Image streaming (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming, read 2026-12-05) starts a
container while its image streams from Artifact Registry and caches it on the node; it needs the Container File
System API, GKE Standard 1.18.6-gke.4801 or later, Container-Optimized OS with containerd node images, and images in
Artifact Registry. Whether images behind a remote repository are eligible is not confirmed here (README VERIFY).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tritonfleet.clouds.gcp.facts import IMAGE_STREAMING_START_SECONDS
from tritonfleet.core import pins

if TYPE_CHECKING:
    from tritonfleet.core.config import StackConfig
    from tritonfleet.core.startup import ImagePullPath

REMOTE_REPOSITORY_ID = "nvcr"
REPOSITORY_MODE = "REMOTE_REPOSITORY"
UPSTREAM_URI = f"https://{pins.TRITON_IMAGE_REGISTRY}"
# The APIs the mirror needs besides the stack's own (facts.PROJECT_APIS): Artifact Registry, and the Container File
# System API that image streaming requires.
MIRROR_APIS = ("artifactregistry.googleapis.com", "containerfilesystem.googleapis.com")
# What the nodes' service account is granted on the repository alone: read (pull) access. A node account that is not
# Compute Engine's default one needs the role granted (https://cloud.google.com/artifact-registry/docs/access-control
# and https://cloud.google.com/iam/docs/roles-permissions/artifactregistry, read 2026-12-05).
READER_ROLE = "roles/artifactregistry.reader"
# Node images image streaming supports (the page above: Container-Optimized OS with containerd).
STREAMING_NODE_IMAGES = ("COS_CONTAINERD",)


def streams(image_type: str) -> bool:
    """Whether a node pool of this node image gets image streaming (gcfs_config) with the mirror."""
    return image_type in STREAMING_NODE_IMAGES


def mirrored_image(registry_uri: str) -> str:
    """The Triton image repository behind the remote repository (registry_uri: <region>-docker.pkg.dev/<project>/<id>)."""
    return f"{registry_uri}/{pins.TRITON_IMAGE_PATH}"


def image_pull_path(config: StackConfig) -> ImagePullPath | None:
    """Image streaming's figure for the startup budget's image step, on GPU pools that stream (the mirror on, COS
    nodes; the remote repository is a mode streaming serves, facts.IMAGE_STREAMING_REPOSITORY_MODES); None where
    they pull the whole image."""
    from tritonfleet.clouds.gcp.drivers import gpu_driver_setup
    from tritonfleet.core.startup import ImagePullPath

    if not (config.cluster.image_mirror and streams(gpu_driver_setup(config).image_type)):
        return None
    basis = "streaming: 'a couple of seconds' (Google), files stream"
    return ImagePullPath("image streaming", IMAGE_STREAMING_START_SECONDS, basis)
