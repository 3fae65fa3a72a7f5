"""Typed stack configuration: the schema every floor reads, and one error listing every problem.

The package, by concern:
  schema.py     the pydantic models (every key, default and description) and CONFIG_KEYS
  problems.py   Problem, ConfigError and the `pulumi config set/rm` fix commands
  loader.py     load_stack_config: decode the engine's mapping, validate, run the rules, report all at once
  rules/        cross-field rules by area (cluster, pools, buckets, deployments, access, receivers)
Each cloud's own rules sit beside its facts in tritonfleet/clouds/<cloud>/config_rules.py; this package reaches
them by cloud name at call time and never imports tritonfleet.clouds at module load.
"""

from tritonfleet.core.config.loader import load_stack_config
from tritonfleet.core.config.problems import ConfigError, Problem
from tritonfleet.core.config.schema import (
    CONFIG_KEYS,
    Access,
    AlertReceiver,
    Budget,
    Cluster,
    GpuPool,
    ModelBucket,
    Monitoring,
    StackConfig,
    SystemNodes,
    Tls,
    TritonDeployment,
    physical_bucket_name,
)

__all__ = [
    "CONFIG_KEYS",
    "Access",
    "AlertReceiver",
    "Budget",
    "Cluster",
    "ConfigError",
    "GpuPool",
    "ModelBucket",
    "Monitoring",
    "Problem",
    "StackConfig",
    "SystemNodes",
    "Tls",
    "TritonDeployment",
    "load_stack_config",
    "physical_bucket_name",
]
