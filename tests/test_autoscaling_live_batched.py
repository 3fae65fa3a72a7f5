"""The autoscaling proof of tests/test_autoscaling_live.py for the ~1 ms model that takes 4 rows per request (the
signal must count rows, not requests): the same fixture and tests, imported, with this module's CASE."""

from tests.test_autoscaling_live import *  # noqa: F403 - the proof's fixture and tests, collected here again
from tests.test_autoscaling_live import ONE_MS_BATCHED

CASE = ONE_MS_BATCHED
