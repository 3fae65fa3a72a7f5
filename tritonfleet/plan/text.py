"""The plan document as terminal text that fits the terminal: a summary first (pools, GPUs, monthly cost, policy
verdicts), the resources by type only when asked for.

Pure functions from plan documents to lines of plain text, each at most `width` characters where the words allow.
Money, instance types and names are never cut: a table that does not fit becomes one block per row, and prose
wraps between words. Everything here is plain text, never Rich markup, so config values print exactly as written.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

INDENT = "  "
GAP = "  "


@dataclass(frozen=True)
class Line:
    text: str
    style: str = ""  # a Rich style name for the whole line ("" plain)


def usd(value: Any) -> str:
    """Dollars with cents, or the document's word for an unknown figure ("unknown", never 0)."""
    return value if isinstance(value, str) else f"${value:,.2f}"


def total(cost: dict[str, Any], key: str) -> str:
    """A stack total; when a price is unknown, also the part that is priced (a lower bound, never a guess)."""
    if not isinstance(cost[key], str):
        return usd(cost[key])
    priced = [p[key] for p in cost["pools"] if not isinstance(p[key], str)]
    return f"unknown (≥ {usd(sum(priced))} priced)" if priced else "unknown"


def wrap(text: str, width: int, indent: str = "", hanging: str | None = None, style: str = "") -> list[Line]:
    """Prose wrapped between words; a word longer than the line (a URN, a long value) is folded, never dropped."""
    lines = textwrap.wrap(
        text,
        width=max(width, len(indent) + 20),
        initial_indent=indent,
        subsequent_indent=indent if hanging is None else hanging,
        break_on_hyphens=False,
        break_long_words=True,
    )
    return [Line(line, style) for line in lines or [indent]]


def table(header: list[str], rows: list[list[str]], right: set[int], width: int) -> list[Line] | None:
    """Columns separated by two spaces, or None when they do not fit `width` (the caller stacks the rows instead)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    if len(INDENT) + sum(widths) + len(GAP) * (len(widths) - 1) > width:
        return None

    def render(cells: list[str]) -> str:
        parts = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return (INDENT + GAP.join(parts)).rstrip()

    return [Line(render(header), "bold"), *(Line(render(r)) for r in rows)]


def _nodes(pool: dict[str, Any]) -> str:
    ranges = pool["nodes"].values()
    return f"{sum(r['min'] for r in ranges)}..{sum(r['max'] for r in ranges)}"


def _purchase(pool: dict[str, Any], region: str | None = None) -> str:
    """How the pool's nodes are bought: 'on-demand 1..1 at $63.30/h, spot 0..2 at $27.20/h'; an unknown price says
    in which region, and where the catalog does price it ('unknown in eu-west-1 (priced in us-east-1 only)')."""
    parts = []
    for option, r in pool["nodes"].items():
        price = pool["prices"].get(option)
        if isinstance(price, dict):
            at = f"{usd(price['usdPerHour'])}/h"
        else:
            at = "unknown price" + (f" in {region}" if region else "")
            elsewhere = (pool.get("pricedElsewhere") or {}).get(option)
            if elsewhere:
                at += f" (priced in {', '.join(elsewhere)} only)"
        parts.append(f"{option} {r['min']}..{r['max']} at {at}")
    return ", ".join(parts)


def _fallback(pool: dict[str, Any]) -> str:
    return f"; its pods fall back to pool {pool['fallbackPool']}" if pool.get("fallbackPool") else ""


def _tiers(pool: dict[str, Any]) -> str:
    """Each capacity tier once, in fill order: 'base 1 on-demand $46,206.08; burst 2 spot first $39,712.00
    expected, fallback 2 on-demand $92,412.16'."""
    parts = []
    for tier in pool.get("capacity", []):
        first = "/".join(tier["purchase"]) if len(tier["purchase"]) == 1 else f"{tier['purchase'][0]} first"
        text = f"{tier['tier']} {tier['nodes']} {first} {usd(tier['monthlyExpectedUsd'])}"
        if tier["monthlyFallbackUsd"] != tier["monthlyExpectedUsd"]:
            text += f" expected, fallback {tier['nodes']} on-demand {usd(tier['monthlyFallbackUsd'])}"
        parts.append(text)
    return "; ".join(parts) + " /month" if parts else ""


