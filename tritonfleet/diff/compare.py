"""Compare two plan documents of one stack: resources by URN, GPU pools, monthly cost and policy verdicts.

Pure: plan documents in, a StackDiff out. It is a static diff of what the program declares; it knows nothing of
state, drift or provider defaults (that is `pulumi preview`'s job), and says so in the report.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from tritonfleet.core.config.problems import file_edit, set_command
from tritonfleet.diff.replacement import (
    explained,
    node_roll_reasons,
    path_under,
    prod_acknowledgement,
    replace_reasons,
    watched_kind,
)

UNKNOWN = "unknown"
OPTIONS = ("protect", "ignoreChanges", "retainOnDelete", "deleteBeforeReplace")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()  # an input that one side does not set


@dataclass(frozen=True)
class PathChange:
    path: str
    before: Any
    after: Any
    ignored: bool = False  # under one of the resource's ignoreChanges paths: the engine will not apply it


@dataclass
class ResourceChange:
    action: str  # add | change | remove | ignored (only ignoreChanges paths differ)
    urn: str
    type: str
    name: str
    kind: str | None  # cluster | node pool | bucket for the watched types, else None
    paths: list[PathChange] = field(default_factory=list)
    options: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    replace_reasons: list[str] = field(default_factory=list)
    roll_reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Flag:
    """A change a reviewer must see first: a watched resource replaced, deleted, or all its nodes recreated."""

    action: str  # replace | delete | roll nodes
    kind: str
    name: str
    type: str
    urn: str
    reasons: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Change:
    """A before/after pair; None on a side where the stack or pool does not exist."""

    before: Any
    after: Any

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def delta(self) -> float | int | str | None:
        if UNKNOWN in (self.before, self.after):
            return UNKNOWN
        if not all(isinstance(v, (int, float)) or v is None for v in (self.before, self.after)):
            return None
        return round((self.after or 0) - (self.before or 0), 2)


@dataclass(frozen=True)
class PoolDiff:
    pool: str
    status: str  # added | removed | changed | same
    gpu: Change
    instance_type: Change
    nodes: Change  # "on-demand 2..4, spot 0..4"
    min_gpus: Change
    max_gpus: Change
    monthly_floor: Change
    monthly_ceiling: Change


@dataclass(frozen=True)
class LineDiff:
    """One non-GPU line of the bill (the plan's cost.otherLines) at the floor and the ceiling."""

    line: str
    monthly_floor: Change
    monthly_ceiling: Change

    @property
    def changed(self) -> bool:
        return self.monthly_floor.changed or self.monthly_ceiling.changed


@dataclass(frozen=True)
class UnitCostDiff:
    """$ per 1M inferences of one deployment or pool (the plan's `sizing` section), and what it rests on."""

    subject: str  # "deployment <name>" or "pool <name>"
    peak: Change
    average: Change
    basis: Change  # a deployment's capacity source; a pool's acknowledged assumed price

    @property
    def changed(self) -> bool:
        return self.peak.changed or self.average.changed or self.basis.changed


@dataclass(frozen=True)
class Verdict:
    policy: str
    level: str
    urn: str
    message: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.policy, self.urn, self.message)


@dataclass(frozen=True)
class RolloutDiff:
    """One deployment's rollout (the plan's `rollouts` entry) at the base and the head, where what starts a rollout
    (model version pins, the Triton image) or how it runs (steps, interval, thresholds) changes."""

    deployment: str
    before: dict[str, Any] | None  # None: no rollout declared on that side
    after: dict[str, Any] | None

    def change(self, key: str) -> Change:
        return Change((self.before or {}).get(key), (self.after or {}).get(key))

    @property
    def pins(self) -> Change:
        return self.change("modelVersions")

    @property
    def image(self) -> Change:
        return self.change("imageTag")

    @property
    def starts(self) -> bool:
        """The head changes what the deployment serves, so merging it starts a canary (the head declares one)."""
        return self.before is not None and self.after is not None and (self.pins.changed or self.image.changed)

    @property
    def settings_changed(self) -> bool:
        return any(self.change(k).changed for k in ROLLOUT_SETTINGS)


ROLLOUT_SETTINGS = ("steps", "interval", "thresholds", "trafficSplit")


