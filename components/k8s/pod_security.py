"""Pod Security Admission: the Pod Security Standards level each namespace tritonfleet creates enforces, as the
namespace labels the built-in admission controller reads (https://kubernetes.io/docs/concepts/security/pod-security-admission/
and https://kubernetes.io/docs/concepts/security/pod-security-standards/, read 2026-12-05).

Each namespace enforces the strictest level every pod tritonfleet puts there meets (tests/test_pod_security.py checks
the rendered pods against it), and audits and warns at that same level, so a pod added later that falls below it is
refused, and a workload whose template falls below it is warned about at apply time.
"""

from __future__ import annotations

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
LABEL_PREFIX = "pod-security.kubernetes.io/"
MODES = ("enforce", "audit", "warn")

# The Triton deployments' namespaces: Triton and its model-state exporter run non-root, without capabilities or
# privilege escalation, under RuntimeDefault seccomp (charts/triton-inference-server). A client pod placed in the same
# namespace must meet `restricted` too (docs/access.md).
TRITON_LEVEL = RESTRICTED
# The capacity placeholders' namespace (warm GPU nodes): pause containers, as locked down as Triton.
CAPACITY_LEVEL = RESTRICTED
# kube-prometheus-stack and prometheus-adapter: no host namespaces, host paths or privileged containers once the node
# exporter lives in its own namespace; Grafana's chart may add CHOWN to an init container, which baseline allows.
MONITORING_LEVEL = BASELINE
# The node exporter's own namespace (conventions.NODE_EXPORTER_NAMESPACE): it reads the host through hostNetwork,
# hostPID and a hostPath mount of / (prometheus-node-exporter chart defaults, prometheus-community/helm-charts
# charts/prometheus-node-exporter/values.yaml, read 2026-12-05), which only `privileged` admits.
NODE_EXPORTER_LEVEL = PRIVILEGED
# The Argo Rollouts controller (components/k8s/rollout.py): no host access or privilege; baseline until its chart's
# pods are checked against restricted (tests/test_pod_security.py does not render that chart: VERIFY in README).
ARGO_ROLLOUTS_LEVEL = BASELINE
# The node-local model cache's prefetch DaemonSets (components/k8s/model_cache.py): they write the node's cache
# folder through a hostPath volume, which baseline and restricted forbid; otherwise unprivileged, no capabilities.
MODEL_CACHE_LEVEL = PRIVILEGED
# KEDA and its HTTP add-on (components/k8s/keda.py): no host access or privilege; baseline until their charts' pods
# are checked against restricted (VERIFY in README).
KEDA_LEVEL = BASELINE


def pod_security_labels(level: str) -> dict[str, str]:
    """The labels that make a namespace enforce, audit and warn at `level`."""
    if level not in (PRIVILEGED, BASELINE, RESTRICTED):
        raise ValueError(f"unknown Pod Security Standards level {level!r}")
    return {f"{LABEL_PREFIX}{mode}": level for mode in MODES}
