"""Render stack diffs as a pull-request comment (Markdown, summary first, bounded in size) or as JSON for machines.

GitHub refuses comments over 65,536 characters; we stay under COMMENT_LIMIT by shortening the collapsed
details, never the summary (its tables are capped in rows, and say how many rows they left out).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tritonfleet.diff.compare import ABSENT, Change, PoolDiff, ResourceChange, StackDiff

COMMENT_LIMIT = 60_000
MARKER = "<!-- tritonfleet-plan:{stack} -->"
SUMMARY_ROWS = 30  # rows per summary table (flags, pools, policy verdicts) before "N more"
PATHS_PER_RESOURCE = 40
VALUE_CHARS = 120
NOTE_ROOM = 300  # room kept for the "N more not shown" note
FOOTER = (
    "<sub>Static diff of the offline plans (`tritonfleet diff`): it sees what the program declares, not the state, "
    "drift or provider defaults; the `pulumi preview` check is authoritative.</sub>"
)
SYMBOL = {"add": "+", "change": "~", "remove": "-", "ignored": "~"}
JSON_FORMAT = 1


def safe_name(stack: str) -> str:
    """The stack name as used in markers and file names (Pulumi allows only these characters anyway)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", stack)


def marker(stack: str) -> str:
    return MARKER.format(stack=safe_name(stack))


# ---------------------------------------------------------------- small formatting helpers


