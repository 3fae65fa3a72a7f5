"""Print Pulumi.yaml from the schema: `python -m tritonfleet.core.render_pulumi_yaml > Pulumi.yaml`."""

import yaml

from tritonfleet.core.reference import project_config_declarations

HEADER = """\
# The tritonfleet Pulumi project. The config block is generated from the schema in tritonfleet/core/config/schema.py
# (python -m tritonfleet.core.render_pulumi_yaml > Pulumi.yaml; a test keeps them in step).
# Stack values live in stacks/Pulumi.<stack>.yaml.
name: tritonfleet
description: GPU inference platforms for NVIDIA Triton Inference Server on EKS and GKE
runtime:
  name: python
  options:
    toolchain: pip        # explicit, so a stray uv.lock or poetry.lock never switches the toolchain
    virtualenv: venv
main: .
stackConfigDir: stacks
config:
"""


def render() -> str:
    body = yaml.safe_dump(project_config_declarations(), sort_keys=False, width=120)
    return HEADER + "".join(f"  {line}\n" for line in body.splitlines())


if __name__ == "__main__":
    print(render(), end="")