@dataclass
class PolicyDiff:
    base_available: bool
    head_available: bool
    new: list[Verdict] = field(default_factory=list)
    resolved: list[Verdict] = field(default_factory=list)
    level_changed: list[tuple[Verdict, Verdict]] = field(default_factory=list)
    head: list[Verdict] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.new or self.resolved or self.level_changed)


@dataclass
class StackDiff:
    stack: str
    status: str  # changed | unchanged | added | removed | error
    cloud: str = ""
    region: str = ""
    environment: str = ""
    resources: list[ResourceChange] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    pools: list[PoolDiff] = field(default_factory=list)
    monthly_floor: Change = Change(None, None)
    monthly_ceiling: Change = Change(None, None)
    monthly_expected: Change = Change(None, None)  # maxNodes in the spotShare mix (an estimate where spot is not enforced)
    other_lines: list[LineDiff] = field(default_factory=list)  # every non-GPU line, changed or not
    other_ceiling: Change = Change(None, None)  # the non-GPU lines together, ceiling
    total_floor: Change = Change(None, None)  # GPU pools and the rest
    total_ceiling: Change = Change(None, None)
    max_gpus: Change = Change(None, None)
    gpu_limit: Change = Change(None, None)
    budget: Change = Change(None, None)  # monthly budget in USD
    budget_basis: Change = Change(None, None)  # floor | ceiling: the figure the budget is held against
    policy: PolicyDiff = field(default_factory=lambda: PolicyDiff(False, False))
    unit_costs: list[UnitCostDiff] = field(default_factory=list)
    rollouts: list[RolloutDiff] = field(default_factory=list)  # deployments whose rollout or what it rolls changes
    notes: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # replacements prod refuses without an acknowledgement
    error: str = ""

    def count(self, action: str) -> int:
        return sum(1 for r in self.resources if r.action == action)

    @property
    def mandatory(self) -> list[Verdict]:
        """Mandatory verdicts at the head: each one fails `pulumi up` with the policy pack."""
        return [v for v in self.policy.head if v.level == "mandatory"]

    @property
    def added_mandatory(self) -> list[Verdict]:
        """Mandatory verdicts the head adds: new ones, ones raised to mandatory, and all of them where the base has no
        verdicts to compare with (fail closed)."""
        if self.policy.head_available and not self.policy.base_available:
            return self.mandatory
        raised = [b for a, b in self.policy.level_changed if b.level == "mandatory"]
        return [v for v in self.policy.new if v.level == "mandatory"] + raised

    @property
    def blocked(self) -> bool:
        """The head cannot be deployed as it is: not planned, a mandatory violation, or a replacement prod refuses."""
        return self.status == "error" or bool(self.mandatory or self.refused)


def _key(name: str) -> str:
    return name if _IDENTIFIER.match(name) else f'["{name}"]'


IDENTITY_KEYS = ("alert", "record", "name", "title", "uid", "refId")  # what names a Prometheus rule, a group, a panel


def _identities(items: list[Any]) -> list[str] | None:
    """`alert=X`, `record=Y`, `title=Z`... for a list whose every element is an object with a name. Elements sharing
    a name (one alert per deployment) add the labels that tell them apart (`alert=X{deployment=a}`), then `#2`. None when some
    element has no name (then the list is compared by position)."""
    names = []
    for item in items:
        key = next((k for k in IDENTITY_KEYS if isinstance(item, dict) and isinstance(item.get(k), str)), None)
        if key is None:
            return None
        names.append(f"{key}={item[key]}")
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        groups.setdefault(name, []).append(i)
    for members in (m for m in groups.values() if len(m) > 1):
        labels = [items[i].get("labels") if isinstance(items[i].get("labels"), dict) else {} for i in members]
        telling = sorted({k for lab in labels for k in lab if len({str(other.get(k)) for other in labels}) > 1})
        for i, lab in zip(members, labels, strict=True):
            if telling:
                names[i] += "{" + ",".join(f"{k}={lab.get(k, '')}" for k in telling) + "}"
    seen: Counter[str] = Counter()
    out = []
    for name in names:
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def _embedded_json(value: str) -> Any:
    """A JSON object or array carried as text (a Grafana dashboard in a ConfigMap), else None."""
    if not value.lstrip().startswith(("{", "[")):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, (dict, list)) and parsed else None