def pool_lines(cost: dict[str, Any], width: int) -> list[Line]:
    """One row per pool (disabled ones too), or one block per pool where the row does not fit."""
    pools, disabled = cost["pools"], cost.get("disabledPools", [])
    header = ["pool", "GPU", "instance type", "nodes", "max GPUs", "floor/month", "ceiling/month"]
    rows = [
        [p["pool"], p["gpu"], p["instanceType"], _nodes(p), str(p["maxGpus"]), usd(p["monthlyFloorUsd"]),
         usd(p["monthlyCeilingUsd"])]
        for p in pools
    ] + [[d["pool"], d["gpu"], d["instanceType"], "off", "-", "-", "-"] for d in disabled]
    lines = [Line("GPU pools", "bold")]
    as_table = table(header, rows, right={3, 4, 5, 6}, width=width)
    if as_table is not None:
        lines += as_table
        for p in pools:
            lines += wrap(f"{p['pool']}: {_purchase(p, cost.get('region'))}{_fallback(p)}", width, INDENT, INDENT * 2)
            if p.get("capacity"):
                lines += wrap(f"{p['pool']} at max: {_tiers(p)}", width, INDENT, INDENT * 2)
    else:
        for p in pools:
            lines += wrap(f"{p['pool']}: {p['gpu']} on {p['instanceType']}", width, INDENT, INDENT * 2)
            lines += wrap(f"nodes {_nodes(p)}: {_purchase(p, cost.get('region'))}; up to {p['maxGpus']} GPUs{_fallback(p)}", width, INDENT * 2)
            lines += wrap(
                f"monthly {usd(p['monthlyFloorUsd'])} floor, {usd(p['monthlyCeilingUsd'])} ceiling", width, INDENT * 2
            )
            if p.get("capacity"):
                lines += wrap(f"at max: {_tiers(p)}", width, INDENT * 2, INDENT * 3)
    for d in disabled:
        what = "" if as_table is not None else f" ({d['gpu']} on {d['instanceType']})"
        lines += wrap(f"{d['pool']}{what}: disabled (enabled: false), so not planned and not in the totals", width, INDENT,
                      INDENT * 2)
    return lines


def _bill_total(cost: dict[str, Any], key: str) -> str:
    """A total of the other lines or of the whole bill; unknown with the part that is priced (a lower bound)."""
    totals = cost["totals"]
    if not isinstance(totals[key], str):
        return usd(totals[key])
    pick = key.removeprefix("other").removeprefix("total").removesuffix("Usd")
    known = totals[f"otherKnown{pick}Usd"]
    if key.startswith("total"):
        gpu = totals[f"gpu{pick}Usd"]
        known += 0 if isinstance(gpu, str) else gpu
    return f"unknown (≥ {usd(known)} priced)"


def _price(price: dict[str, Any], region: str | None) -> str:
    if price.get("price") == "unknown":
        where = f" (priced in {', '.join(price['pricedIn'])} only)" if price["pricedIn"] else ""
        return f"{price['item']} unknown in {region}{where}"
    return f"{price['item']} ${price['usd']:g}/{price['unit']} ({price['source']} {price['asOf']})"


def other_lines(cost: dict[str, Any], width: int) -> list[Line]:
    """The bill's non-GPU lines: a row each, then what each counts, its prices and what it assumes."""
    lines = cost.get("otherLines", [])
    if not lines:
        return []
    rows = [[line["line"], usd(line["monthlyFloorUsd"]), usd(line["monthlyCeilingUsd"])] for line in lines]
    out = [Line(f"Other lines (prices for {cost.get('region')}; each line's source below)", "bold")]
    as_table = table(["line", "floor/month", "ceiling/month"], rows, right={1, 2}, width=width)
    out += as_table if as_table is not None else [
        wrap_line for row in rows for wrap_line in wrap(f"{row[0]}: {row[1]} floor, {row[2]} ceiling", width, INDENT)
    ]
    for line in lines:
        prices = "; ".join(_price(p, cost.get("region")) for p in line["prices"])
        if line.get("source"):
            prices = (prices + "; " if prices else "") + f"source {line['source']}"
        text = f"{line['line']}: {line['what']}" + (f"; {prices}" if prices else "")
        out += wrap(text + (f". {line['note']}" if line.get("note") else ""), width, INDENT, INDENT * 2)
        if line.get("assumption"):
            out += wrap(f"assumes {line['assumption']}", width, INDENT * 2, INDENT * 3)
    return out


