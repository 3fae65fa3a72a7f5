"""The node-local model cache in the cluster (docs/serving.md "Node-local model cache"): per cached deployment
(tritonDeployments[].modelCache) a prefetch DaemonSet on every node of its pool, and the Triton chart's values that
read what it publishes.

The DaemonSet runs `python -m tritonfleet.models.node_cache --publish` (images/model-cache/Dockerfile) in its own
namespace, Pod Security privileged: it writes the cloud's node folder (Cloud.model_cache_host_path, a hostPath), which
no other level admits. Everything else about the pod is locked down (no privilege, no capabilities, read-only root,
RuntimeDefault seccomp); it runs as root only to write the root-owned node folder. It reads the bucket as its own
ServiceAccount, which the cloud adapter grants read on the deployment's bucket prefix only (the same keyless
mechanism as Triton's: contract.identity_requests). Its nodeSelector and tolerations are the pool's, so it runs on
every node of the pool the moment the node joins, minNodes and the warm placeholders' nodes included: those are
pre-warmed before a replica lands there.

Triton's pods read the folder through a PersistentVolume and claim (charts/triton-inference-server/templates/
model-cache.yaml), which Pod Security restricted admits, and the chart's start script chooses the node's view or the
bucket (files/model_cache_start.sh).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from tritonfleet.core import pins
from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.conventions import MODEL_CACHE_NAMESPACE, model_cache_service_account, triton_release_name
from tritonfleet.core.scheduling import PoolFacts

from .pod_security import MODEL_CACHE_LEVEL, pod_security_labels
from .values import key_tolerations

# Where the node folder is mounted in the prefetch pod and, read-only, in Triton's (the chart's modelCache.mountPath).
CACHE_MOUNT = "/model-cache"
# Seconds between the prefetch's checks of the bucket: a newly published version reaches every node within it.
CHECK_EVERY_SECONDS = 60
# A view the prefetch has not re-checked for this long is not used by a starting replica (five missed checks).
STALE_SECONDS = 5 * CHECK_EVERY_SECONDS
APP_LABEL = "tritonfleet-model-cache"
# The prefetch is alive while it re-checks (COMPLETE touched each round) or fills (FILLING touched every 10 s).
LIVE_SECONDS = 10 * CHECK_EVERY_SECONDS


def _fresh(paths: list[str], seconds: int) -> list[str]:
    """An exec probe: one of `paths` exists and was touched within `seconds` (the image's Python; no shell)."""
    code = (f"import os, sys, time; sys.exit(0 if any(os.path.exists(p) and time.time() - os.stat(p).st_mtime < "
            f"{seconds} for p in {paths!r}) else 1)")  # fmt: skip
    return ["python", "-c", code]


def view_key(deployment: TritonDeployment) -> str:
    """The deployment's view under the cache's views/ folder: its namespace and release, unique in the cluster."""
    return f"{deployment.namespace}.{triton_release_name(deployment.name)}"


def expected_models(deployment: TritonDeployment) -> list[str]:
    """What a replica needs in the node's view to serve from it: the models it must serve or load, each with its
    pinned version (modelVersions) as model:version; empty: the view's own completeness (every published model)."""
    names = dict.fromkeys([*deployment.required_models, *deployment.load_models, *deployment.model_versions])
    return [f"{m}:{deployment.model_versions[m]}" if m in deployment.model_versions else m for m in names]


def model_cache_values(deployment: TritonDeployment, host_path: str, wait_seconds: int) -> dict[str, Any]:
    """The Triton chart's modelCache values. `wait_seconds`: how long a start waits for this node's fill in progress
    (the startup budget's model fetch: a fill on a new node runs while the image pulls)."""
    return {
        "enabled": True,
        "hostPath": host_path,
        "view": view_key(deployment),
        "mountPath": CACHE_MOUNT,
        "models": expected_models(deployment),
        "waitSeconds": wait_seconds,
        "staleSeconds": STALE_SECONDS,
    }


def deployment_folder(deployment: TritonDeployment, host_path: str) -> str:
    """The node folder of one deployment's cache: its own, so a replica never sees another deployment's models (and
    one deployment's pruning never waits for another's fill)."""
    return f"{host_path}/{view_key(deployment)}"


def daemonset_name(deployment: TritonDeployment) -> str:
    return f"model-cache-{deployment.name}"


def prefetch_daemonset(
    deployment: TritonDeployment, pool: PoolFacts, repository: str, host_path: str, image: str, env: Mapping[str, str]
) -> dict[str, Any]:
    """The prefetch DaemonSet of one cached deployment (a plain manifest): `repository` is its bucket URL
    (s3://bucket/prefix), read by the container from MODEL_REPOSITORY."""
    name = daemonset_name(deployment)
    labels = {"app.kubernetes.io/name": APP_LABEL, "app.kubernetes.io/instance": name}
    view = f"{CACHE_MOUNT}/views/{view_key(deployment)}"
    versions = [f"--version={m}={v}" for m, v in sorted(deployment.model_versions.items())]
    container = {
        "name": "prefetch",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["python", "-m", "tritonfleet.models.node_cache"],
        "args": ["$(MODEL_REPOSITORY)", f"--cache={CACHE_MOUNT}", f"--publish={view_key(deployment)}",
                 f"--every={CHECK_EVERY_SECONDS}", *versions],  # fmt: skip
        "env": [{"name": "MODEL_REPOSITORY", "value": repository},
                *({"name": k, "value": v} for k, v in sorted(env.items()))],  # fmt: skip
        # Ready: this node's view serves replicas (`kubectl get ds -n tritonfleet-model-cache` counts the warm nodes).
        "readinessProbe": {"exec": {"command": _fresh([f"{view}/current/COMPLETE"], STALE_SECONDS)},
                           "periodSeconds": 30, "timeoutSeconds": 10},
        "livenessProbe": {"exec": {"command": _fresh([f"{view}/current/COMPLETE", f"{view}/FILLING"], LIVE_SECONDS)},
                          "initialDelaySeconds": 60, "periodSeconds": 60, "timeoutSeconds": 10, "failureThreshold": 3},
        # Hashing and copying are I/O-bound; the CPU limit only keeps a fill from starving the node's agents.
        "resources": {
            "requests": {"cpu": "100m", "memory": "256Mi", "ephemeral-storage": "64Mi"},
            "limits": {"cpu": "2", "memory": "1Gi", "ephemeral-storage": "256Mi"},
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "privileged": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "cache", "mountPath": CACHE_MOUNT}, {"name": "tmp", "mountPath": "/tmp"}],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": name,
            "namespace": MODEL_CACHE_NAMESPACE,
            "labels": labels,
            # Findings of checkov we accept, with the reason (docs/serving.md "Node-local model cache").
            "annotations": {
                "checkov.io/skip1": "CKV_K8S_23=Root writes the node's root-owned cache folder (a hostPath); every "
                "capability is dropped, no privilege escalation, read-only root filesystem",
                "checkov.io/skip2": "CKV_K8S_40=Root, see CKV_K8S_23: the hostPath folder the kubelet creates is "
                "owned by root",
            },
        },
        "spec": {
            "selector": {"matchLabels": labels},
            # One node at a time: a new image or version never empties every node's view at once.
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": model_cache_service_account(deployment.name),
                    "automountServiceAccountToken": False,  # IRSA projects its own token; GKE's metadata server
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "nodeSelector": dict(pool.node_selector),
                    "tolerations": key_tolerations(pool.taints),
                    "containers": [container],
                    "volumes": [
                        # The deployment's own subfolder: the Triton chart's volume names the same one.
                        {"name": "cache", "hostPath": {"path": deployment_folder(deployment, host_path),
                                                       "type": "DirectoryOrCreate"}},  # fmt: skip
                        {"name": "tmp", "emptyDir": {"sizeLimit": "128Mi"}},
                    ],
                },
            },
        },
    }


