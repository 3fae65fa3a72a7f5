"""Who can reach a Triton deployment's pods, and what they may reach, per cloud and exposure mode, as plain data.

Modes are tritonfleet.core.exposure's: cluster, internal (network load balancer), internal-application, public.

One source for two readers: tests/test_access_connectivity.py proves every cell with a NetworkPolicy engine
(network-config-analyzer) on the objects the chart renders, and docs/access.md carries the tables `markdown()` writes
(`python -m components.k8s.access_matrix` rewrites them; a test keeps the document in step). Cells are what the
NetworkPolicy admits as seen by the pod; what the load balancer itself filters (loadBalancerSourceRanges, the ALB's
inbound-cidrs) comes before that and is described in docs/access.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tritonfleet.core.cloud import cloud, cloud_names
from tritonfleet.core.exposure import CLUSTER, MODES, ExposureFacts, mode_label

INFERENCE = frozenset({("TCP", 8000), ("TCP", 8001)})
HTTP_ONLY = frozenset({("TCP", 8000)})
METRICS = frozenset({("TCP", 8002), ("TCP", 8003)})  # Triton's metrics and the model-state exporter
DNS = frozenset({("UDP", 53), ("TCP", 53)})
HTTPS = frozenset({("TCP", 443)})
NOTHING: frozenset[tuple[str, int]] = frozenset()


@dataclass(frozen=True)
class Peer:
    key: str
    description: str


# Sources, in table order.
INGRESS_PEERS = (
    Peer("client", "client pods (named namespaces and/or labels; default: labelled pods of the deployment's namespace)"),
    Peer("same-namespace", "any other pod of the deployment's namespace"),
    Peer("other-namespace", "pods of a namespace not named as a client"),
    Peer("prometheus", "Prometheus (`app.kubernetes.io/name: prometheus` in `monitoring`)"),
    Peer("monitoring-other", "any other pod of `monitoring`"),
    Peer("load-balancer", "the load balancer's data path and health checks"),
    Peer("client-network", "a `clientCidrs` address, as the pod sees it"),
    Peer("elsewhere", "any other address (pod ranges, the VPC, the internet)"),
)
# Destinations of Triton's own connections.
EGRESS_PEERS = (
    Peer("kube-dns", "cluster DNS (`k8s-app: kube-dns` in `kube-system`)"),
    Peer("object-store", "the object store (AWS: the region's S3 prefix list; GCP: private.googleapis.com)"),
    Peer("identity", "STS's interface endpoint in the load balancer subnets (AWS)"),
    Peer("metadata-252", "GKE metadata server 169.254.169.252"),
    Peer("metadata-254", "metadata server 169.254.169.254"),
    Peer("internet", "any other address (the internet, the VPC's other addresses)"),
    Peer("pod", "any other pod"),
)


def cloud_facts(name: str, load_balancer_cidrs: tuple[str, ...] | None = None) -> ExposureFacts:
    """The facts cloud `name`'s adapter hands up, for load balancers in `load_balancer_cidrs` (None: those of a stack
    on the network tritonfleet creates)."""
    return cloud(name).exposure_facts(load_balancer_cidrs)


def _object_store_cidrs() -> tuple[str, ...]:
    """Where each registered cloud's Triton pods reach their model bucket in the offline plan."""
    return tuple(cidr for name in cloud_names() for cidr in cloud(name).object_store_cidrs())


def ingress(facts: ExposureFacts, mode: str, grpc_through_load_balancer: bool = True) -> dict[str, frozenset[tuple[str, int]]]:
    """Source peer -> the (protocol, port) pairs it may open on a Triton pod in that exposure mode; a load balancer that
    routes no gRPC (an Application one with loadBalancerGrpc false) reaches the HTTP port alone."""
    exposed = mode != CLUSTER
    load_balancer = INFERENCE if grpc_through_load_balancer else HTTP_ONLY
    return {
        "client": INFERENCE,
        "same-namespace": NOTHING,
        "other-namespace": NOTHING,
        "prometheus": METRICS,
        "monitoring-other": NOTHING,
        "load-balancer": load_balancer if exposed and facts.load_balancer_sources.get(mode) else NOTHING,
        "client-network": INFERENCE if mode in facts.keeps_client_address else NOTHING,
        "elsewhere": NOTHING,
    }


def egress(facts: ExposureFacts, load_balancer_cidrs: tuple[str, ...] = ()) -> dict[str, frozenset[tuple[str, int]]]:
    """Destination peer -> the (protocol, port) pairs a Triton pod may open there: only what the cloud's facts list
    (`ExposureFacts.egress`), the identity endpoint being whatever the load balancer subnets hold."""
    allowed = {r.cidr: frozenset({(r.protocol, r.port)}) for r in facts.egress}
    return {
        "kube-dns": DNS,
        "object-store": HTTPS if any(c in allowed for c in _object_store_cidrs()) else NOTHING,
        "identity": HTTPS if load_balancer_cidrs and all(c in allowed for c in load_balancer_cidrs) else NOTHING,
        "metadata-252": allowed.get("169.254.169.252/32", NOTHING),
        "metadata-254": allowed.get("169.254.169.254/32", NOTHING),
        "internet": NOTHING,
        "pod": NOTHING,
    }


def _cell(ports: frozenset[tuple[str, int]]) -> str:
    if not ports:
        return "—"
    by_protocol: dict[str, list[int]] = {}
    for protocol, port in sorted(ports, key=lambda p: (p[1], p[0])):
        by_protocol.setdefault(protocol, []).append(port)
    return ", ".join(
        f"{protocol} {'/'.join(str(p) for p in ports)}" for protocol, ports in sorted(by_protocol.items(), reverse=True)
    )


def markdown() -> str:
    """The two tables of docs/access.md: who reaches a Triton pod per cloud and mode, and what a Triton pod reaches."""
    clouds = cloud_names()
    modes = [(name, mode) for name in clouds for mode in MODES]
    cells = {pair: ingress(cloud_facts(pair[0]), pair[1]) for pair in modes}
    lines = [
        "| reaches a Triton pod | " + " | ".join(f"{name.upper()} {mode_label(mode)}" for name, mode in modes) + " |",
        "|---|" + "---|" * len(modes),
    ]
    lines += [f"| {p.description} | " + " | ".join(_cell(cells[m][p.key]) for m in modes) + " |" for p in INGRESS_PEERS]
    out = {name: egress(cloud_facts(name), cloud(name).load_balancer_cidrs()) for name in clouds}
    lines += ["", "| a Triton pod reaches | " + " | ".join(name.upper() for name in clouds) + " |"]
    lines += ["|---|" + "---|" * len(clouds)]
    lines += [f"| {p.description} | " + " | ".join(_cell(out[c][p.key]) for c in clouds) + " |" for p in EGRESS_PEERS]
    return "\n".join(lines) + "\n"


BEGIN = "<!-- access-matrix:begin (generated by `python -m components.k8s.access_matrix`) -->"
END = "<!-- access-matrix:end -->"
DOC = Path(__file__).resolve().parents[2] / "docs" / "access.md"


def with_tables(document: str) -> str:
    """The document with the text between BEGIN and END replaced by the current tables."""
    head, rest = document.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{markdown()}{END}{tail}"


if __name__ == "__main__":
    DOC.write_text(with_tables(DOC.read_text()))