def flatten(value: Any, prefix: str = "", by_name: bool = False) -> dict[str, Any]:
    """Leaf input paths in Pulumi property-path form: `a.b`, `a[0].b`, `labels["x.io/y"]`; scalar lists stay whole.

    `by_name`: elements of a list of named objects are keyed by name (`rules[alert=GpuIdle]`), and JSON carried as
    text is compared inside, so inserting one alert rule or dashboard panel changes one entry, not every later one."""
    if by_name and isinstance(value, str) and prefix:
        embedded = _embedded_json(value)
        if embedded is not None:
            return flatten(embedded, prefix, by_name)
    if isinstance(value, dict) and (value or not prefix):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = _key(str(k))
            child = key if not prefix else (f"{prefix}{key}" if key.startswith("[") else f"{prefix}.{key}")
            out.update(flatten(v, child, by_name))
        return out
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        names = _identities(value) if by_name else None
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}[{names[i] if names else i}]", by_name))
        return out
    return {prefix: value}


def input_changes(
    before: dict[str, Any], after: dict[str, Any], ignore_changes: list[str], by_name: bool = False
) -> list[PathChange]:
    old, new = flatten(before, by_name=by_name), flatten(after, by_name=by_name)
    changes = []
    for path in sorted(old.keys() | new.keys()):
        a, b = old.get(path, ABSENT), new.get(path, ABSENT)
        if a != b or type(a) is not type(b):
            changes.append(PathChange(path, a, b, ignored=any(path_under(path, p) for p in ignore_changes)))
    return changes


def _option(resource: dict[str, Any], option: str) -> Any:
    value = resource.get(option, [] if option == "ignoreChanges" else False)
    return sorted(value) if option == "ignoreChanges" else bool(value)


def compare_resource(before: dict[str, Any], after: dict[str, Any]) -> ResourceChange:
    ignore = _option(after, "ignoreChanges")
    # Watched types and resources with ignoreChanges keep Pulumi's index paths: the replacement table and the
    # ignoreChanges paths are written in them.
    by_name = watched_kind(after.get("type", "")) is None and not ignore
    paths = input_changes(before.get("inputs") or {}, after.get("inputs") or {}, ignore, by_name)
    options = {o: (_option(before, o), _option(after, o)) for o in OPTIONS if _option(before, o) != _option(after, o)}
    effective = [p.path for p in paths if not p.ignored]
    action = "change" if effective or options else ("ignored" if paths else "same")
    return ResourceChange(
        action=action,
        urn=after["urn"],
        type=after.get("type", ""),
        name=after.get("name", after["urn"].rsplit("::", 1)[-1]),
        kind=watched_kind(after.get("type", "")),
        paths=paths,
        options=options,
        replace_reasons=replace_reasons(after.get("type", ""), effective),
        roll_reasons=node_roll_reasons(after.get("type", ""), effective),
    )


def _whole(resource: dict[str, Any], action: str) -> ResourceChange:
    typ = resource.get("type", "")
    return ResourceChange(
        action, resource["urn"], typ, resource.get("name", resource["urn"].rsplit("::", 1)[-1]), watched_kind(typ)
    )


def resource_changes(base: list[dict[str, Any]], head: list[dict[str, Any]]) -> list[ResourceChange]:
    old = {r["urn"]: r for r in base}
    new = {r["urn"]: r for r in head}
    changes = []
    for urn in sorted(old.keys() | new.keys()):
        if urn not in old:
            changes.append(_whole(new[urn], "add"))
        elif urn not in new:
            changes.append(_whole(old[urn], "remove"))
        else:
            change = compare_resource(old[urn], new[urn])
            if change.action != "same":
                changes.append(change)
    return changes


