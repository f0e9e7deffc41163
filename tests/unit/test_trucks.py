"""The iot trucks against TSBS's iot use case: tags, walks, precision, and the batch layer's
dropped, late and blanked entries at TSBS's chances."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ingestbench.tsbs import DatasetParams
from ingestbench.tsbs.columns import DIAGNOSTICS, IOT_TAGS, READINGS
from ingestbench.tsbs.trucks import IOT_CHANCES, MAX_FIELDS, MODELS, BatchLayer, iter_trucks

SCALE, EPOCHS = 200, 60


def tables(params: DatasetParams, chunk: int = 5_000) -> dict[str, pa.Table]:
    chunks = list(iter_trucks(params, chunk))
    return {t: pa.concat_tables([c[t] for c in chunks]) for t in ("readings", "diagnostics")}


@pytest.fixture(scope="module")
def iot() -> dict[str, pa.Table]:
    return tables(DatasetParams(scale=SCALE, epochs=EPOCHS, seed=42, use_case="iot"))


def test_the_same_seed_gives_the_same_rows_for_any_chunk_size(iot):
    params = DatasetParams(scale=SCALE, epochs=EPOCHS, seed=42, use_case="iot")
    again = tables(params, chunk=777)
    assert all(again[t].equals(iot[t]) for t in iot)
    other = tables(DatasetParams(scale=SCALE, epochs=EPOCHS, seed=43, use_case="iot"))
    assert not other["readings"].equals(iot["readings"])


def test_the_schema_is_the_tables(iot):
    for spec in (READINGS, DIAGNOSTICS):
        table = iot[spec.table]
        assert tuple(table.column_names) == spec.columns
        assert table.schema.field("timestamp").type == pa.timestamp("ns", tz="UTC")
    assert iot["diagnostics"].schema.field("status").type == pa.int64()


def test_every_truck_keeps_its_tags_and_its_models_capacities(iot):
    frame = pa.concat_tables(
        [iot[t].select(list(IOT_TAGS)) for t in iot]
    ).to_pandas().astype("object")  # fmt: skip
    whole = frame.dropna()
    per_truck = whole.groupby("name").nunique()
    assert (per_truck == 1).all().all()
    for model, capacities in MODELS.items():
        rows = whole[whole["model"] == model]
        assert len(rows) and set(map(tuple, rows.iloc[:, 5:8].to_numpy())) == {capacities}
    assert whole["name"].nunique() == SCALE


@pytest.mark.parametrize(
    ("table", "field", "low", "high", "decimals"),
    [
        ("readings", "latitude", -90, 90, 5),
        ("readings", "longitude", -180, 180, 5),
        ("readings", "elevation", 0, 5000, 0),
        ("readings", "velocity", 0, 100, 0),
        ("readings", "heading", 0, 360, 0),
        ("readings", "grade", 0, 100, 0),
        ("readings", "fuel_consumption", 0, 50, 1),
        ("diagnostics", "fuel_state", 0, 1, 1),
        ("diagnostics", "current_load", 0, 5000, 0),
        ("diagnostics", "status", 0, 5, 0),
    ],
)
def test_each_field_stays_in_its_range_at_its_precision(iot, table, field, low, high, decimals):
    values = iot[table].column(field).drop_null().to_numpy().astype(float)
    assert values.min() >= low and values.max() <= high
    scaled = values * 10**decimals
    assert np.allclose(scaled, np.round(scaled), atol=1e-6)
    assert len(np.unique(values)) > 1  # a walk, not a constant


def test_timestamps_are_the_epochs_and_each_entry_comes_once(iot):
    params = DatasetParams(scale=SCALE, epochs=EPOCHS, seed=42, use_case="iot")
    for table in iot.values():
        ts = table.column("timestamp").cast(pa.int64()).to_numpy()
        assert ts.min() >= params.start_ns
        assert ts.max() <= params.start_ns + (EPOCHS - 1) * params.interval_ns
        assert not ((ts - params.start_ns) % params.interval_ns).any()
        named = table.filter(table.column("name").is_valid())
        stamps = named.column("timestamp").cast(pa.int64()).to_pylist()
        keys = list(zip(named.column("name").to_pylist(), stamps, strict=True))
        assert len(keys) == len(set(keys))


def _rates() -> dict[str, float]:
    """What TSBS's chances imply. A blanked field or tag is drawn only at a batch position whose
    own entry flag is not `missing` (TSBS keys the two by different indices), so 90 % of
    positions draw; the field index is drawn over 7 and taken modulo the table's field count."""
    c = IOT_CHANCES
    drawn = 1 - c.entry_missing
    return {"field": drawn * c.zero_field, "tag": drawn * c.zero_tag}


def test_null_fields_and_tags_come_at_tsbs_rates(iot):
    rates = _rates()
    n = {t: iot[t].num_rows for t in iot}
    readings = sum(iot["readings"].column(f).null_count for f in READINGS.fields)
    assert readings / n["readings"] == pytest.approx(rates["field"], rel=0.15)
    # Diagnostics: index % 3 over 0..6 blanks fuel_state 3/7 of the time, the others 2/7.
    shares = {f: sum(i % 3 == k for i in range(MAX_FIELDS)) / MAX_FIELDS
              for k, f in enumerate(DIAGNOSTICS.fields)}  # fmt: skip
    for field, share in shares.items():
        rate = iot["diagnostics"].column(field).null_count / n["diagnostics"]
        assert rate == pytest.approx(rates["field"] * share, rel=0.2), field
    tags = sum(iot[t].column(g).null_count for t in iot for g in IOT_TAGS)
    assert tags / sum(n.values()) == pytest.approx(rates["tag"], rel=0.3)


def test_about_a_tenth_of_the_entries_is_dropped(iot):
    points = 2 * SCALE * EPOCHS
    kept = sum(t.num_rows for t in iot.values()) / points
    c = IOT_CHANCES
    expected = (1 - c.batch_missing) * (1 - c.entry_missing)
    assert kept == pytest.approx(expected, abs=0.01)


def test_held_back_entries_and_batches_come_later():
    layer = BatchLayer(200_000, 5)
    points = np.array([p for p, _f, _t in layer.entries()])
    assert len(np.unique(points)) == len(points)  # nothing twice
    late = np.maximum.accumulate(points) > points
    # About a quarter of the positions hold their entry back (0.3 of the 0.9 kept), most of
    # which come back a few positions later; held batches add a few percent.
    assert 0.12 < late.mean() < 0.30
    delay = (np.maximum.accumulate(points) - points)[late]
    assert np.median(delay) < 3 * IOT_CHANCES.batch_size  # close behind, as in TSBS


def test_late_rows_in_time_appear_when_a_delay_crosses_an_epoch():
    """Every truck of an epoch shares its timestamp, so an entry is late in time only when it is
    held back past the other table's block: often with few trucks, rarely with many."""
    few = tables(DatasetParams(scale=20, epochs=300, seed=1, use_case="iot"))
    ts = few["readings"].column("timestamp").cast(pa.int64()).to_numpy()
    assert (ts < np.maximum.accumulate(ts)).mean() > 0.005
