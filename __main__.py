"""tritonfleet: load and validate the stack config, build the platform, export the outputs."""

import pulumi

from components.platform import Platform
from components.stack_config import read_stack_config

config = read_stack_config()
platform = Platform("tf", config)

pulumi.export("clusterName", platform.cluster_name)
pulumi.export("kubeconfig", platform.kubeconfig)
pulumi.export("modelRepositories", platform.model_repositories)
for key, value in platform.cloud_outputs.items():
    pulumi.export(key, value)
