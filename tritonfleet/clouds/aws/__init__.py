"""AWS (EKS) knowledge, pure: its Cloud (cloud.py), facts (facts.py), the zones a stack uses (zones.py), config rules
(config_rules.py), the decisions the adapter turns into resources (layout.py, node_pools.py, iam_policies.py,
karpenter_*.py, exposure.py, cluster_access.py), the bill and the capacity preflight against the EC2 APIs
(preflight.py). The Pulumi adapter is components/aws; it imports this package, never the reverse."""