def flags(changes: list[ResourceChange], base: list[dict[str, Any]]) -> list[Flag]:
    """Replacements, deletions and node rolls of clusters, node pools and buckets, with what makes them worse."""
    old = {r["urn"]: r for r in base}
    out = []
    for change in changes:
        if not change.kind:
            continue
        before = old.get(change.urn, {})
        notes = []
        if change.action in ("remove", "change") and before.get("protect"):
            notes.append("protected: `pulumi up` fails until protect is lifted")
        if change.action == "remove":
            if before.get("retainOnDelete"):
                notes.append("retainOnDelete: left in the cloud, only dropped from the stack")
            out.append(Flag("delete", change.kind, change.name, change.type, change.urn, (), tuple(notes)))
        elif change.replace_reasons:
            if before.get("deleteBeforeReplace"):
                notes.append("deleteBeforeReplace: gone before its replacement exists")
            why = explained()
            notes += [why[(change.type, r)] for r in change.replace_reasons if (change.type, r) in why]
            out.append(
                Flag("replace", change.kind, change.name, change.type, change.urn, tuple(change.replace_reasons), tuple(notes))
            )
        elif change.roll_reasons:
            out.append(Flag("roll nodes", change.kind, change.name, change.type, change.urn, tuple(change.roll_reasons), ()))
    order = {"delete": 0, "replace": 1, "roll nodes": 2}
    return sorted(out, key=lambda f: (order[f.action], f.kind, f.name))


def _nodes(pool: dict[str, Any]) -> str:
    return ", ".join(f"{option} {r.get('min')}..{r.get('max')}" for option, r in (pool.get("nodes") or {}).items())


def _min_gpus(pool: dict[str, Any]) -> int:
    return sum(r.get("min", 0) for r in (pool.get("nodes") or {}).values()) * pool.get("gpusPerNode", 0)


def pool_diffs(base_cost: dict[str, Any] | None, head_cost: dict[str, Any] | None) -> list[PoolDiff]:
    old = {p["pool"]: p for p in (base_cost or {}).get("pools", [])}
    new = {p["pool"]: p for p in (head_cost or {}).get("pools", [])}
    out = []
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name), new.get(name)

        def pair(get, a=a, b=b) -> Change:
            return Change(get(a) if a else None, get(b) if b else None)

        diff = PoolDiff(
            pool=name,
            status="added" if a is None else "removed" if b is None else "changed",
            gpu=pair(lambda p: p.get("gpu")),
            instance_type=pair(lambda p: p.get("instanceType")),
            nodes=pair(_nodes),
            min_gpus=pair(_min_gpus),
            max_gpus=pair(lambda p: p.get("maxGpus")),
            monthly_floor=pair(lambda p: p.get("monthlyFloorUsd")),
            monthly_ceiling=pair(lambda p: p.get("monthlyCeilingUsd")),
        )
        if diff.status == "changed" and not any(
            c.changed for c in (diff.gpu, diff.instance_type, diff.nodes, diff.max_gpus, diff.monthly_floor, diff.monthly_ceiling)
        ):
            diff = replace(diff, status="same")
        out.append(diff)
    return out


def line_diffs(base_cost: dict[str, Any] | None, head_cost: dict[str, Any] | None) -> list[LineDiff]:
    """The non-GPU lines of both plans, in the head's order (then lines only the base has)."""
    old = {line["line"]: line for line in (base_cost or {}).get("otherLines", [])}
    new = {line["line"]: line for line in (head_cost or {}).get("otherLines", [])}
    return [
        LineDiff(
            key,
            Change((old.get(key) or {}).get("monthlyFloorUsd"), (new.get(key) or {}).get("monthlyFloorUsd")),
            Change((old.get(key) or {}).get("monthlyCeilingUsd"), (new.get(key) or {}).get("monthlyCeilingUsd")),
        )
        for key in dict.fromkeys([*new, *old])
    ]


def _bill_total(cost: dict[str, Any] | None, key: str) -> Any:
    return ((cost or {}).get("totals") or {}).get(key)


def _capacity(entry: dict[str, Any]) -> Any:
    capacity = entry.get("capacity")
    if isinstance(capacity, dict) and "outputTokensPerSecond" in capacity:  # an LLM: $/1M is per 1M output tokens
        return f"{capacity.get('kind')} {capacity['outputTokensPerSecond']} output tokens/s"
    return f"{capacity.get('kind')} {capacity.get('inferencesPerSecond')}/s" if isinstance(capacity, dict) else capacity


