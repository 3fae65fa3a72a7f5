"""The Karpenter controller's Helm release: its name, namespace, service account and values. Plain data, no Pulumi.

Every key set here exists in the pinned chart's values.yaml (tests/upstream/karpenter-1.14.1/values.yaml; checked by
tests/test_aws_karpenter.py). Installed as in https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/:
release `karpenter` in `kube-system`, settings.clusterName and settings.interruptionQueue, controller resources set.
"""

from __future__ import annotations

from tritonfleet.clouds.aws.layout import SYSTEM_ROLE_LABEL

RELEASE_NAME = "karpenter"
CRD_RELEASE_NAME = "karpenter-crd"
# Node repair stays off: ALPHA and off by default in chart 1.14.1 (featureGates.nodeRepair), and a forceful method
# (it deletes an unhealthy node after its toleration without waiting for PodDisruptionBudgets), which on a GPU node
# full of slow-loading replicas is an outage of all of them at once. The EKS node monitoring agent add-on
# (components/aws/cluster.py) reports GPU faults (XID errors) as node conditions and events; replacing a node stays a
# drain. Sources: tests/upstream/karpenter-1.14.1/values.yaml; https://karpenter.sh/v1.14/concepts/disruption/
# ("Node Repair", forceful), read 2026-12-05.
NODE_REPAIR = False
NAMESPACE = "kube-system"
# Named explicitly (the chart would derive the same from the release name) because the Pod Identity association
# binds the controller role to exactly this namespace and name.
SERVICE_ACCOUNT = "karpenter"
# Requests equal limits, as the getting-started guide installs it: the controller is never throttled or evicted first.
CONTROLLER_RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
# The chart's default: two replicas (one leader), on different nodes.
MAX_REPLICAS = 2


def controller_replicas(system_node_count: int) -> int:
    """Two replicas where two system nodes exist; the chart's hostname anti-affinity keeps one per node, and without
    cluster-autoscaler the system node group stays at its configured count, so a second replica on a one-node
    system group would stay Pending."""
    return min(MAX_REPLICAS, system_node_count)


def controller_affinity() -> dict:
    """Only on the system node group, never on a node Karpenter launched (a controller on its own node could remove
    the node it runs on); one replica per node, as the chart's default."""
    ((role_key, role_value),) = SYSTEM_ROLE_LABEL.items()
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"},
                            {"key": role_key, "operator": "In", "values": [role_value]},
                        ]
                    }
                ]
            }
        },
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "kubernetes.io/hostname"}]},
    }


def karpenter_values(cluster_name: str, queue_name: str, region: str, system_node_count: int) -> dict:
    """Values for the pinned Karpenter chart."""
    return {
        "serviceAccount": {"name": SERVICE_ACCOUNT},
        "replicas": controller_replicas(system_node_count),
        "affinity": controller_affinity(),
        "settings": {
            "clusterName": cluster_name,
            "interruptionQueue": queue_name,
            "featureGates": {"nodeRepair": NODE_REPAIR},
        },
        "controller": {
            # The region from config, not from the instance metadata service (whose hop limit may keep pods out).
            "env": [{"name": "AWS_REGION", "value": region}],
            "resources": CONTROLLER_RESOURCES,
        },
    }
