"""Regenerate docs/images/pr-comment.png: a real `tritonfleet diff` pull-request comment as GitHub shows it.

The comment is the one a pull request gets that raises prod's H200 maxNodes, moves the L40S pool's spotShare and
adds a deployment: prod is planned as committed (base) and as edited (head) in temporary copies of the project, the
two plans are diffed into the comment, the comment is rendered to HTML with cmark-gfm (GitHub's Markdown engine,
`cmarkgfm`) in a GitHub-like style at the conversation column's 720 px, and Chromium takes the screenshot headless.

Needs Chromium and an emoji font for the verdicts (Debian: `apt-get install -y chromium fonts-noto-color-emoji`), so
the test suite never runs it. The image shows the comment file `diff --comments-dir` writes; the posting workflow's
marker and provenance line (.github/scripts/plan-comment.js) are not in it. Run from the repository root:

    venv/bin/python scripts/render_comment_screenshot.py [--chromium chromium] [--out docs/images/pr-comment.png]
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import cmarkgfm
import yaml
from cmarkgfm.cmark import Options

ROOT = Path(__file__).resolve().parent.parent
STACK = "prod"
COLUMN_PX = 720  # GitHub's conversation column
MARGIN_PX = 16
# The CSS GitHub's light theme gives a comment body (markdown-body), reduced to what the comment uses.
STYLE = """
body { margin: 0; background: #fff; }
.comment { width: %(column)dpx; margin: %(margin)dpx; border: 1px solid #d0d7de; border-radius: 6px; }
.header { background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 8px 16px; color: #57606a;
  font: 14px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.header b { color: #1f2328; }
.markdown-body { padding: 16px; color: #1f2328; word-wrap: break-word;
  font: 14px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.markdown-body > *:first-child { margin-top: 0 !important; }
.markdown-body h2, .markdown-body h3 { margin: 24px 0 16px; font-weight: 600; line-height: 1.25; }
.markdown-body h2 { font-size: 1.5em; padding-bottom: .3em; border-bottom: 1px solid #d8dee4; }
.markdown-body h3 { font-size: 1.25em; }
.markdown-body p, .markdown-body ul, .markdown-body ol, .markdown-body table, .markdown-body blockquote,
.markdown-body details { margin: 0 0 16px; }
.markdown-body ul, .markdown-body ol { padding-left: 2em; }
.markdown-body li + li { margin-top: .25em; }
.markdown-body blockquote { padding: 0 1em; color: #59636e; border-left: .25em solid #d1d9e0; }
.markdown-body code { padding: .2em .4em; font-size: 85%%; background: rgba(175, 184, 193, .2); border-radius: 6px;
  font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace; }
.markdown-body pre { padding: 16px; overflow: auto; font-size: 85%%; background: #f6f8fa; border-radius: 6px; }
.markdown-body pre code { padding: 0; background: transparent; }
.markdown-body table { display: block; width: max-content; max-width: 100%%; overflow: auto;
  border-spacing: 0; border-collapse: collapse; }
.markdown-body th, .markdown-body td { padding: 6px 13px; border: 1px solid #d1d9e0; }
.markdown-body th { font-weight: 600; }
.markdown-body tr:nth-child(2n) { background: #f6f8fa; }
.markdown-body summary { cursor: pointer; }
.markdown-body a { color: #0969da; text-decoration: none; }
"""


def head_edit(config: dict) -> None:
    """The pull request: H200 maxNodes 3 -> 4, L40S spotShare 0.5 -> 0.75, a new `ocr` deployment on the L40S."""
    pools = {pool["name"]: pool for pool in config["tritonfleet:gpuPools"]}
    pools["h200"]["maxNodes"] += 1
    pools["l40s"]["spotShare"] = 0.75
    config["tritonfleet:tritonDeployments"].append(
        {
            "name": "ocr",
            "pool": "l40s",
            "modelPrefix": "ocr/",
            "minReplicas": 2,
            "maxReplicas": 2,
            "throughputPerReplica": 800,
            "targetLoad": {"peak": 1200, "average": 400, "unit": "requests/s"},
            "latencyTarget": "100ms",
        }
    )


def project_copy(where: Path, edit=None) -> Path:
    """A copy of the project (the files git tracks or would track) with prod's stack file changed by `edit`."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.splitlines()  # fmt: skip
    for name in files:
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, where / name)
    stack_file = where / "stacks" / f"Pulumi.{STACK}.yaml"
    document = yaml.safe_load(stack_file.read_text())
    if edit is not None:
        edit(document["config"])
    stack_file.write_text(yaml.safe_dump(document, sort_keys=False))
    return where


def tritonfleet(*args: str, allowed=(0,)) -> None:
    result = subprocess.run([sys.executable, "-m", "tritonfleet", *args], cwd=ROOT, capture_output=True, text=True)
    if result.returncode not in allowed:
        sys.exit(f"tritonfleet {' '.join(args)} exited {result.returncode}:\n{result.stdout}{result.stderr}")


def comment_markdown(work: Path) -> str:
    plans = {}
    for side, edit in (("base", None), ("head", head_edit)):
        project = project_copy(work / side, edit)
        plans[side] = work / f"{side}.json"
        # exit 2 (a mandatory policy violation) still writes the plan, which the comment then reports
        tritonfleet("plan", "--stack", STACK, "--project-dir", str(project), "--json", str(plans[side]), allowed=(0, 2))
    comments = work / "comments"
    tritonfleet("diff", str(plans["base"]), str(plans["head"]), "--comments-dir", str(comments),
                "-o", str(work / "report.md"), allowed=(0, 2))  # fmt: skip
    return (comments / "plan-diff.md").read_text()


def page(markdown: str) -> str:
    # UNSAFE keeps the raw HTML GitHub keeps (<details>, <sub>); the tagfilter extension applies, as on GitHub.
    body = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    header = '<div class="header"><b>github-actions</b> <span>bot</span> commented</div>'
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape('plan diff')}</title>"
        f"<style>{STYLE % {'column': COLUMN_PX, 'margin': MARGIN_PX}}</style></head>"
        f"<body><div class='comment'>{header}<div class='markdown-body'>{body}</div></div>"
        "<script>document.body.dataset.height = document.documentElement.scrollHeight;</script></body></html>"
    )


def screenshot(chromium: str, html_file: Path, png: Path) -> None:
    """Two headless runs: the first reads the page's height (from the DOM its script marks), the second takes a
    screenshot of exactly that window, so the whole comment is in the image."""
    width = COLUMN_PX + 2 * MARGIN_PX + 2
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1"]
    dom = subprocess.run([*flags, f"--window-size={width},800", "--dump-dom", html_file.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout  # fmt: skip
    match = re.search(r'data-height="(\d+)"', dom)
    if match is None:
        sys.exit("chromium did not report the page's height")
    height = int(match.group(1)) + MARGIN_PX
    subprocess.run([*flags, f"--window-size={width},{height}", f"--screenshot={png}", html_file.as_uri()],
                   capture_output=True, timeout=120, check=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chromium", default="chromium", help="the Chromium binary (default: chromium)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "pr-comment.png")
    args = parser.parse_args()
    if shutil.which(args.chromium) is None:
        sys.exit(f"{args.chromium} not found: install Chromium (Debian: apt-get install -y chromium fonts-noto-color-emoji)")
    with tempfile.TemporaryDirectory(prefix="tf-comment-") as tmp:
        work = Path(tmp)
        html_file = work / "comment.html"
        html_file.write_text(page(comment_markdown(work)))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        screenshot(args.chromium, html_file, args.out.resolve())
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
