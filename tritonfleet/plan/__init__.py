"""The offline plan: the real program under the mock runtime, recorded into one deterministic document."""
