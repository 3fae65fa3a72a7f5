"""What the Pulumi CLI runs (`python -m pulumi.policy ADDRESS policies`): build the pack and serve it.

Constructing a PolicyPack starts the analyzer's gRPC server, prints its port and blocks forever, so nothing but this
file constructs one; tests and the offline runner import `policies.registry` instead.
"""

import sys
from pathlib import Path

# The pack reuses the repository's pure core (catalog, cost model, conventions) rather than a copy of it.
REPOSITORY = str(Path(__file__).resolve().parents[1])
if REPOSITORY not in sys.path:
    sys.path.insert(0, REPOSITORY)

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policies.registry import ALL_POLICIES, PACK_DESCRIPTION, PACK_NAME  # noqa: E402

if __name__ == "__main__":
    PolicyPack(
        name=PACK_NAME,
        policies=ALL_POLICIES,
        enforcement_level=EnforcementLevel.ADVISORY,  # each policy sets its own level; this covers none
        description=PACK_DESCRIPTION,
    )