def unit_cost_diffs(base: dict[str, Any] | None, head: dict[str, Any] | None) -> list[UnitCostDiff]:
    """$/1M at peak and average per deployment and pool, with the capacity or assumed price behind it."""

    def entries(document: dict[str, Any] | None) -> dict[str, tuple[Any, Any, Any]]:
        sizing = (document or {}).get("sizing") or {}
        assumed = {p["pool"]: p.get("assumedPrice") for p in ((document or {}).get("cost") or {}).get("pools", [])}
        out = {}
        for d in sizing.get("deployments", []):
            per = " (per 1M output tokens)" if d.get("unit") == "output tokens" else ""  # an LLM sized in tokens
            out[f"deployment {d['deployment']}{per}"] = (d["usdPer1M"]["peak"], d["usdPer1M"]["average"], _capacity(d))
        for p in sizing.get("pools", []):
            basis = assumed.get(p["pool"])
            basis = f"assumed ${basis['usdPerHour']}/node-hour" if isinstance(basis, dict) else "catalog prices"
            out[f"pool {p['pool']}"] = (p["peak"].get("usdPer1M"), p["average"].get("usdPer1M"), basis)
        return out

    old, new = entries(base), entries(head)
    out = []
    for subject in sorted(old.keys() | new.keys()):
        a, b = old.get(subject, (None, None, None)), new.get(subject, (None, None, None))
        out.append(UnitCostDiff(subject, Change(a[0], b[0]), Change(a[1], b[1]), Change(a[2], b[2])))
    return out


def rollout_diffs(base: dict[str, Any] | None, head: dict[str, Any] | None) -> list[RolloutDiff]:
    """Deployments whose rollout is added, removed, or changes its pins, image or settings (plans' `rollouts`)."""
    old = {r["deployment"]: r for r in (base or {}).get("rollouts", [])}
    new = {r["deployment"]: r for r in (head or {}).get("rollouts", [])}
    out = []
    for name in sorted(old.keys() | new.keys()):
        diff = RolloutDiff(name, old.get(name), new.get(name))
        if diff.before is None or diff.after is None or diff.starts or diff.settings_changed:
            out.append(diff)
    return out


def verdicts(document: dict[str, Any] | None) -> list[Verdict] | None:
    """The plan's policy verdicts (`policy.verdicts`, as `tritonfleet plan` writes them), or None when the document
    carries no policy section (a plan made without the policy pack)."""
    section = (document or {}).get("policy")
    if not isinstance(section, dict) or not isinstance(section.get("verdicts"), list):
        return None
    return [
        Verdict(policy=str(e["policy"]), level=str(e["enforcement"]), urn=str(e.get("urn") or ""), message=str(e["message"]))
        for e in section["verdicts"]
    ]


def policy_diff(base: dict[str, Any] | None, head: dict[str, Any] | None) -> PolicyDiff:
    old, new = verdicts(base), verdicts(head)
    result = PolicyDiff(base_available=old is not None, head_available=new is not None, head=list(new or []))
    if new is None:
        return result
    before = {v.key: v for v in old or []}
    after = {v.key: v for v in new}
    if old is not None or base is None:
        result.new = [after[k] for k in sorted(after.keys() - before.keys())]
        result.resolved = [before[k] for k in sorted(before.keys() - after.keys())]
    result.level_changed = [
        (before[k], after[k]) for k in sorted(before.keys() & after.keys()) if before[k].level != after[k].level
    ]
    return result


def _total(cost: dict[str, Any] | None, key: str, missing: Any = UNKNOWN) -> Any:
    return None if cost is None else cost.get(key, missing)


def _budget(cost: dict[str, Any] | None, key: str) -> Any:
    budget = (cost or {}).get("budget")
    return budget.get(key) if isinstance(budget, dict) else None


