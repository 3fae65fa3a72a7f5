"""The platform: the cloud floor for the stack's cloud, then the Kubernetes layer on its facts."""

from __future__ import annotations

import importlib
from datetime import date

import pulumi
import pulumi_kubernetes as k8s

from components.contract import CloudAdapter
from components.k8s.pod_security import TRITON_LEVEL, pod_security_labels
from tritonfleet.core.cloud import cloud as registered_cloud
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import model_cache_identity
from tritonfleet.core.placement import hostname_spread


def adapter_class(name: str) -> type[CloudAdapter]:
    """The Pulumi adapter of cloud `name` (its Cloud's `adapter`), imported now. Only the stack's own adapter is
    imported, so a GCP plan never loads pulumi_aws and an AWS plan never loads pulumi_gcp (each costs seconds and
    hundreds of MB)."""
    module, _, class_name = registered_cloud(name).adapter.partition(":")
    return getattr(importlib.import_module(module), class_name)


def _bill_lines(config: StackConfig) -> list[dict[str, object]]:
    from tritonfleet.core.bill import other_lines, registered_lines
    from tritonfleet.core.cost import stack_cost

    return registered_lines(config, other_lines(config, stack_cost(config), date.today()))


class Platform(pulumi.ComponentResource):
    """The stack: its cloud's floor, then the GPU Operator, monitoring and the Triton deployments on top."""

    def __init__(self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None = None):
        # The bill's lines no resource proves (usage-driven ones...), for the budget policies.
        super().__init__("tritonfleet:platform:Platform", name, {"billLines": _bill_lines(config)}, opts)
        child = pulumi.ResourceOptions(parent=self)
        cloud = adapter_class(config.cloud)(f"{name}-{config.cloud}", config, opts=child)
        facts = cloud.facts

        from components.k8s.access_keys import AccessKeys
        from components.k8s.autoscaling import PrometheusAdapter
        from components.k8s.gpu_operator import GpuOperator
        from components.k8s.triton import TritonRelease

        monitoring = config.monitoring.enabled
        # Releases that install the CRDs our charts use (ServiceMonitor, PrometheusRule): they go first.
        crd_providers: list[pulumi.Resource] = []
        self.monitoring = None
        if monitoring:
            from components.k8s.monitoring import Monitoring

            self.monitoring = Monitoring(f"{name}-monitoring", config, facts.monitoring, provider=facts.provider, opts=child)
            crd_providers.append(self.monitoring.release)
        gpu_operator = GpuOperator(
            f"{name}-gpu-operator",
            profile=facts.gpu_operator_values,
            gpu_taints=[taint for pool in facts.pools.values() for taint in pool.taints],
            monitoring=monitoring,
            provider=facts.provider,
            depends_on=crd_providers,
            quota_spec=facts.gpu_operator_resource_quota,
            opts=child,
        )
        if monitoring and any(d.rollout for d in config.triton_deployments):
            from components.k8s.rollout import ArgoRollouts

            # Its CRDs (Rollout, AnalysisTemplate) come before the Triton releases that render them.
            rollouts = ArgoRollouts(f"{name}-argo-rollouts", provider=facts.provider, depends_on=crd_providers, opts=child)
            crd_providers.append(rollouts.release)
        if any(d.scale_to_zero for d in config.triton_deployments):
            from components.k8s.keda import Keda

            # Its CRDs (ScaledObject, InterceptorRoute) come before the Triton releases that render them.
            keda = Keda(f"{name}-keda", provider=facts.provider, depends_on=crd_providers, opts=child)
            crd_providers.extend(keda.releases)
        if monitoring:
            PrometheusAdapter(f"{name}-prometheus-adapter", provider=facts.provider, depends_on=crd_providers, opts=child)
        triton_prerequisites = [
            *crd_providers,
            *([gpu_operator.release] if gpu_operator.release else []),
            *facts.triton_depends_on,
        ]

        # One Namespace per namespace the deployments use, so each deployment's key Secret can go in before its release.
        namespaces = {
            ns: k8s.core.v1.Namespace(
                f"{name}-ns-{ns}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=ns, labels=pod_security_labels(TRITON_LEVEL)),
                opts=pulumi.ResourceOptions(parent=self, provider=facts.provider),
            )
            for ns in dict.fromkeys(d.namespace for d in config.triton_deployments)
        }
        access_keys = {
            d.name: AccessKeys(f"{name}-access-{d.name}", d, namespaces[d.namespace], provider=facts.provider, opts=child)
            for d in config.triton_deployments
        }

        host_path = registered_cloud(config.cloud).model_cache_host_path
        cached = [d for d in config.triton_deployments if d.model_cache]
        if cached:
            from components.k8s.model_cache import ModelCache
            from components.k8s.triton import model_repository_path

            def repository(d):
                uri = facts.model_repositories[config.bucket_for(d).name]
                return uri.apply(lambda u, prefix=d.model_prefix: model_repository_path(u, prefix))

            # Before the releases: their replicas find the nodes' views already filling.
            ModelCache(
                f"{name}-model-cache",
                [(d, facts.pools[d.pool], repository(d),
                  facts.service_account_annotations.get(model_cache_identity(d.name), {})) for d in cached],
                host_path=host_path,
                image=config.cluster.model_cache_image or "",
                env=facts.triton_env,
                provider=facts.provider,
                opts=child,
            )  # fmt: skip
        self.triton = {
            d.name: TritonRelease(
                f"{name}-triton-{d.name}",
                deployment=d,
                pool=facts.pools[d.pool],
                instance_type=config.instance_type(config.pool(d.pool)),
                bucket_uri=facts.model_repositories[config.bucket_for(d).name],
                env=facts.triton_env,
                service_account_annotations=facts.service_account_annotations.get(d.name, {}),
                monitoring=monitoring,
                exposure=facts.exposure,
                hostname=hostname_spread(config, d),
                image_repository=facts.triton_image_repository,
                model_cache_host_path=host_path,
                provider=facts.provider,
                depends_on=[*triton_prerequisites, namespaces[d.namespace], *filter(None, [access_keys[d.name].secret])],
                opts=child,
            )
            for d in config.triton_deployments
        }
        self.cluster_name = facts.cluster_name
        self.kubeconfig = facts.kubeconfig
        self.model_repositories = facts.model_repositories
        self.exports = facts.exports
        self.register_outputs({"cluster_name": self.cluster_name})
