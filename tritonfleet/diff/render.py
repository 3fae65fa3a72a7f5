"""Render stack diffs as one pull-request comment (Markdown, blocking items first, bounded in size) or as JSON.

The comment opens with one headline row per changed stack (blocked or not, the monthly change in $ and %, budget use
and GPUs before → after), then per stack what blocks it with each fix in full, then the rest. Tables stay narrow
(long text goes in lists under them) so nothing is pushed off GitHub's ~720 px column. GitHub refuses comments over
65,536 characters; we stay under COMMENT_LIMIT by shortening the collapsed details, never the summaries (their tables
are capped in rows, and say how many rows they left out).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tritonfleet.diff.compare import ABSENT, Change, PoolDiff, ResourceChange, RolloutDiff, StackDiff, Verdict
from tritonfleet.plan.text import rollout_canary, rollout_pins, rollout_steps

COMMENT_LIMIT = 60_000
COMMENT_NAME = "plan-diff"  # the comment's file (plan-diff.md) and the name in its marker
MARKER = "<!-- tritonfleet-plan:{name} -->"
NO_CHANGES = "<!-- tritonfleet-plan-diff:no-changes -->"  # the comment workflow posts no new comment that says only this
SUMMARY_ROWS = 30  # rows per summary table and items per list before "N more"
PATHS_PER_RESOURCE = 40
VALUE_CHARS = 120
FULL_TEXT = 4000  # a blocking item's message, fix included: bounded only against absurd input
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


def marker(name: str = COMMENT_NAME) -> str:
    return MARKER.format(name=safe_name(name))


# ---------------------------------------------------------------- small formatting helpers


def text(value: Any, limit: int = 200) -> str:
    """Untrusted text for a table cell or list item: one line, no HTML, no table breaks, bounded.

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
    """A monthly figure in whole dollars (cents are noise at this scale; the JSON keeps them)."""
    if value is None:
        return "—"
    if isinstance(value, (int, float)):
        return f"${value:,.0f}"
    return text(value)


def signed_usd(value: Any) -> str:
    if value is None:
        return "—"
    if not isinstance(value, (int, float)):
        return text(value)
    return "$0" if round(value) == 0 else f"{'+' if value > 0 else '-'}${abs(value):,.0f}"


def signed(value: Any) -> str:
    if value is None:
        return "—"
    if not isinstance(value, (int, float)):
        return text(value)
    return f"{value:+g}" if value else "0"


def percent(change: Change) -> str:
    """The change relative to the base (`+31%`), or "" where there is no known, non-zero base."""
    a, b = change.before, change.after
    if not all(isinstance(v, (int, float)) for v in (a, b)) or not a:
        return ""
    return f"{(b - a) / a:+.0%}"


def arrow(change: Change, fmt=lambda v: "—" if v is None else text(v)) -> str:
    return fmt(change.after) if not change.changed else f"{fmt(change.before)} → {fmt(change.after)}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def dash_or_text(value: Any) -> str:
    return "—" if value is None else text(value)


def _short_urn(urn: str) -> str:
    return urn.rsplit("::", 1)[-1] if urn else "(stack)"


def _table(header: list[str], rows: list[list[str]], align: list[str] | None = None, what: str = "rows") -> list[str]:
    align = align or ["---"] * len(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows[:SUMMARY_ROWS]]
    if len(rows) > SUMMARY_ROWS:
        lines += ["", f"…and {len(rows) - SUMMARY_ROWS} more {what} (all of them in `tritonfleet diff --format json`)."]
    return lines


def _items(items: list[str], what: str) -> list[str]:
    lines = [f"- {item}" for item in items[:SUMMARY_ROWS]]
    if len(items) > SUMMARY_ROWS:
        lines.append(f"- …and {len(items) - SUMMARY_ROWS} more {what} (all of them in `tritonfleet diff --format json`).")
    return lines


# ---------------------------------------------------------------- headlines


def counts(diff: StackDiff) -> str:
    return f"{diff.count('add')} to add, {diff.count('change')} to change, {diff.count('remove')} to remove"


def headline(diff: StackDiff) -> str:
    if diff.status == "error":
        return "could not be planned"
    return {"added": f"new stack: {counts(diff)}", "removed": f"stack removed: {counts(diff)}", "unchanged": "no changes"}.get(
        diff.status, counts(diff)
    )


def flag_line(diff: StackDiff) -> str:
    parts = []
    for action, word in (("replace", "replacement"), ("delete", "deletion"), ("roll nodes", "node roll")):
        n = sum(1 for f in diff.flags if f.action == action)
        if n:
            parts.append(plural(n, word))
    return ", ".join(parts)


