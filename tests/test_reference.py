"""Pulumi.yaml and the README's configuration reference are generated from the schema and must stay in step."""

from __future__ import annotations

import yaml
from conftest import ROOT

from tritonfleet.core.reference import markdown_reference
from tritonfleet.core.render_pulumi_yaml import render


def test_pulumi_yaml_is_generated_from_the_schema():
    assert (ROOT / "Pulumi.yaml").read_text() == render(), "run: python -m tritonfleet.core.render_pulumi_yaml > Pulumi.yaml"


def test_pulumi_yaml_pins_the_toolchain_and_stack_dir():
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    assert project["name"] == "tritonfleet"
    assert project["runtime"]["options"] == {"toolchain": "pip", "virtualenv": "venv"}
    assert project["stackConfigDir"] == "stacks"
    for key, spec in project["config"].items():
        assert spec["description"], key
        if "type" in spec and key not in ("environment", "cloud", "region", "gpuLimit"):
            assert "default" in spec, f"{key}: a typed key without default is required by the CLI"


def test_readme_has_the_current_configuration_reference():
    assert markdown_reference() in (ROOT / "README.md").read_text()
