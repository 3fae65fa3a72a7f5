"""The Pod Security Standards' baseline and restricted checks on a pod spec, as the built-in Pod Security Admission
controller applies them (https://kubernetes.io/docs/concepts/security/pod-security-standards/, read 2026-12-05):
the tests check every pod tritonfleet renders against the level its namespace enforces."""

from __future__ import annotations

from typing import Any

# Capabilities baseline lets a container add; restricted allows NET_BIND_SERVICE only (and requires dropping ALL).
BASELINE_CAPABILITIES = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP",
    "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
LEVELS = ("privileged", "baseline", "restricted")


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec.get("containers", []), *spec.get("ephemeralContainers", [])]


def _baseline(spec: dict[str, Any]) -> list[str]:
    problems = [f"{key}: true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]
    pod_context = spec.get("securityContext") or {}
    problems += [f"volume {v['name']}: hostPath" for v in spec.get("volumes", []) if "hostPath" in v]
    problems += [f"sysctl {s['name']}" for s in pod_context.get("sysctls", []) if s["name"] not in SAFE_SYSCTLS]
    for scope, context in [("pod", pod_context), *((c["name"], c.get("securityContext") or {}) for c in _containers(spec))]:
        if (context.get("windowsOptions") or {}).get("hostProcess"):
            problems.append(f"{scope}: windowsOptions.hostProcess")
        if (context.get("seccompProfile") or {}).get("type") == "Unconfined":
            problems.append(f"{scope}: seccompProfile Unconfined")
        if (context.get("appArmorProfile") or {}).get("type") == "Unconfined":
            problems.append(f"{scope}: appArmorProfile Unconfined")
        selinux = context.get("seLinuxOptions") or {}
        if selinux.get("type", "") not in SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
            problems.append(f"{scope}: seLinuxOptions {selinux}")
    for container in _containers(spec):
        name, context = container["name"], container.get("securityContext") or {}
        if context.get("privileged"):
            problems.append(f"{name}: privileged")
        added = set((context.get("capabilities") or {}).get("add", [])) - BASELINE_CAPABILITIES
        problems += [f"{name}: adds capability {c}" for c in sorted(added)]
        if context.get("procMount", "Default") != "Default":
            problems.append(f"{name}: procMount {context['procMount']}")
        problems += [f"{name}: hostPort {p['hostPort']}" for p in container.get("ports", []) if p.get("hostPort")]
    return problems


def _restricted(spec: dict[str, Any]) -> list[str]:
    problems = []
    pod_context = spec.get("securityContext") or {}
    for volume in spec.get("volumes", []):
        kinds = set(volume) - {"name"}
        problems += [f"volume {volume['name']}: {k}" for k in sorted(kinds - RESTRICTED_VOLUMES)]
    if pod_context.get("runAsUser") == 0:
        problems.append("pod: runAsUser 0")
    for container in _containers(spec):
        name, context = container["name"], container.get("securityContext") or {}
        if context.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{name}: allowPrivilegeEscalation not false")
        if not context.get("runAsNonRoot", pod_context.get("runAsNonRoot")):
            problems.append(f"{name}: runAsNonRoot not true")
        if context.get("runAsUser") == 0:
            problems.append(f"{name}: runAsUser 0")
        seccomp = (context.get("seccompProfile") or pod_context.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            problems.append(f"{name}: seccompProfile {seccomp}")
        capabilities = context.get("capabilities") or {}
        if "ALL" not in capabilities.get("drop", []):
            problems.append(f"{name}: capabilities not dropping ALL")
        problems += [f"{name}: adds capability {c}" for c in capabilities.get("add", []) if c != "NET_BIND_SERVICE"]
    return problems


def violations(spec: dict[str, Any], level: str) -> list[str]:
    """What in a pod spec the level refuses ([] when the pod meets it)."""
    if level not in LEVELS:
        raise ValueError(level)
    if level == "privileged":
        return []
    return _baseline(spec) + (_restricted(spec) if level == "restricted" else [])
