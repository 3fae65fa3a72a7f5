"""Pull-request diffs of plan documents: resources by URN, replacements and deletions of clusters, node pools and
buckets, GPU and monthly-cost deltas, policy verdict changes; rendered as one bounded Markdown comment per pull request, or JSON.

`compare`, `replacement` and `render` are pure; `base_ref` plans a git ref in a temporary worktree.
"""

from tritonfleet.diff.compare import StackDiff, compare_plans, compare_stack, error_stack
from tritonfleet.diff.documents import DiffInputError, load_plan, load_plans
from tritonfleet.diff.render import COMMENT_LIMIT, COMMENT_NAME, marker, report, to_json

__all__ = [
    "COMMENT_LIMIT",
    "COMMENT_NAME",
    "DiffInputError",
    "StackDiff",
    "compare_plans",
    "compare_stack",
    "error_stack",
    "load_plan",
    "load_plans",
    "marker",
    "report",
    "to_json",
]