def compare_stack(base: dict[str, Any] | None, head: dict[str, Any] | None, stack: str | None = None) -> StackDiff:
    """Diff one stack's base and head plan documents; either may be None (stack added or removed)."""
    either = head or base
    if either is None:
        raise ValueError("compare_stack needs at least one plan document")
    result = StackDiff(
        stack=stack or either["stack"],
        status="changed",
        cloud=either.get("cloud", ""),
        region=either.get("region", ""),
        environment=either.get("environment", ""),
    )
    base_resources = (base or {}).get("resources", [])
    result.resources = resource_changes(base_resources, (head or {}).get("resources", []))
    result.flags = flags(result.resources, base_resources)
    base_cost = base.get("cost") if base else None
    head_cost = head.get("cost") if head else None
    result.pools = pool_diffs(base_cost, head_cost)
    result.monthly_floor = Change(_total(base_cost, "monthlyFloorUsd"), _total(head_cost, "monthlyFloorUsd"))
    result.monthly_ceiling = Change(_total(base_cost, "monthlyCeilingUsd"), _total(head_cost, "monthlyCeilingUsd"))
    result.monthly_expected = Change(
        _total(base_cost, "monthlyExpectedCeilingUsd", None), _total(head_cost, "monthlyExpectedCeilingUsd", None)
    )
    result.other_lines = line_diffs(base_cost, head_cost)
    result.other_ceiling = Change(_bill_total(base_cost, "otherCeilingUsd"), _bill_total(head_cost, "otherCeilingUsd"))
    result.total_floor = Change(_bill_total(base_cost, "totalFloorUsd"), _bill_total(head_cost, "totalFloorUsd"))
    result.total_ceiling = Change(_bill_total(base_cost, "totalCeilingUsd"), _bill_total(head_cost, "totalCeilingUsd"))
    result.max_gpus = Change(_total(base_cost, "maxGpus"), _total(head_cost, "maxGpus"))
    result.gpu_limit = Change(_budget(base_cost, "gpuLimit"), _budget(head_cost, "gpuLimit"))
    result.budget = Change(_budget(base_cost, "monthlyUsd"), _budget(head_cost, "monthlyUsd"))
    result.budget_basis = Change(_budget(base_cost, "basis"), _budget(head_cost, "basis"))
    result.policy = policy_diff(base, head)
    result.unit_costs = unit_cost_diffs(base, head)
    result.rollouts = rollout_diffs(base, head) if base and head else []
    result.refused = refusals(result, head)

    if base is None:
        result.status = "added"
        result.notes.append("New stack: no plan at the base, so everything is added.")
    elif head is None:
        result.status = "removed"
        result.notes.append(
            "Stack file removed: the workflows stop deploying it, but nothing is destroyed until someone runs "
            "`pulumi destroy` on it; the deletions below are what that would remove."
        )
    else:
        if base.get("stack") != head.get("stack"):
            result.notes.append(f"Comparing plans of different stacks ({base.get('stack')} -> {head.get('stack')}): URNs differ.")
        touched = any(r.action in ("add", "remove", "change") for r in result.resources)
        pools = any(p.status != "same" for p in result.pools)
        money = result.monthly_floor.changed or result.monthly_ceiling.changed or result.max_gpus.changed
        money = money or result.monthly_expected.changed or result.budget.changed or result.gpu_limit.changed
        money = money or any(u.changed for u in result.unit_costs) or any(line.changed for line in result.other_lines)
        if not (touched or pools or money or result.rollouts or result.policy.changed):
            result.status = "unchanged"
    if result.policy.head_available and not result.policy.base_available and base is not None:
        result.notes.append("The base plan carries no policy verdicts, so new ones cannot be told apart from old ones.")
    return result


def refusals(diff: StackDiff, head: dict[str, Any] | None) -> list[str]:
    """Replacements a prod stack refuses: each names the resource, why, and the config key that acknowledges it."""
    if diff.environment != "prod" or head is None:
        return []
    acknowledged = set(head.get("acknowledged") or [])
    out = []
    for flag in diff.flags:
        for reason in flag.reasons if flag.action == "replace" else ():
            key = prod_acknowledgement().get((flag.type, reason))
            if key and key not in acknowledged:
                command = set_command(key, True, diff.stack)
                out.append(
                    f"{flag.kind} {flag.name} would be replaced ({reason} changes) in prod. If that is intended, "
                    f"acknowledge it: `{command}`, or {file_edit(command)} (and remove it after the update)."
                )
    return out


def error_stack(stack: str, message: str) -> StackDiff:
    """A stack that could not be planned on one side: the report shows why instead of a diff."""
    return StackDiff(stack=stack, status="error", error=message)


def compare_plans(base: dict[str, dict[str, Any]], head: dict[str, dict[str, Any]]) -> list[StackDiff]:
    """Diff every stack found on either side (plans keyed by stack name)."""
    return [compare_stack(base.get(s), head.get(s), s) for s in sorted(base.keys() | head.keys())]