def cost_lines(cost: dict[str, Any], width: int) -> list[Line]:
    budget = cost["budget"]
    # "spot unavailable" only where some pool's burst falls back to on-demand (Karpenter); elsewhere the ceiling is
    # every pool at maxNodes in its configured mix.
    falls_back = any(t["monthlyFallbackUsd"] != t["monthlyExpectedUsd"] for p in cost["pools"] for t in p.get("capacity", []))
    mix = "spotShare mix" if cost.get("spotShareEnforced", True) else "spotShare estimate"
    figures = [
        ("GPU floor (minReplicas, spot unavailable)" if falls_back else "GPU floor (minReplicas, minNodes)",
         total(cost, "monthlyFloorUsd")),
        ("GPU ceiling (maxNodes, spot unavailable)" if falls_back else "GPU ceiling (every pool at maxNodes)",
         total(cost, "monthlyCeilingUsd")),
        (f"GPU expected (maxReplicas, {mix})", total(cost, "monthlyExpectedCeilingUsd")),
    ]
    if "totals" in cost:
        figures += [
            ("other lines, floor", _bill_total(cost, "otherFloorUsd")),
            ("other lines, ceiling", _bill_total(cost, "otherCeilingUsd")),
            ("other lines, expected", _bill_total(cost, "otherExpectedUsd")),
            ("total floor", _bill_total(cost, "totalFloorUsd")),
            ("total ceiling", _bill_total(cost, "totalCeilingUsd")),
            ("total expected", _bill_total(cost, "totalExpectedUsd")),
        ]
    figures.append((f"budget ({budget['basis']} basis)", usd(budget["monthlyUsd"])))
    label = max(len(f[0]) for f in figures)
    figure = max(len(f[1]) for f in figures)
    lines = [Line(f"Monthly cost ({cost['hoursPerMonth']} h/month)", "bold")]
    for name, value in figures:
        lines += wrap(f"{name.ljust(label)}  {value.rjust(figure)}", width, INDENT, INDENT * 2)
    whole = cost.get("totals", {}).get(f"total{budget['basis'].capitalize()}Usd")
    if isinstance(whole, (int, float)) and whole > budget["monthlyUsd"]:
        lines += wrap(
            f"The whole bill's {budget['basis']} ({usd(whole)}) is over the budget ({usd(budget['monthlyUsd'])}): the "
            "budget policies count GPU pools, control plane, system nodes and NAT gateways; the usage-driven lines "
            "are estimates from the usage section.", width, INDENT, INDENT, "yellow",
        )
    lines += wrap(f"GPUs: up to {cost['maxGpus']}, limit {budget['gpuLimit']}.", width, INDENT)
    if not cost.get("spotShareEnforced", True):
        lines += wrap(
            "spotShare is an estimate: Karpenter takes spot whenever EC2 has it and no NodePool holds a share "
            "(docs/aws.md).", width, INDENT, INDENT,
        )
    lines += wrap(f"Counted: {cost['scope']}.", width, INDENT, INDENT)
    return lines


def deployment_lines(plan: dict[str, Any], width: int) -> list[Line]:
    """The sizing lines ($/1M per deployment and pool at whole nodes, idle GPUs), the first in bold."""
    return [Line(text, "bold" if i == 0 else "") for i, text in enumerate(sizing_lines(plan, width))]


