"""Packing: how many replicas of a shape fit on a GPU node, and how demands fill whole nodes.

A node's GPUs, and the share of its vCPU and memory left to replicas (the rest is the kubelet's and the node
agents'), bound what it takes. The placement model (tritonfleet/core/placement.py) and sizing
(tritonfleet/core/sizing.py) both pack with it; neither prices anything here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tritonfleet.core.catalog import InstanceType

# Share of a node's vCPU and memory given to its GPU replicas; the rest is left to the kubelet's reservation and the
# node agents (device plugin, DCGM exporter, node exporter, CNI, kube-proxy). The Triton release requests it per replica.
NODE_SHARE_FOR_REPLICAS = 0.75


@dataclass(frozen=True)
class NodeShape:
    gpus: int
    vcpu: float
    memory_gib: float

    @classmethod
    def of(cls, itype: InstanceType) -> NodeShape:
        return cls(itype.gpu_count, itype.vcpu * NODE_SHARE_FOR_REPLICAS, itype.memory_gib * NODE_SHARE_FOR_REPLICAS)


@dataclass(frozen=True)
class ReplicaShape:
    gpus: int
    cpu: float = 0.0
    memory_gib: float = 0.0


def replicas_per_node(node: NodeShape, replica: ReplicaShape) -> int:
    """How many replicas of one shape fit on an empty node (GPUs, CPU and memory)."""
    limits = [node.gpus // replica.gpus]
    if replica.cpu:
        limits.append(math.floor(node.vcpu / replica.cpu + 1e-9))
    if replica.memory_gib:
        limits.append(math.floor(node.memory_gib / replica.memory_gib + 1e-9))
    return max(0, min(limits))


@dataclass(frozen=True)
class Packing:
    """Replicas placed on whole nodes of one shape."""

    nodes: int
    gpus_per_node: int
    gpus_used: int
    unplaceable: tuple[str, ...] = ()  # names of replica shapes that fit no node of this shape

    @property
    def gpus_paid(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def idle_gpus(self) -> int:
        return self.gpus_paid - self.gpus_used


def pack(node: NodeShape, demands: Sequence[tuple[str, ReplicaShape, int]], min_nodes: int = 0) -> Packing:
    """First-fit decreasing of every replica (largest first) onto nodes of one shape; at least `min_nodes` nodes.

    `demands` are (name, shape, replicas). A shape that fits no empty node is reported, not placed.

    Nodes with the same room left are kept as one group (a count and that room), so the work grows with the number of
    shapes, not of replicas: a target load of millions of inferences/s is sized at once. Identical replicas placed first
    fit fill each node in turn as far as it takes them, which is what a group does for all its nodes at once.
    """
    groups: list[tuple[int, tuple[float, float, float]]] = []  # (nodes, room left per node), in the nodes' order
    unplaceable: list[str] = []
    used = 0
    empty = (float(node.gpus), node.vcpu, node.memory_gib)
    items = sorted(demands, key=lambda d: (d[1].gpus, d[1].cpu, d[1].memory_gib), reverse=True)
    for name, shape, count in items:
        if count and replicas_per_node(node, shape) == 0:
            unplaceable.append(name)
            continue
        remaining, placed = count, []
        for nodes, room in groups:
            fits, room_when_full = _fill(room, shape)
            if not remaining or not fits:
                placed.append((nodes, room))
                continue
            full, rest = divmod(remaining, fits)
            if full >= nodes:
                placed.append((nodes, room_when_full))
                remaining -= nodes * fits
                continue
            placed.append((full, room_when_full))
            if rest:
                placed.append((1, _fill(room, shape, rest)[1]))
            placed.append((nodes - full - (1 if rest else 0), room))
            remaining = 0
        fits, room_when_full = _fill(empty, shape)
        full, rest = divmod(remaining, fits) if remaining else (0, 0)
        placed += [(full, room_when_full)] + ([(1, _fill(empty, shape, rest)[1])] if rest else [])
        groups = [(nodes, room) for nodes, room in placed if nodes]
        used += count * shape.gpus
    return Packing(max(sum(nodes for nodes, _ in groups), min_nodes), node.gpus, used, tuple(unplaceable))


def _fill(room: tuple[float, float, float], shape: ReplicaShape, limit: int | None = None) -> tuple[int, tuple[float, float, float]]:
    """How many replicas of `shape` one node with `room` left takes (at most `limit`), and the room left after them."""
    gpus, cpu, memory = room
    taken = 0
    while (limit is None or taken < limit) and gpus >= shape.gpus and cpu + 1e-9 >= shape.cpu and memory + 1e-9 >= shape.memory_gib:
        gpus, cpu, memory = gpus - shape.gpus, cpu - shape.cpu, memory - shape.memory_gib
        taken += 1
    return taken, (gpus, cpu, memory)


def replica_requests(itype: InstanceType, gpus_per_replica: int) -> tuple[int, int]:
    """CPU cores and memory GiB one replica requests: its GPUs' share of the node's allowance for replicas."""
    share = gpus_per_replica / itype.gpu_count * NODE_SHARE_FOR_REPLICAS
    return max(1, math.floor(itype.vcpu * share)), max(4, math.floor(itype.memory_gib * share))


# /dev/shm of a replica (a memory-backed emptyDir: it counts against the replica's memory). NVIDIA's NIM guides give
# --shm-size=1g for Triton's Python backend on one GPU (https://docs.nvidia.com/nim/riva/asr/1.1.0/configuration.html)
# and --shm-size=32GB for multi-GPU models, where NCCL exchanges through /dev/shm
# (https://docs.nvidia.com/nim/vision-language-models/2.0.0/configuration.html), both as of 2026-12-05.
SHM_ONE_GPU_GI = 1


SHM_MULTI_GPU_GI = 32


# An LLM replica on one GPU: NVIDIA's TensorRT-LLM backend quick start runs its image with --shm-size=2g
# (https://github.com/triton-inference-server/tensorrtllm_backend README, 2026-12-05); vLLM's tensor-parallel
# workers exchange tensors through it (https://docs.vllm.ai/en/latest/deployment/docker.html: --ipc=host or
# --shm-size, 2026-12-05), which the multi-GPU size covers.
SHM_LLM_ONE_GPU_GI = 2


SHM_MEMORY_SHARE = 0.25  # the default never takes more of the replica's memory than this


SHM_MAX_MEMORY_SHARE = 0.5  # a stated size may take at most this


def shm_gi(itype: InstanceType, gpus_per_replica: int, stated: int | None = None, llm: bool = False) -> int:
    """GiB of /dev/shm for one replica: the stated size, else 1 for one GPU (2 for an LLM) and 32 for more, within
    its memory."""
    if stated is not None:
        return stated
    one_gpu = SHM_LLM_ONE_GPU_GI if llm else SHM_ONE_GPU_GI
    wanted = one_gpu if gpus_per_replica == 1 else SHM_MULTI_GPU_GI
    return max(1, min(wanted, math.floor(replica_requests(itype, gpus_per_replica)[1] * SHM_MEMORY_SHARE)))


def replica_shape(itype: InstanceType, gpus_per_replica: int) -> ReplicaShape:
    cpu, memory_gib = replica_requests(itype, gpus_per_replica)
    return ReplicaShape(gpus_per_replica, cpu, memory_gib)
