"""AWS (EKS) knowledge, pure: facts (facts.py), the zones a stack uses (zones.py), config rules (config_rules.py) and the
capacity preflight against the EC2 APIs (preflight.py). The Pulumi adapter is components/aws."""