def rollout_pins(r: dict[str, Any]) -> str:
    """A rollout's pins as the plan shows them (`resnet v3, bert v7`)."""
    return ", ".join(f"{m} v{v}" for m, v in r["modelVersions"].items()) or "every version the repository loads"


def rollout_steps(r: dict[str, Any]) -> str:
    """The steps below 100 %, each with the weight it really gives where that differs (`10% (~33.3% at 1:2), 50%`)."""
    return ", ".join(
        f"{s['weight']}%" + (f" (~{s['effectiveWeight']:g}% at {s['canaryReplicas']}:{s['stableReplicas']})"
                             if s["effectiveWeight"] != s["weight"] else "")
        for s in r["steps"]
    )


def rollout_canary(r: dict[str, Any]) -> str:
    """A rollout's steps (with the weight each really gives), thresholds and the canary's extra GPUs and their cost:
    one phrase, shared by the plan and the PR diff."""
    steps = rollout_steps(r)
    t = r["thresholds"]
    judged = [f"errors <= {t['maxErrorRatio']:g}", f"latency <= {t['maxLatencyRatio']:g}x stable"]
    if t["maxQueueMs"] is not None:
        judged.append(f"queue <= {t['maxQueueMs']:g} ms")
    if t["maxTtftRatio"] is not None:
        judged.append(f"TTFT p95 <= {t['maxTtftRatio']:g}x stable")
    extra = (
        f"+{r['extraGpus']} GPU(s) while it runs: {usd(r['extraUsdPerHour'])}/hour, {usd(r['usdPerRollout'])} a "
        f"rollout, {usd(r['monthlyUsdWhileRunning'])}/month if it ran all month"
        if r["extraGpus"] else "no extra GPU (the canary replaces stable replicas)"
    )
    return (
        f"canary by {r['controller']} ({r['trafficSplit']}): {steps}, then 100%; every {r['interval']} "
        f"({r['minutes']:g} min); judged against stable: {', '.join(judged)}; under {t['minRequests']} "
        f"inferences a step is inconclusive (paused, never promoted); {extra}"
    )


def rollout_lines(plan: dict[str, Any], width: int) -> list[Line]:
    """Each deployment's rollout: pins, steps with the weight the replicas really give, thresholds, extra GPUs."""
    lines: list[Line] = []
    for r in plan.get("rollouts", []):
        lines += wrap(f"{r['deployment']}: pins {rollout_pins(r)}", width, INDENT, INDENT * 2)
        lines += wrap(rollout_canary(r), width, INDENT * 2, INDENT * 2)
    return [Line("Rollouts", "bold"), *lines] if lines else []


# The structured notes this page prints in its own words; any other note that is text is printed as it is.
KNOWN_CLOUD_NOTES = ("deployPath", "kubernetes", "controlPlane", "spotShutdown", "modelPulls")


