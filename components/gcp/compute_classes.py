"""GKE custom compute classes as Kubernetes custom resources (specs: tritonfleet/clouds/gcp/compute_classes.py)."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from tritonfleet.clouds.gcp.compute_classes import ComputeClassSpec, compute_class_manifest


def create_compute_class(name: str, spec: ComputeClassSpec, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """The class as a Kubernetes custom resource (pulumi-gcp has no typed resource for it)."""
    manifest = compute_class_manifest(spec)
    return k8s.apiextensions.CustomResource(
        f"{name}-class-{spec.head}",
        api_version=manifest["apiVersion"],
        kind=manifest["kind"],
        metadata=manifest["metadata"],
        spec=manifest["spec"],
        opts=opts,
    )
