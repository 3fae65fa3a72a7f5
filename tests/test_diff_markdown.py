"""The pull-request comment as GitHub renders it: `tritonfleet diff`'s Markdown through cmark-gfm (GitHub's own
Markdown engine, via cmarkgfm), then its structure read from the HTML: one comment, a headline row per changed stack,
blocking items before the rest with their full text, tables narrow enough for GitHub's ~720 px column, no HTML from
plan content."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from html.parser import HTMLParser

import cmarkgfm  # pinned in the test extra: GitHub's own Markdown engine, cmark-gfm
from test_diff import base_plan, crafted_cases, plan, pool

from tritonfleet.diff import compare_plans, report

# GitHub's conversation column is ~720 px wide; its tables use a 14 px font (~7.5 px a character) and 13 px of
# padding each side of a cell (~4 characters). A row wider than this pushes its last column out of view.
COLUMN_CHARACTERS = 96
CELL_PADDING_CHARACTERS = 4


def to_html(markdown: str) -> str:
    from cmarkgfm.cmark import Options

    # UNSAFE keeps raw HTML (<details>, <sub>, <br>) as GitHub's own sanitiser does; the tagfilter extension still
    # applies, as on GitHub.
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


@dataclass
class Section:
    heading: str
    blocks: list[tuple[str, str]] = field(default_factory=list)  # (tag, text): p, li, blockquote's p as "quote"
    tables: list[list[list[str]]] = field(default_factory=list)  # rows of cell texts, header row first


class Outline(HTMLParser):
    """Headings (h2, h3) open sections; paragraphs, list items and tables are recorded in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections = [Section("")]
        self.tags: list[str] = []
        self.text: list[str] = []
        self.row: list[str] | None = None
        self.elements: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.elements.append(tag)
        if tag in ("h2", "h3", "p", "li", "th", "td"):
            self.tags.append(tag)
            self.text = []
        elif tag == "table":
            self.sections[-1].tables.append([])
        elif tag == "tr":
            self.row = []

    def handle_endtag(self, tag):
        if tag in ("h2", "h3", "p", "li", "th", "td") and self.tags and self.tags[-1] == tag:
            self.tags.pop()
            content = " ".join("".join(self.text).split())
            if tag == "h3":
                self.sections.append(Section(content))
            elif tag in ("th", "td") and self.row is not None:
                self.row.append(content)
            elif tag in ("p", "li") and content:
                inside_li = "li" in self.tags
                if not (tag == "p" and inside_li):
                    self.sections[-1].blocks.append((tag, content))
            if tag != "p" or "li" not in self.tags:
                self.text = []
        elif tag == "tr" and self.row is not None:
            self.sections[-1].tables[-1].append(self.row)
            self.row = None

    def handle_data(self, data):
        self.text.append(data)


def outline(markdown: str) -> Outline:
    parser = Outline()
    parser.feed(to_html(markdown))
    return parser


def pull_request() -> tuple[str, str]:
    """A pull request over six stacks: unchanged, resized, blocked by a new mandatory verdict with a long fix (and
    hostile text in an advisory one), replaced, unknown price; the comment and the blocking fix text."""
    cases = crafted_cases()
    fix = (
        "The stack can run 6 GPUs at its maximum (tf-aws-l40s 6), over the environment's ceiling of 4. Lower "
        "gpuPools[].maxNodes, or raise maxGpus in this stack's policy config after review: edit "
        "policies/config/demo.json, key gpu-stack-limit-total-gpus.maxGpus, value 6."
    )
    mandatory = {"policy": "gpu-stack-limit-total-gpus", "enforcement": "mandatory", "severity": "high", "urn": "", "message": fix}
    hostile = {"policy": "spot-share", "enforcement": "advisory", "severity": "low", "urn": "",
               "message": "<script>alert(1)</script> | broken | table <img src=x onerror=alert(1)>"}
    blocked_base, blocked_head = base_plan(policy=[]), base_plan(policy=[hostile, mandatory])
    blocked_head["cost"] = plan([], [pool("l40s", {"on-demand": (1, 6)}, {"on-demand": 1.861})])["cost"]
    for document, use in ((blocked_base, 0.5), (blocked_head, 1.5)):
        document["cost"]["budget"] = {"monthlyUsd": document["cost"]["monthlyCeilingUsd"] / use, "basis": "ceiling", "gpuLimit": 4}
    pairs = {"blocked": (blocked_base, blocked_head)}
    for name in ("no-change", "pool-resized", "cluster-replaced", "unknown-price"):
        pairs[name] = cases[name]
    base, head = {}, {}
    for name, (b, h) in pairs.items():
        base[name], head[name] = (dict(copy.deepcopy(doc), stack=name) for doc in (b, h))
    return report(compare_plans(base, head)), fix


def test_the_comment_renders_as_one_headline_table_then_a_section_per_changed_stack():
    markdown, _ = pull_request()
    doc = outline(markdown)
    top, *stacks = doc.sections
    assert doc.elements.count("h2") == 1
    assert [s.heading.split(" — ")[0] for s in stacks] == ["blocked", "cluster-replaced", "pool-resized", "unknown-price"]
    assert stacks[0].heading == "blocked — ⛔ blocked: 1 mandatory policy violation, 1 added here"
    assert all(s.heading.endswith("✅ not blocked") for s in stacks[1:])

    caution = next(text for tag, text in top.blocks if "[!CAUTION]" in text)
    assert "blocked is blocked: 1 mandatory policy violation, 1 added here" in caution
    (headlines,) = top.tables
    assert headlines[0] == ["stack", "verdict", "Δ $/month (ceiling)", "budget use", "GPUs (max)"]
    assert [row[0] for row in headlines[1:]] == ["blocked", "cluster-replaced", "pool-resized", "unknown-price"]
    assert headlines[1] == ["blocked", "⛔ blocked", "+$5,434 (+200%)", "50% → 150%", "2 → 6"]
    assert headlines[4][2] == "unknown"
    assert ("p", "No changes in no-change.") in top.blocks

    blocked = stacks[0]
    items = [text for tag, text in blocked.blocks if tag == "li"]
    assert items[:3] == [
        "Monthly ceiling: $2,717 → $8,151 (+$5,434, +200%)",
        "Budget use: 50% → 150% of $5,434 a month (ceiling basis)",
        "GPUs (max): 2 → 6 (+4), limit 4",
    ]


def test_blocking_items_come_first_with_their_full_fix_and_plan_text_stays_text():
    markdown, fix = pull_request()
    doc = outline(markdown)
    blocked = doc.sections[1]
    texts = [text for _, text in blocked.blocks]
    blocking = texts.index("Blocking (pulumi up fails or is refused until each is fixed):")
    item = texts[blocking + 1]
    assert item.startswith("gpu-stack-limit-total-gpus (new) on (stack): ") and item.endswith(fix)
    advisory = next(i for i, t in enumerate(texts) if t.startswith("spot-share"))
    assert blocking < advisory
    assert "<script>alert(1)</script> | broken | table <img src=x onerror=alert(1)>" in texts[advisory]
    assert "script" not in doc.elements and "img" not in doc.elements
    assert doc.elements.count("details") == doc.elements.count("summary") == 2  # the stacks whose resources changed


def test_every_table_row_fits_githubs_column():
    markdown, _ = pull_request()
    for section in outline(markdown).sections:
        for table in section.tables:
            for row in table:
                width = sum(len(cell) for cell in row) + CELL_PADDING_CHARACTERS * len(row)
                assert width <= COLUMN_CHARACTERS, (section.heading, row, width)
