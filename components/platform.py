"""The platform: the cloud floor for the stack's cloud, then the Kubernetes layer on its facts."""

from __future__ import annotations

import pulumi

from tritonfleet.core.config import StackConfig


class Platform(pulumi.ComponentResource):
    def __init__(self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:platform:Platform", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        # Import only the cloud SDK this stack needs: the other one costs seconds and hundreds of MB.
        if config.cloud == "aws":
            from components.aws.cloud import AwsCloud

            cloud = AwsCloud(f"{name}-aws", config, opts=child)
        else:
            from components.gcp.cloud import GcpCloud

            cloud = GcpCloud(f"{name}-gcp", config, opts=child)
        facts = cloud.facts

        from components.k8s.triton import TritonRelease

        self.triton = {
            d.name: TritonRelease(
                f"{name}-triton-{d.name}",
                deployment=d,
                pool=facts.pools[d.pool],
                model_repository=facts.model_repositories[config.bucket_for(d).name],
                env=facts.triton_env,
                provider=facts.provider,
                opts=child,
            )
            for d in config.triton_deployments
        }
        self.cluster_name = cloud.cluster_name
        self.kubeconfig = facts.kubeconfig
        self.model_repositories = facts.model_repositories
        self.cloud_outputs = facts.outputs
        self.register_outputs({"cluster_name": self.cluster_name})