def cloud_note_lines(notes: dict[str, Any], width: int) -> list[Line]:
    """Where the stack is deployed from and the API endpoint that admits it, the cluster version's support dates and
    how model pulls reach the bucket (AWS), when the cloud adds notes."""
    lines: list[Line] = []
    path = notes.get("deployPath")
    if path:
        reach = "reaches" if path["reachable"] else "CANNOT reach"
        lines += wrap(f"Deployed from {path['deployer']}: {reach} the {path['endpoint']}.", width, INDENT, INDENT)
    version = notes.get("kubernetes")
    if version:
        if version["support"] == "unknown":
            text = f"Kubernetes {version['kubernetesVersion']}: support dates unknown ({version['source']})."
        else:
            text = (
                f"Kubernetes {version['kubernetesVersion']}: {version['support']} support now; end of standard support "
                f"{version['endOfStandardSupport']}, end of extended support {version['endOfExtendedSupport']} "
                f"(source: {version['source']})."
            )
        lines += wrap(text, width, INDENT, INDENT)
    plane = notes.get("controlPlane")
    if plane:
        text = f"Control plane: {usd(plane['monthlyUsdNow'])}/month now"
        if plane["supportType"] == "EXTENDED":
            text += (
                f"; from {plane['endOfStandardSupport']} (end of standard support) "
                f"{usd(plane['monthlyUsdInExtendedSupport'])}/month in extended support until upgraded"
            )
        else:
            text += f"; AWS upgrades it at the end of standard support ({plane['endOfStandardSupport']}), no fee"
        if plane["newerVersions"]:
            text += f". Newer: {', '.join(plane['newerVersions'])} (start a new cluster on the newest)"
        lines += wrap(text + ".", width, INDENT, INDENT)
    spot = notes.get("spotShutdown")
    if spot:
        text = f"Spot nodes: {spot['podSeconds']} s for pods to stop (GKE {spot['gkeBuild']})"
        if spot["windowSeconds"] < 120:
            text += f"; cluster.gkeVersion {spot['extendedFrom']} or later extends the window to 120 s"
        lines += wrap(text + ".", width, INDENT, INDENT)
    pulls = notes.get("modelPulls")
    if pulls:
        if pulls["monthlyUsd"] == "unknown":
            per_gb = pulls["natUsdPerGb"]
            price = f"${per_gb:.3f}/GB" if not isinstance(per_gb, str) else "an unknown price per GB (not us-east-1)"
            text = (
                f"Model pulls: {pulls['path']}; through NAT they cost {price} of {pulls['volume']}: monthly cost unknown."
            )
        else:
            text = f"Model pulls: {pulls['path']}, no NAT processing charge."
        lines += wrap(text, width, INDENT, INDENT)
    for key, note in notes.items():  # a cloud's note in words, whatever its key (tritonfleet/core/cloud.py plan_notes)
        if key not in KNOWN_CLOUD_NOTES and isinstance(note, str):
            lines += wrap(note, width, INDENT, INDENT)
    return [Line("Cluster", "bold"), *lines] if lines else []


def resource_lines(summary: dict[str, Any], width: int) -> list[Line]:
    counts = summary["byType"]
    digits = max((len(str(c)) for c in counts.values()), default=1)
    lines = [Line(f"Resources by type ({summary['resources']})", "bold")]
    for typ, count in counts.items():
        lines += wrap(f"{str(count).rjust(digits)}  {typ}", width, INDENT, INDENT + " " * (digits + 2))
    return lines


def network_policy_lines(plan: dict[str, Any], width: int) -> list[Line]:
    """Whether each cluster enforces the NetworkPolicies the stack ships (red when it would not)."""
    section = plan.get("networkPolicy") or {}
    shipped = len(section.get("shippedBy", []))
    lines = [Line("NetworkPolicy", "bold")] if section.get("clusters") else []
    for cluster in section.get("clusters", []):
        state = "enforced" if cluster["enforced"] else "NOT enforced"
        text = f"cluster {cluster['cluster']}: {state} ({cluster['by']}); {shipped} release(s) ship NetworkPolicies"
        lines += wrap(text, width, INDENT, INDENT * 2, "" if cluster["enforced"] else "red")
    return lines


def plan_lines(plan: dict[str, Any], width: int, resources: bool = False) -> list[Line]:
    """The plan's summary (and, with `resources`, the resources by type), policy verdicts excluded."""
    summary, cost = plan["summary"], plan["cost"]
    lines = wrap(
        f"tritonfleet plan: stack {plan['stack']} ({plan['environment']}, {plan['cloud']} {plan['region']})", width, style="bold"
    )
    more = "" if resources else "; list them by type with --resources"
    lines += wrap(f"{summary['resources']} resources in {summary['components']} components{more}", width)
    sections = (
        cloud_note_lines(plan.get("cloudNotes", {}), width),
        network_policy_lines(plan, width),
        pool_lines(cost, width),
        other_lines(cost, width),
        cost_lines(cost, width),
        deployment_lines(plan, width),
        rollout_lines(plan, width),
    )
    for section in sections:
        if section:
            lines += [Line(""), *section]
    if resources:
        lines += [Line(""), *resource_lines(summary, width)]
    return lines


def short_resource(urn: str) -> str:
    """type/name of a URN, or '(stack)' for a stack-wide verdict."""
    return "/".join(urn.split("::")[-2:]).rsplit("$", 1)[-1] if urn else "(stack)"