def verdict_word(diff: StackDiff) -> str:
    return "⛔ blocked" if diff.blocked else "✅ not blocked"


def why_blocked(diff: StackDiff) -> str:
    if diff.status == "error":
        return "could not be planned"
    parts = []
    if diff.mandatory:
        added = len(diff.added_mandatory)
        parts.append(plural(len(diff.mandatory), "mandatory policy violation") + (f", {added} added here" if added else ""))
    if diff.refused:
        parts.append(plural(len(diff.refused), "replacement") + " refused in prod")
    return ", ".join(parts)


def budget_use(diff: StackDiff, side: str) -> Any:
    """The budget's basis figure (floor or ceiling) over the monthly budget, as a fraction; unknown or None."""
    budget = getattr(diff.budget, side)
    basis = getattr(diff.budget_basis, side)
    figure = getattr(diff.monthly_floor if basis == "floor" else diff.monthly_ceiling, side)
    if not isinstance(budget, (int, float)) or not budget or basis not in ("floor", "ceiling") or figure is None:
        return None
    return round(figure / budget, 4) if isinstance(figure, (int, float)) else "unknown"


def _use(value: Any) -> str:
    return f"{value:.0%}" if isinstance(value, float) else dash_or_text(value)


def money_change(change: Change) -> str:
    """`+$46,206 (+31%)`, `$0`, `unknown`."""
    pct = percent(change)
    return signed_usd(change.delta) + (f" ({pct})" if pct and change.changed else "")


def money_headline(change: Change) -> str:
    """`$149,486 → $195,692 (+$46,206, +31%)`, or `$2,717 (unchanged)`."""
    if not change.changed:
        return f"{usd(change.after)} (unchanged)"
    pct = percent(change)
    return f"{arrow(change, usd)} ({signed_usd(change.delta)}{', ' + pct if pct else ''})"


def overview(diffs: list[StackDiff]) -> list[str]:
    """One headline row per stack that changed or could not be planned; the others named in one line."""
    shown_diffs = [d for d in diffs if d.status != "unchanged"]
    unchanged = [d.stack for d in diffs if d.status == "unchanged"]
    lines = []
    blocked = [d for d in shown_diffs if d.blocked]
    if blocked:
        lines += ["> [!CAUTION]"]
        lines += [f"> **`{text(d.stack)}` is blocked:** {why_blocked(d)}.<br>" for d in blocked]
        lines[-1] = lines[-1].removesuffix("<br>")
        lines.append("")
    if shown_diffs:
        rows = []
        for d in shown_diffs:
            error = d.status == "error"
            rows.append([
                code(d.stack, 40),
                verdict_word(d),
                "—" if error else money_change(d.monthly_ceiling),
                "—" if error else arrow(Change(budget_use(d, "before"), budget_use(d, "after")), _use),
                "—" if error else arrow(d.max_gpus, dash_or_text),
            ])
        lines += _table(["stack", "verdict", "Δ $/month (ceiling)", "budget use", "GPUs (max)"], rows,
                        ["---", "---", "---:", "---:", "---:"], what="stacks")
        lines.append("")
    if unchanged:
        lines += [f"No changes in {', '.join(code(s, 40) for s in unchanged)}.", ""]
    return lines


def stack_headline(diff: StackDiff) -> list[str]:
    """Blocked or not, money, budget, GPUs and resource counts of one stack, one item each."""
    where = " · ".join(text(x) for x in (diff.cloud, diff.region, diff.environment) if x)
    lines = [f"### `{text(diff.stack, 60)}` — {verdict_word(diff)}" + (f": {why_blocked(diff)}" if diff.blocked else ""), ""]
    if where:
        lines += [f"{where} · {headline(diff)}" + (f" · {flag_line(diff)}" if flag_line(diff) else ""), ""]
    if diff.status == "error":
        return lines
    items = [
        f"**Monthly ceiling:** {money_headline(diff.monthly_ceiling)}",
    ]
    if diff.monthly_expected.before is not None or diff.monthly_expected.after is not None:
        items.append(f"**Expected (spotShare mix, an estimate):** {money_headline(diff.monthly_expected)}")
    use = Change(budget_use(diff, "before"), budget_use(diff, "after"))
    if use.before is not None or use.after is not None:
        basis = diff.budget_basis.after or diff.budget_basis.before
        items.append(f"**Budget use:** {arrow(use, _use)} of {arrow(diff.budget, usd)} a month ({text(basis)} basis)")
    limit = diff.gpu_limit.after if diff.gpu_limit.after is not None else diff.gpu_limit.before
    items.append(
        f"**GPUs (max):** {arrow(diff.max_gpus, dash_or_text)}"
        + (f" ({signed(diff.max_gpus.delta)})" if diff.max_gpus.changed else "")
        + (f", limit {arrow(diff.gpu_limit, dash_or_text)}" if limit is not None else "")
    )
    starting = [r for r in diff.rollouts if r.starts]
    if starting:
        items.append("**Rollouts starting:** " + ", ".join(
            f"{code(r.deployment, 60, table=False)} (+{plural(r.after['extraGpus'], 'GPU')}, "
            f"{cents(r.after['usdPerRollout'])} a rollout)" for r in starting))
    return lines + [f"- {item}" for item in items] + [""]