def text(value: Any, limit: int = 200) -> str:
    """Untrusted text for a table cell: one line, no HTML, no table breaks, bounded.

    `<` and `&` are escaped (no tag or entity can form); `>` is left as it is: text is never at the start of a line
    (where it would open a quote) and `a -> b` must read the same in a terminal as on GitHub."""
    s = " ".join(str(value).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("&", "&amp;").replace("<", "&lt;").replace("|", "\\|")


def code(value: Any, limit: int = VALUE_CHARS, table: bool = True) -> str:
    """A code span; in a table cell a `|` must be escaped even inside one (GitHub splits cells first)."""
    s = " ".join(str(value).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    span = f"`` {s} ``" if "`" in s else f"`{s}`"
    return span.replace("|", "\\|") if table else span


def shown(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    return code(json.dumps(value, sort_keys=True), table=False)


def usd(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, (int, float)):
        return f"${value:,.2f}"
    return text(value)


def signed_usd(value: Any) -> str:
    if value is None:
        return "—"
    if not isinstance(value, (int, float)):
        return text(value)
    return "$0.00" if value == 0 else f"{'+' if value > 0 else '-'}${abs(value):,.2f}"


def signed(value: Any) -> str:
    if value is None:
        return "—"
    if not isinstance(value, (int, float)):
        return text(value)
    return f"{value:+g}" if value else "0"


def arrow(change: Change, fmt=lambda v: "—" if v is None else text(v)) -> str:
    return fmt(change.after) if not change.changed else f"{fmt(change.before)} → {fmt(change.after)}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# ---------------------------------------------------------------- the summary (never shortened)


def headline(diff: StackDiff) -> str:
    if diff.status == "error":
        return "could not be planned"
    counts = f"{diff.count('add')} to add, {diff.count('change')} to change, {diff.count('remove')} to remove"
    return {"added": f"new stack: {counts}", "removed": f"stack removed: {counts}", "unchanged": "no changes"}.get(diff.status, counts)


def flag_line(diff: StackDiff) -> str:
    parts = []
    for action, word in (("replace", "replacement"), ("delete", "deletion"), ("roll nodes", "node roll")):
        n = sum(1 for f in diff.flags if f.action == action)
        if n:
            parts.append(plural(n, word))
    return ", ".join(parts)


def _table(header: list[str], rows: list[list[str]], align: list[str] | None = None, what: str = "rows") -> list[str]:
    align = align or ["---"] * len(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows[:SUMMARY_ROWS]]
    if len(rows) > SUMMARY_ROWS:
        lines.append(f"\n…and {len(rows) - SUMMARY_ROWS} more {what} (all of them in `tritonfleet diff --format json`).")
    return lines


def _known_change(change: Change) -> bool:
    return change.changed and isinstance(change.delta, (int, float))


def _pool_row(p: PoolDiff) -> list[str]:
    gpu = Change(
        f"{p.gpu.before} {p.instance_type.before}" if p.gpu.before else None,
        f"{p.gpu.after} {p.instance_type.after}" if p.gpu.after else None,
    )
    gpus = Change(
        f"{p.min_gpus.before}..{p.max_gpus.before}" if p.max_gpus.before is not None else None,
        f"{p.min_gpus.after}..{p.max_gpus.after}" if p.max_gpus.after is not None else None,
    )
    return [
        text(p.pool) + ("" if p.status in ("changed", "same") else f" ({p.status})"),
        arrow(gpu),
        arrow(p.nodes),
        arrow(gpus) + (f" ({signed(p.max_gpus.delta)} max)" if _known_change(p.max_gpus) else ""),
        arrow(p.monthly_floor, usd),
        arrow(p.monthly_ceiling, usd) + (f" ({signed_usd(p.monthly_ceiling.delta)})" if _known_change(p.monthly_ceiling) else ""),
    ]


def summary(diff: StackDiff) -> str:
    where = ", ".join(text(x) for x in (diff.cloud, diff.region, diff.environment) if x)
    lines = [marker(diff.stack), f"### tritonfleet plan diff: `{text(diff.stack)}`" + (f" ({where})" if where else ""), ""]
    lines.append(f"**{headline(diff)}**")
    lines.append("")
    if diff.status == "error":
        lines += ["> [!CAUTION]", "> This stack could not be planned:", "", "```text", diff.error.replace("```", "'''")[:4000], "```"]
        return "\n".join(lines)
    for note in diff.notes:
        lines += [f"> {text(note, 400)}", ""]
    if diff.refused:
        lines += ["> [!CAUTION]", "> Refused in prod without an acknowledgement:"]
        lines += [f"> - {text(r, 400)}" for r in diff.refused] + [""]
    if diff.flags:
        lines += ["> [!WARNING]", f"> {flag_line(diff)} of clusters, node pools or buckets.", ""]
        rows = [
            [f"**{f.action}**", f.kind, code(f.name), code(f.type), " · ".join([code(r) for r in f.reasons] + [text(n, 300) for n in f.notes]) or "—"]
            for f in diff.flags
        ]
        lines += _table(["action", "kind", "resource", "type", "why"], rows, what="replacements or deletions") + [""]
    if diff.status == "unchanged":
        lines.append("Resources, GPU pools, monthly cost and policy verdicts are the same as at the base.")
        return "\n".join(lines)
    lines += _table(
        ["", "base", "head", "change"],
        [
            ["GPUs (max)", dash_or_text(diff.max_gpus.before), dash_or_text(diff.max_gpus.after), signed(diff.max_gpus.delta)],
            ["monthly floor", usd(diff.monthly_floor.before), usd(diff.monthly_floor.after), signed_usd(diff.monthly_floor.delta)],
            ["monthly ceiling", usd(diff.monthly_ceiling.before), usd(diff.monthly_ceiling.after), signed_usd(diff.monthly_ceiling.delta)],
        ],
        ["---", "---:", "---:", "---:"],
    )
    lines.append("")
    changed_pools = [p for p in diff.pools if p.status != "same"]
    if changed_pools:
        lines += ["**GPU pools**", ""]
        lines += _table(
            ["pool", "GPU, type", "nodes", "GPUs min..max", "monthly floor", "monthly ceiling"],
            [_pool_row(p) for p in changed_pools],
            ["---", "---", "---", "---", "---:", "---:"],
            what="pools",
        )
        lines.append("")
    lines += unit_cost_summary(diff)
    lines += policy_summary(diff)
    return "\n".join(lines).rstrip() + "\n"


def per_million(value: Any) -> str:
    return f"${value:,.4f}" if isinstance(value, (int, float)) else ("—" if value is None else text(value))


def _unit_change(change: Change) -> str:
    shown = arrow(change, per_million)
    if change.changed and all(isinstance(v, (int, float)) for v in (change.before, change.after)) and change.before:
        shown += f" ({(change.after - change.before) / change.before:+.0%})"
    return shown


def unit_cost_summary(diff: StackDiff) -> list[str]:
    """$ per 1M inferences (whole nodes, idle GPUs included) where it or what it rests on changed."""
    changed = [u for u in diff.unit_costs if u.changed]
    if not changed:
        return []
    rows = [[text(u.subject), _unit_change(u.peak), _unit_change(u.average), arrow(u.basis)] for u in changed]
    lines = ["**$ per 1M inferences** (whole nodes, idle GPUs included)", ""]
    lines += _table(["", "at peak", "at average", "rests on"], rows, ["---", "---:", "---:", "---"], what="rows")
    return lines + [""]


def dash_or_text(value: Any) -> str:
    return "—" if value is None else text(value)


def policy_summary(diff: StackDiff) -> list[str]:
    policy = diff.policy
    if not policy.head_available:
        return ["**Policy verdicts:** not in the plan documents (planned without policy evaluation).", ""]
    if not policy.base_available and diff.status != "added":
        rows = [["now", text(v.level), code(v.policy), text(_short_urn(v.urn)), text(v.message)] for v in policy.head]
        head = f"**Policy verdicts:** {len(policy.head)} at head (the base plan has none to compare with)."
    elif not policy.changed:
        return [f"**Policy verdicts:** unchanged ({len(policy.head)} at head).", ""]
    else:
        rows = [["**new**", text(v.level), code(v.policy), text(_short_urn(v.urn)), text(v.message)] for v in policy.new]
        rows += [
            ["level", f"{text(a.level)} → {text(b.level)}", code(b.policy), text(_short_urn(b.urn)), text(b.message)]
            for a, b in policy.level_changed
        ]
        rows += [["resolved", text(v.level), code(v.policy), text(_short_urn(v.urn)), text(v.message)] for v in policy.resolved]
        head = (
            f"**Policy verdicts:** {len(policy.new)} new, {len(policy.level_changed)} changed level, "
            f"{len(policy.resolved)} resolved."
        )
    if not rows:
        return [head, ""]
    return [head, "", *_table(["", "level", "policy", "resource", "message"], rows, what="verdicts"), ""]


def _short_urn(urn: str) -> str:
    return urn.rsplit("::", 1)[-1] if urn else "(stack)"


# ---------------------------------------------------------------- the details (shortened to fit)


def resource_block(change: ResourceChange) -> str:
    kind = f" ({change.kind})" if change.kind else ""
    first = f"- `{SYMBOL[change.action]}` {change.action} **{text(change.name)}** {code(change.type, table=False)}{kind}"
    if change.action == "ignored":
        first += " — only paths under ignoreChanges differ"
    lines = [first]
    for path in change.paths[:PATHS_PER_RESOURCE]:
        note = " (ignored: ignoreChanges)" if path.ignored else ""
        lines.append(f"  - {code(path.path, table=False)}: {shown(path.before)} → {shown(path.after)}{note}")
    if len(change.paths) > PATHS_PER_RESOURCE:
        lines.append(f"  - …and {len(change.paths) - PATHS_PER_RESOURCE} more changed paths")
    for option, (before, after) in change.options.items():
        lines.append(f"  - option {code(option, table=False)}: {shown(before)} → {shown(after)}")
    return "\n".join(lines)


def details(diff: StackDiff, budget: int) -> str:
    """The collapsed resource list, cut to `budget` characters with a note saying how much was left out."""
    changes = [r for r in diff.resources if r.action != "same"]
    if not changes or diff.status == "error":
        return ""
    opening = f"<details><summary>Resource changes ({len(changes)})</summary>\n\n"
    closing = "\n\n</details>\n"
    used = len(opening) + len(closing) + NOTE_ROOM
    if used > budget:
        return ""
    blocks = []
    for i, change in enumerate(changes):
        block = resource_block(change)
        if used + len(block) + 1 > budget:
            left = len(changes) - i
            blocks.append(
                f"\n…{left} more resource changes not shown: this comment stays under {COMMENT_LIMIT:,} characters. "
                "Run `tritonfleet diff` locally or open the workflow's plan-diff artifact for all of them."
            )
            break
        blocks.append(block)
        used += len(block) + 1
    return opening + "\n".join(blocks) + closing


# ---------------------------------------------------------------- whole comments and reports


def _clip(markdown: str, limit: int) -> str:
    """Last resort for absurd inputs (summaries alone over the limit): cut at a line and say so."""
    if len(markdown) <= limit:
        return markdown
    note = "\n\n…report cut here to stay under the comment size limit; run `tritonfleet diff --format json` for everything.\n"
    cut = markdown.rfind("\n", 0, limit - len(note) - 20)
    body = markdown[: max(cut, 0)]
    if body.count("<details>") > body.count("</details>"):
        note += "\n</details>\n"
    return body + note


def stack_comment(diff: StackDiff, limit: int = COMMENT_LIMIT) -> str:
    """One stack's pull-request comment: marker first, summary, collapsed details, footer; at most `limit` chars."""
    head = summary(diff)
    tail = "\n" + FOOTER + "\n"
    body = head + "\n" + details(diff, limit - len(head) - len(tail) - 2) + tail
    return _clip(body, limit)


def overview(diffs: list[StackDiff]) -> str:
    rows = []
    for d in diffs:
        policy = (
            f"{len(d.policy.new)} new, {len(d.policy.resolved)} resolved" if d.policy.head_available and d.policy.base_available
            else ("—" if not d.policy.head_available else f"{len(d.policy.head)} at head")
        )
        rows.append([
            code(d.stack), headline(d), text(flag_line(d) or "—"),
            arrow(d.max_gpus, dash_or_text) if d.status != "error" else "—",
            (signed_usd(d.monthly_ceiling.delta) if d.status != "error" else "—"),
            policy if d.status != "error" else "—",
        ])
    lines = ["## tritonfleet plan diff", ""]
    lines += _table(["stack", "resources", "⚠ replace / delete", "GPUs (max)", "monthly ceiling change", "policy"], rows, what="stacks")
    return "\n".join(lines) + "\n\n"


def report(diffs: list[StackDiff], limit: int = COMMENT_LIMIT) -> str:
    """All stacks in one Markdown document: an overview table, then each stack's summary and details, within `limit`."""
    top = overview(diffs)
    summaries = [summary(d) for d in diffs]
    tail = "\n" + FOOTER + "\n"
    remaining = limit - len(top) - sum(len(s) + 2 for s in summaries) - len(tail)
    parts = [top]
    for i, (diff, head) in enumerate(zip(diffs, summaries, strict=True)):
        share = max(0, remaining // (len(diffs) - i))
        more = details(diff, share) if share > 0 else ""
        remaining -= len(more)
        parts.append(head + "\n" + more + "\n")
    return _clip("".join(parts) + tail, limit)


def _plain(value: Any) -> Any:
    if value is ABSENT:
        return None
    return value


def to_json(diffs: list[StackDiff]) -> dict[str, Any]:
    """Everything, unshortened, for machines (the schema is documented in docs/ci.md)."""

    def change(c: Change) -> dict[str, Any]:
        return {"base": c.before, "head": c.after, "delta": c.delta}

    def verdict(v) -> dict[str, str]:
        return {"policy": v.policy, "enforcementLevel": v.level, "urn": v.urn, "message": v.message}

    stacks = []
    for d in diffs:
        stacks.append({
            "stack": d.stack,
            "status": d.status,
            "error": d.error or None,
            "cloud": d.cloud,
            "region": d.region,
            "environment": d.environment,
            "notes": d.notes,
            "refused": d.refused,
            "counts": {a: d.count(a) for a in ("add", "change", "remove", "ignored")},
            "flags": [
                {"action": f.action, "kind": f.kind, "name": f.name, "type": f.type, "urn": f.urn,
                 "reasons": list(f.reasons), "notes": list(f.notes)}
                for f in d.flags
            ],
            "maxGpus": change(d.max_gpus),
            "monthlyFloorUsd": change(d.monthly_floor),
            "monthlyCeilingUsd": change(d.monthly_ceiling),
            "pools": [
                {"pool": p.pool, "status": p.status, "gpu": change(p.gpu), "instanceType": change(p.instance_type),
                 "nodes": change(p.nodes), "minGpus": change(p.min_gpus), "maxGpus": change(p.max_gpus),
                 "monthlyFloorUsd": change(p.monthly_floor), "monthlyCeilingUsd": change(p.monthly_ceiling)}
                for p in d.pools
            ],
            "usdPer1MInferences": [
                {"subject": u.subject, "peak": change(u.peak), "average": change(u.average), "basis": change(u.basis)}
                for u in d.unit_costs
            ],
            "policy": {
                "baseAvailable": d.policy.base_available,
                "headAvailable": d.policy.head_available,
                "new": [verdict(v) for v in d.policy.new],
                "resolved": [verdict(v) for v in d.policy.resolved],
                "levelChanged": [{"base": verdict(a), "head": verdict(b)} for a, b in d.policy.level_changed],
            },
            "resources": [
                {"action": r.action, "urn": r.urn, "type": r.type, "name": r.name, "kind": r.kind,
                 "replaceReasons": r.replace_reasons, "rollReasons": r.roll_reasons,
                 "paths": [
                     {"path": p.path, "base": _plain(p.before), "head": _plain(p.after),
                      "baseSet": p.before is not ABSENT, "headSet": p.after is not ABSENT, "ignored": p.ignored}
                     for p in r.paths
                 ],
                 "options": {o: {"base": a, "head": b} for o, (a, b) in r.options.items()}}
                for r in d.resources
            ],
        })
    return {"format": JSON_FORMAT, "commentLimit": COMMENT_LIMIT, "stacks": stacks}