def policy_lines(section: dict[str, Any], width: int) -> list[Line]:
    """The pack's verdicts, blocking first: one block per verdict, its message wrapped."""
    lines = [Line("Policy verdicts", "bold")]
    ran = section.get("policiesRun")
    lines += wrap(
        (f"{ran} policies ran" if ran is not None else "Policies ran")
        + f" (pack {section['pack']}, config {section['config']}; {section['evaluatedBy']}).",
        width,
        INDENT,
        INDENT,
    )
    for v in section["verdicts"]:
        style = "red" if v["enforcement"] == "mandatory" else "yellow"
        severity = f", {v['severity']}" if v["severity"] else ""
        lines += wrap(f"{v['enforcement']}{severity}: {v['policy']} on {short_resource(v['urn'])}", width, INDENT, INDENT * 2,
                      style)
        lines += wrap(v["message"], width, INDENT * 2)
    lines.append(Line(f"Policies: {section['mandatory']} mandatory violation(s), {section['advisory']} advisory finding(s)."))
    return lines


def sizing_lines(plan: dict, width: int = 80) -> list[str]:
    """The plan's $/1M lines per deployment and per pool, each within `width` (80) columns."""
    sizing = plan.get("sizing")
    if not sizing:
        return []
    lines = [f"Sizing (headroom {sizing['headroom']:.0%}; $/1M at whole nodes, idle GPUs included):"]
    for d in sizing["deployments"]:
        capacity = d["capacity"]
        tokens = d.get("outputTokensPerSecond")
        if isinstance(capacity, dict):
            per_second = capacity.get("outputTokensPerSecond", capacity.get("inferencesPerSecond"))
            source = f"{capacity['kind']} {per_second:,.0f} {'output tokens' if tokens else 'inferences'}/s"
        else:
            source = capacity
        lines += wrapped(f"  {d['deployment']} ({d['pool']}): {_replicas(d['replicas'])} replicas; capacity {source}", width)
        per = "$/1M output tokens" if tokens else "$/1M"
        lines += wrapped(f"    {per} peak {_per_million(d['usdPer1M']['peak'])}, average {_per_million(d['usdPer1M']['average'])}", width)
        if tokens:
            lines += wrapped(f"    output tokens/s at {tokens['minReplicas']:,.0f} (min replicas) to "
                             f"{tokens['maxReplicas']:,.0f} (max replicas); peak {_count(tokens['peak'])}", width)  # fmt: skip
            if d["maxReplicasCarryPeak"] is False:
                lines += wrapped(f"    warning: maxReplicas cannot carry the peak of {_count(tokens['peak'])} output "
                                 "tokens/s at the TTFT/ITL targets", width)  # fmt: skip
    for p in sizing["pools"]:
        peak, low = p["peak"], p["minimum"]
        lines += wrapped(
            f"  pool {p['pool']}: peak {peak['nodes']} nodes {peak['idleGpus']}/{peak['gpusPaid']} GPUs idle; "
            f"min {low['nodes']} nodes {low['idleGpus']}/{low['gpusPaid']} idle",
            width,
        )
        lines += wrapped(f"    $/1M peak {_per_million(peak['usdPer1M'])}, average {_per_million(p['average']['usdPer1M'])}", width)
    for finding in sizing["findings"]:
        text = f"warning: {finding['key']}: {finding['message']}"
        lines += textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False)
    return lines


def wrapped(text: str, width: int) -> list[str]:
    """A line that never loses text: wrapped between words within `width`, continued four spaces in."""
    indent = text[: len(text) - len(text.lstrip())]
    return textwrap.wrap(text.strip(), width, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False)


def _replicas(replicas: dict) -> str:
    return f"{replicas['minimum']} min / {replicas['average']} avg / {replicas['peak']} peak"


def _count(value: Any) -> str:
    return f"{value:,.0f}" if isinstance(value, (int, float)) else str(value)


def _per_million(value: Any) -> str:
    return f"${value:,.4f}" if isinstance(value, (int, float)) else str(value)
