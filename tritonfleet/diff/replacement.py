"""Which resources a reviewer must not miss, and which input changes replace them or roll their nodes.

The table is deliberately small: clusters, GPU node pools and model buckets, the resources whose loss costs
hours (a cluster, a GPU pool) or data (a bucket). A property listed under `replace` makes the provider delete
and re-create the resource (Terraform `ForceNew`, which the bridged Pulumi providers inherit); one listed under
`rolls_nodes` is updated in place but every node of the pool is recreated, evicting the Triton pods on it.

Each cloud keeps its own table with its sources (`Cloud.replacement_watched`, `replacement_explained`,
`prod_acknowledgements`, from tritonfleet/clouds/<cloud>/resources.py); this module reads them all.

The offline diff cannot see provider defaults, state or drift: `pulumi preview` stays the authority,
and the workflows run it next to this diff.
"""

from __future__ import annotations

from tritonfleet.core.cloud import cloud, cloud_names
from tritonfleet.core.planned import Watched


def watched() -> dict[str, Watched]:
    """Every registered cloud's watched types: type -> what replaces it or rolls its nodes."""
    return {typ: w for name in cloud_names() for typ, w in cloud(name).replacement_watched.items()}


def explained() -> dict[tuple[str, str], str]:
    """Replacements a reviewer might not expect, in words (shown next to the property in the diff)."""
    return {key: why for name in cloud_names() for key, why in cloud(name).replacement_explained.items()}


def prod_acknowledgement() -> dict[tuple[str, str], str]:
    """Replacements a prod stack refuses unless its config acknowledges them: (type, property) -> acknowledgement key."""
    return {key: ack for name in cloud_names() for key, ack in cloud(name).prod_acknowledgements.items()}


def path_under(path: str, prefix: str) -> bool:
    """True when `path` is `prefix` or lies inside it (`a.b` is under `a`; `a[0].b` is under `a`)."""
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def _without_indices(path: str) -> str:
    """`nodeConfig.guestAccelerators[0].count` -> `nodeConfig.guestAccelerators.count` (table paths carry no indices)."""
    out, depth = [], 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _matches(paths: list[str], table: tuple[str, ...]) -> list[str]:
    return sorted({prefix for path in paths for prefix in table if path_under(_without_indices(path), prefix)})


def replace_reasons(resource_type: str, changed_paths: list[str]) -> list[str]:
    """The table entries among the changed input paths that replace a watched resource."""
    found = watched().get(resource_type)
    return _matches(changed_paths, found.replace) if found else []


def node_roll_reasons(resource_type: str, changed_paths: list[str]) -> list[str]:
    found = watched().get(resource_type)
    return _matches(changed_paths, found.rolls_nodes) if found else []


def watched_kind(resource_type: str) -> str | None:
    found = watched().get(resource_type)
    return found.kind if found else None