# ---------------------------------------------------------------- blocking items, in full


def _verdict_item(v: Verdict, tag: str) -> str:
    return f"**{code(v.policy, table=False)}** ({tag}) on {code(_short_urn(v.urn), table=False)}: {text(v.message, FULL_TEXT)}"


def blocking(diff: StackDiff) -> list[str]:
    if diff.status == "error":
        return ["**Blocking:** this stack could not be planned:", "", "```text", diff.error.replace("```", "'''")[:FULL_TEXT], "```", ""]
    added = {v.key for v in diff.added_mandatory}
    items = [_verdict_item(v, "new" if v.key in added else "also at the base") for v in diff.mandatory]
    items += [f"**refused in prod:** {text(r, FULL_TEXT)}" for r in diff.refused]
    if not items:
        return []
    return ["**Blocking** (`pulumi up` fails or is refused until each is fixed):", "", *_items(items, "blocking items"), ""]


# ---------------------------------------------------------------- the rest


def flags_section(diff: StackDiff) -> list[str]:
    if not diff.flags:
        return []
    items = []
    for f in diff.flags:
        why = " · ".join([code(r, table=False) for r in f.reasons] + [text(n, 600) for n in f.notes])
        items.append(f"**{f.action}** {f.kind} {code(f.name, table=False)} ({code(f.type, table=False)})" + (f": {why}" if why else ""))
    return ["> [!WARNING]", f"> {flag_line(diff)} of clusters, node pools or buckets.", "", *_items(items, "replacements or deletions"), ""]


def money_table(diff: StackDiff) -> list[str]:
    rows = [
        ["GPUs (max)", dash_or_text(diff.max_gpus.before), dash_or_text(diff.max_gpus.after), signed(diff.max_gpus.delta)],
        ["floor $/month", usd(diff.monthly_floor.before), usd(diff.monthly_floor.after), money_change(diff.monthly_floor)],
        ["expected $/month", usd(diff.monthly_expected.before), usd(diff.monthly_expected.after), money_change(diff.monthly_expected)],
        ["ceiling $/month", usd(diff.monthly_ceiling.before), usd(diff.monthly_ceiling.after), money_change(diff.monthly_ceiling)],
    ]
    if diff.monthly_expected.before is None and diff.monthly_expected.after is None:
        del rows[2]
    for label, change in (("other lines ceiling $/month", diff.other_ceiling), ("total ceiling $/month", diff.total_ceiling)):
        if change.before is not None or change.after is not None:
            rows.append([label, usd(change.before), usd(change.after), money_change(change)])
    if diff.budget.changed:
        rows.append(["budget $/month", usd(diff.budget.before), usd(diff.budget.after), money_change(diff.budget)])
    return [*_table(["", "base", "head", "change"], rows, ["---", "---:", "---:", "---:"]), ""]


def _pool_line(p: PoolDiff) -> str | None:
    """What the GPU-pools table has no room for: GPU and instance type, node ranges per purchase option."""
    parts = []
    if p.gpu.changed or p.instance_type.changed:
        parts.append(arrow(Change(
            f"{p.gpu.before} {p.instance_type.before}" if p.gpu.before else None,
            f"{p.gpu.after} {p.instance_type.after}" if p.gpu.after else None,
        )))
    if p.nodes.changed:
        parts.append(f"nodes {arrow(p.nodes)}")
    return f"{code(p.pool, 40, table=False)}: {'; '.join(parts)}" if parts else None


def pools_section(diff: StackDiff) -> list[str]:
    changed = [p for p in diff.pools if p.status != "same"]
    if not changed:
        return []
    rows = []
    for p in changed:
        gpus = Change(
            f"{p.min_gpus.before}..{p.max_gpus.before}" if p.max_gpus.before is not None else None,
            f"{p.min_gpus.after}..{p.max_gpus.after}" if p.max_gpus.after is not None else None,
        )
        rows.append([
            code(p.pool, 40) + ("" if p.status in ("changed", "same") else f" ({p.status})"),
            text(p.gpu.after or p.gpu.before),
            arrow(gpus),
            arrow(p.monthly_ceiling, usd),
        ])
    lines = ["**GPU pools**", ""]
    lines += _table(["pool", "GPU", "GPUs min..max", "ceiling $/month"], rows, ["---", "---", "---", "---:"], what="pools")
    notes = [line for line in (_pool_line(p) for p in changed) if line]
    return lines + ([""] + _items(notes, "pools") if notes else []) + [""]


