"""Run by venv-focus's Python: the FinOps Foundation's focus-validator on a FOCUS CSV, read with the specification's
column types. Prints the failed checks (none: "Validation passed") and exits 1 when one failed.

Usage: validate.py EXPORT.csv VERSION [OVERRIDES.yaml]

focus-validator's own CSV loader lets pandas guess the types, so an account id of digits reads as a number and a
quantity of 720 as an integer, failing its string and decimal checks although the file is right; this reads every
column as text and the Decimal columns as numbers, as a typed (Parquet) export carries them, then runs the
validator's rules (the library's own Validator, its rule set for VERSION and its override file).
"""

import os
import sys
from pathlib import Path

import focus_validator
import pandas as pd
from focus_validator.validator import Validator

# FOCUS 1.0's Decimal columns (https://focus.finops.org/focus-specification/v1-0/); the others are strings (the
# date-times as ISO 8601 text, which the validator parses).
DECIMALS = (
    "BilledCost", "ConsumedQuantity", "ContractedCost", "ContractedUnitPrice", "EffectiveCost", "ListCost",
    "ListUnitPrice", "PricingQuantity",
)  # fmt: skip

export, version = Path(sys.argv[1]).resolve(), sys.argv[2]
overrides = str(Path(sys.argv[3]).resolve()) if len(sys.argv) > 3 else None
frame = pd.read_csv(export, dtype=str, keep_default_na=False).replace("", None)
for column in DECIMALS:
    if column in frame:  # a missing one is the validator's to report
        frame[column] = frame[column].astype("float64")
# The currency-code check opens focus_validator/utils/currency_codes.csv relative to the working directory.
os.chdir(Path(focus_validator.__file__).parent.parent)
validator = Validator(str(export), None, "console", rules_version=version, override_filename=overrides)
validator.spec_rules.load()
result = validator.spec_rules.validate(frame)
failed = sorted(name for name, check in result.checklist.items() if check.status.value == "failed")
for name in failed:
    print(f"{name} failed: {result.checklist[name].friendly_name}")
print("Validation failed!" if failed else "Validation passed")
sys.exit(1 if failed else 0)