def network_policy() -> dict[str, Any]:
    """No traffic into the prefetch pods (they serve nothing); out, they reach the bucket, DNS and the cloud's token
    endpoints, as Triton's pods do before their own policy narrows them."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "model-cache-no-ingress", "namespace": MODEL_CACHE_NAMESPACE},
        "spec": {"podSelector": {"matchLabels": {"app.kubernetes.io/name": APP_LABEL}}, "policyTypes": ["Ingress"]},
    }


def service_account(deployment: TritonDeployment) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": model_cache_service_account(deployment.name), "namespace": MODEL_CACHE_NAMESPACE},
        "automountServiceAccountToken": False,
    }


def image_reference(image: str) -> str:
    """cluster.modelCacheImage as pulled: as given where it names a tag or digest, else with the pinned tag."""
    name = image.rsplit("/", 1)[-1]
    return image if "@" in name or ":" in name else f"{image}:{pins.MODEL_CACHE_IMAGE_TAG}"


class ModelCache(pulumi.ComponentResource):
    """The prefetch DaemonSets of the cached deployments, in their privileged namespace."""

    def __init__(
        self,
        name: str,
        deployments: Sequence[tuple[TritonDeployment, PoolFacts, pulumi.Input[str], Mapping[str, pulumi.Input[str]]]],
        host_path: str,
        image: str,
        env: Mapping[str, str],
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`deployments`: (deployment, its pool, its bucket URL with prefix, its prefetch ServiceAccount's
        annotations from the cloud adapter)."""
        super().__init__("tritonfleet:k8s:ModelCache", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata={"name": MODEL_CACHE_NAMESPACE, "labels": pod_security_labels(MODEL_CACHE_LEVEL)},
            opts=child,
        )
        after = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[self.namespace])
        policy = network_policy()
        k8s.networking.v1.NetworkPolicy(f"{name}-no-ingress", metadata=policy["metadata"], spec=policy["spec"], opts=after)
        self.daemonsets = []
        for deployment, pool, repository, account_annotations in deployments:
            account = service_account(deployment)
            # The IRSA webhook reads the annotation when it admits a pod: the DaemonSet waits for it.
            sa = k8s.core.v1.ServiceAccount(
                f"{name}-{deployment.name}-sa",
                metadata={**account["metadata"], "annotations": dict(account_annotations)},
                automount_service_account_token=False,
                opts=after,
            )
            manifest = prefetch_daemonset(deployment, pool, "", host_path, image_reference(image), env)
            container = manifest["spec"]["template"]["spec"]["containers"][0]
            # The bucket URL is the cloud's output: only its own leaf waits for it.
            container["env"][0]["value"] = repository
            self.daemonsets.append(
                k8s.apps.v1.DaemonSet(
                    f"{name}-{deployment.name}",
                    metadata=manifest["metadata"],
                    spec=manifest["spec"],
                    opts=pulumi.ResourceOptions.merge(after, pulumi.ResourceOptions(depends_on=[sa])),
                )
            )
        self.register_outputs({"namespace": MODEL_CACHE_NAMESPACE})