def other_lines_section(diff: StackDiff) -> list[str]:
    """The non-GPU lines of the bill that change (control plane, system nodes, NAT, load balancers, volumes, storage,
    logs, traffic), each at the ceiling."""
    changed = [line for line in diff.other_lines if line.changed]
    if not changed:
        return []
    rows = [[code(line.line, 40), usd(line.monthly_ceiling.before), usd(line.monthly_ceiling.after),
             money_change(line.monthly_ceiling)] for line in changed]
    lines = ["**Other lines of the bill** (ceiling)", ""]
    return lines + _table(["line", "base", "head", "change"], rows, ["---", "---:", "---:", "---:"], what="lines") + [""]


def cents(value: Any) -> str:
    """A small figure (a rollout's cost, $/hour) in dollars and cents, or the plan's word for unknown."""
    return f"${value:,.2f}" if isinstance(value, (int, float)) else text(value)


def _setting_changes(r: RolloutDiff) -> list[str]:
    """`steps 10%, 50% → 25%, 50%`, `interval 5m → 10m`, `maxErrorRatio 0.01 → 0.02`: each rollout setting that
    changes (a step's weight as it really runs, so a new traffic split shows too)."""
    out = []
    steps = Change(rollout_steps(r.before or {"steps": []}), rollout_steps(r.after or {"steps": []}))
    if steps.changed:
        out.append(f"steps {arrow(steps)}")
    for key in ("interval", "trafficSplit"):
        if r.change(key).changed:
            out.append(f"{key} {arrow(r.change(key))}")
    old, new = (r.change("thresholds").before or {}), (r.change("thresholds").after or {})
    out += [f"{k} {arrow(Change(old.get(k), new.get(k)))}" for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)]
    return out


def _rollout_item(r: RolloutDiff) -> str:
    name = code(r.deployment, 60, table=False)
    if r.after is None:
        return f"{name}: rollout removed: the next pin or image change reaches every replica at once"
    what = []
    if r.before is None:
        what.append("rollout declared, it runs from the next pin or image change")
    if r.pins.changed and r.before is not None:
        what.append(f"pins {text(rollout_pins(r.before))} → {text(rollout_pins(r.after))}")
    if r.image.changed and r.before is not None:
        what.append(f"image {arrow(r.image)}")
    if r.settings_changed and r.before is not None:
        what += _setting_changes(r)
    head = f"**{'starts' if r.starts else 'changes'}**"
    return f"{name} {head}: {'; '.join(what)}. Runs as: {text(rollout_canary(r.after), 600)}"


def rollouts_section(diff: StackDiff) -> list[str]:
    """Deployments whose canary starts (pins or image change) or whose rollout changes: what changes, the steps and
    thresholds it runs with, and the canary's extra GPUs and their cost while it runs."""
    if not diff.rollouts:
        return []
    items = [_rollout_item(r) for r in diff.rollouts]
    return ["**Rollouts** (Argo Rollouts canary, judged against stable)", "", *_items(items, "rollouts"), ""]


def per_million(value: Any) -> str:
    return f"${value:,.4f}" if isinstance(value, (int, float)) else ("—" if value is None else text(value))


def _unit_change(change: Change) -> str:
    pct = percent(change)
    return arrow(change, per_million) + (f" ({pct})" if pct and change.changed else "")


def unit_cost_summary(diff: StackDiff) -> list[str]:
    """$ per 1M inferences (whole nodes, idle GPUs included) where it or what it rests on changed."""
    changed = [u for u in diff.unit_costs if u.changed]
    if not changed:
        return []
    rows = [[text(u.subject, 60), _unit_change(u.peak), _unit_change(u.average)] for u in changed]
    lines = ["**$ per 1M inferences** (whole nodes, idle GPUs included)", ""]
    lines += _table(["", "at peak", "at average"], rows, ["---", "---:", "---:"], what="rows")
    basis = [f"{text(u.subject, 60)} rests on {arrow(u.basis)}" for u in changed if u.basis.changed or u.basis.after]
    return lines + ([""] + _items(basis, "rows") if basis else []) + [""]


