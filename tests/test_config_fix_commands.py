"""The fixes a configuration problem proposes are commands a shell runs as written: every value, a list or object
included, arrives at `pulumi config set` as one word, and the same fix reads as an edit of the stack file."""

from __future__ import annotations

import json
import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from tritonfleet.core.config.problems import file_edit, set_command

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12).filter(lambda t: " && " not in t),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def test_a_list_value_is_one_shell_word():
    command = set_command("deployments[0].allowedInstanceTypes", ["p5en.48xlarge", "g6e.12xlarge"], "prod")
    words = shlex.split(command)
    assert words == [
        "pulumi", "config", "set", "--path", "tritonfleet:deployments[0].allowedInstanceTypes",
        '["p5en.48xlarge", "g6e.12xlarge"]', "--stack", "prod",
    ]
    assert json.loads(words[5]) == ["p5en.48xlarge", "g6e.12xlarge"]


def test_an_object_value_with_a_quote_is_one_shell_word():
    value = {"note": "it's $HOME; rm -rf *", "n": 2}
    words = shlex.split(set_command("cluster.tags", value, "dev"))
    assert json.loads(words[5]) == value and words[6:] == ["--stack", "dev"]


def test_plain_values_stay_unquoted():
    assert set_command("gpuPools[1].maxNodes", 10, "prod").endswith("'tritonfleet:gpuPools[1].maxNodes' 10 --stack prod")
    assert set_command("region", "eu-west-1", "dev") == "pulumi config set 'tritonfleet:region' eu-west-1 --stack dev"


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES)
def test_any_value_survives_the_shell_and_the_file_edit(value):
    command = set_command("deployments[0].x", value, "dev")
    words = shlex.split(command)
    after_separator = words[-2] == "--" and words[5:7] == ["--stack", "dev"]
    assert len(words) == 9 if after_separator else len(words) == 8 and words[6:] == ["--stack", "dev"]
    sent = words[-1] if after_separator else words[5]
    assert sent == (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    assert file_edit(command) == f"in stacks/Pulumi.dev.yaml, set tritonfleet:deployments[0].x to {sent}"


def test_a_value_spelt_like_a_flag_or_the_stack_is_still_the_value():
    assert file_edit(set_command("name", "dev", "dev")) == "in stacks/Pulumi.dev.yaml, set tritonfleet:name to dev"
    for value in ("--path", -1):
        command = set_command("name", value, "dev")
        assert shlex.split(command)[-2:] == ["--", str(value)]  # after "--", the CLI reads no flag
        assert file_edit(command) == f"in stacks/Pulumi.dev.yaml, set tritonfleet:name to {value}"


def test_several_settings_read_as_one_edit():
    command = " && ".join(set_command(k, v, "prod") for k, v in (("gpuPools[1].onDemandBase", 1), ("gpuPools[1].minNodes", 2)))
    assert file_edit(command) == (
        "in stacks/Pulumi.prod.yaml, set tritonfleet:gpuPools[1].onDemandBase to 1 and tritonfleet:gpuPools[1].minNodes to 2"
    )
    mixed = f"{command} && pulumi config set 'tritonfleet:region' eu-west-1 --stack dev"
    assert file_edit(mixed) is None  # two stack files: no single edit to name


def test_both_ways_adds_the_file_edit_only_to_a_plain_config_change():
    from tritonfleet.core.config.problems import both_ways, rm_command

    assert both_ways(set_command("tritonDeployments[0].modelControlMode", "explicit", "dev")) == (
        "pulumi config set --path 'tritonfleet:tritonDeployments[0].modelControlMode' explicit --stack dev, "
        "or in stacks/Pulumi.dev.yaml, set tritonfleet:tritonDeployments[0].modelControlMode to explicit"
    )
    assert both_ways(rm_command("tags.x", "dev")).endswith(", or in stacks/Pulumi.dev.yaml, delete tritonfleet:tags.x")
    assert both_ways("pulumi config set --secret --path 'tritonfleet:k' <value> --stack dev") == (
        "pulumi config set --secret --path 'tritonfleet:k' <value> --stack dev"
    )
