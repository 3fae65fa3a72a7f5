"""The price refresh's parsers and catalog rewrite on recorded vendor responses (tests/data/prices, origin in its
README): the script itself needs credentials and the network and is never run here."""

from __future__ import annotations

import importlib.util
import json
import sys
from datetime import date

import pytest
from conftest import ROOT

from tritonfleet.core.catalog import parse_catalog

DATA = ROOT / "tests" / "data" / "prices"
spec = importlib.util.spec_from_file_location("refresh_prices", ROOT / "scripts" / "refresh_prices.py")
refresh = importlib.util.module_from_spec(spec)
sys.modules["refresh_prices"] = refresh  # dataclasses look their module up
spec.loader.exec_module(refresh)


def catalog_text() -> str:
    return (ROOT / "tritonfleet" / "core" / "catalog.yaml").read_text()


def test_aws_get_products_yields_linux_on_demand_hours_and_the_service_items():
    quotes = refresh.aws_quotes(json.loads((DATA / "aws-get-products-ec2.json").read_text())["PriceList"])
    found = {(q.item, q.region): (q.usd, q.unit, q.sku) for q in quotes}
    assert found == {  # the Windows row and the reserved-only row are skipped
        ("m6i.xlarge", "us-east-1"): (0.192, "Hrs", "4MM5M5Q8AVXTAC5S"),
        ("nat-gateway", "us-east-1"): (0.045, "Hrs", "M2YSHUBETB3JX4M4"),
        ("nat-processing", "us-east-1"): (0.045, "GB", "E5ZNZ8CHH9MDDEPV"),
        ("volume:gp3", "us-east-1"): (0.08, "GB-Mo", "P9XN4AT7HSZBK7K3"),
    }
    assert {q.effective for q in quotes} == {"2026-12-01"}


def test_gcp_skus_yield_the_regions_on_demand_items_and_composed_machine_types():
    quotes = refresh.gcp_quotes([json.loads((DATA / "gcp-skus-compute.json").read_text())], "us-central1")
    found = {q.item: q.usd for q in quotes}
    # e2-standard-4 = 4 x core $0.021811 + 16 GiB x $0.002923; spot and the Frankfurt SKU are not us-central1 on-demand
    assert found == {"volume:pd-balanced": 0.1, "nat-gateway": 0.0014, "nat-processing": 0.045, "e2-standard-4": 0.134012}
    assert refresh.gcp_quotes([json.loads((DATA / "gcp-skus-compute.json").read_text())], "europe-west3")[0].usd == 0.12


def test_the_rewrite_sets_price_sku_and_dated_source_and_the_catalog_still_loads():
    quotes = refresh.aws_quotes(json.loads((DATA / "aws-get-products-ec2.json").read_text())["PriceList"])
    quotes = [q if q.item != "nat-gateway" else refresh.Quote(**{**q.__dict__, "usd": 0.048}) for q in quotes]
    text, changes = refresh.apply_quotes(catalog_text(), quotes, date(2026, 12, 6))
    assert "aws nat-gateway us-east-1: 0.045 -> 0.048 (M2YSHUBETB3JX4M4)" in changes
    catalog = parse_catalog(text)
    nat = catalog.service_price("aws", "nat-gateway", "us-east-1")
    assert (nat.usd, nat.source, nat.sku, nat.verify) == (0.048, "AWSPRICELIST", "M2YSHUBETB3JX4M4", False)
    assert str(catalog.sources["AWSPRICELIST"].as_of) == "2026-12-06"
    # refreshed twice: the source's date moves, nothing is duplicated
    again, _ = refresh.apply_quotes(text, quotes, date(2026, 12, 7))
    assert str(parse_catalog(again).sources["AWSPRICELIST"].as_of) == "2026-12-07"


def test_a_quote_for_a_region_the_catalog_has_no_row_for_changes_nothing():
    quote = refresh.Quote("aws", "nat-gateway", "eu-west-1", 0.048, "Hrs", "X", "2026-12-01")
    text, changes = refresh.apply_quotes(catalog_text(), [quote], date(2026, 12, 6))
    assert (text, changes) == (catalog_text(), [])


@pytest.mark.parametrize("broken", [{"PriceList": ["{}"]}, {"PriceList": [json.dumps({"product": {}, "terms": {"OnDemand": {}}})]}])
def test_incomplete_products_are_skipped_not_guessed(broken):
    assert refresh.aws_quotes(broken["PriceList"]) == []