def policy_summary(diff: StackDiff) -> list[str]:
    """Verdicts that do not block (advisory ones, resolved ones, levels lowered), each in full."""
    policy = diff.policy
    if not policy.head_available:
        return ["**Policy verdicts:** not in the plan documents (planned without policy evaluation).", ""]
    mandatory = {v.key for v in diff.mandatory}
    if not policy.base_available and diff.status != "added":
        items = [_verdict_item(v, v.level) for v in policy.head if v.key not in mandatory]
        head = f"**Policy verdicts:** {len(policy.head)} at head (the base plan has none to compare with)."
    elif not policy.changed:
        return [f"**Policy verdicts:** unchanged ({len(policy.head)} at head).", ""]
    else:
        items = [_verdict_item(v, f"new, {v.level}") for v in policy.new if v.key not in mandatory]
        items += [_verdict_item(b, f"{a.level} → {b.level}") for a, b in policy.level_changed if b.key not in mandatory]
        items += [_verdict_item(v, f"resolved, was {v.level}") for v in policy.resolved]
        head = (
            f"**Policy verdicts:** {len(policy.new)} new, {len(policy.level_changed)} changed level, "
            f"{len(policy.resolved)} resolved."
        )
    return [head, "", *_items(items, "verdicts"), ""] if items else [head, ""]


def summary(diff: StackDiff) -> str:
    """One changed stack: headline, blocking items in full, then the rest (never shortened)."""
    lines = stack_headline(diff) + blocking(diff)
    if diff.status == "error":
        return "\n".join(lines)
    for note in diff.notes:
        lines += [f"> {text(note, 600)}", ""]
    lines += flags_section(diff) + money_table(diff) + rollouts_section(diff) + pools_section(diff)
    lines += other_lines_section(diff)
    lines += unit_cost_summary(diff) + policy_summary(diff)
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------- the details (shortened to fit)


def resource_block(change: ResourceChange) -> str:
    kind = f" ({change.kind})" if change.kind else ""
    first = f"- `{SYMBOL[change.action]}` {change.action} **{text(change.name)}** {code(change.type, table=False)}{kind}"
    if change.action == "ignored":
        first += " — only paths under ignoreChanges differ"
    lines = [first]
    for path in change.paths[:PATHS_PER_RESOURCE]:
        note = " (ignored: ignoreChanges)" if path.ignored else ""
        lines.append(f"  - {code(path.path, 240, table=False)}: {shown(path.before)} → {shown(path.after)}{note}")
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
    opening = f"<details><summary>Resource changes in {text(diff.stack, 60)} ({len(changes)})</summary>\n\n"
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


# ---------------------------------------------------------------- the comment


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


def report(diffs: list[StackDiff], limit: int = COMMENT_LIMIT) -> str:
    """The pull request's one comment: marker, headline table, then each changed stack (blocking items first, then
    the rest, then its collapsed details), within `limit` characters. Unchanged stacks are only named; when no stack
    changed, the comment says so and carries NO_CHANGES (the workflow then posts nothing new)."""
    changed = [d for d in diffs if d.status != "unchanged"]
    top = "\n".join([marker()] + ([NO_CHANGES] if not changed else []) + ["## tritonfleet plan diff", "", *overview(diffs)])
    if not changed:
        top += "Resources, GPU pools, monthly cost and policy verdicts are the same as at the base.\n"
    summaries = [summary(d) for d in changed]
    tail = "\n" + FOOTER + "\n"
    remaining = limit - len(top) - sum(len(s) + 2 for s in summaries) - len(tail)
    parts = [top + "\n"]
    for i, (diff, head) in enumerate(zip(changed, summaries, strict=True)):
        share = max(0, remaining // (len(changed) - i))
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
            "monthlyExpectedCeilingUsd": change(d.monthly_expected),
            "otherLines": [
                {"line": line.line, "monthlyFloorUsd": change(line.monthly_floor),
                 "monthlyCeilingUsd": change(line.monthly_ceiling)}
                for line in d.other_lines
            ],
            "totalFloorUsd": change(d.total_floor),
            "totalCeilingUsd": change(d.total_ceiling),
            "budget": {"monthlyUsd": change(d.budget), "basis": change(d.budget_basis), "gpuLimit": change(d.gpu_limit),
                       "use": change(Change(budget_use(d, "before"), budget_use(d, "after")))},
            "blocked": d.blocked,
            "addedMandatory": [verdict(v) for v in d.added_mandatory],
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
            "rollouts": [
                {"deployment": r.deployment, "base": r.before, "head": r.after, "starts": r.starts,
                 "settingsChanged": r.settings_changed}
                for r in d.rollouts
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
