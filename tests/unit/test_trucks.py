"""The TSBS iot generator (ingestbench.tsbs.trucks) against TSBS's iot use case: determinism,
schema, tags, the walks' ranges, steps and precision, and the batch layer's dropped, late and
blanked entries at TSBS's chances.

Where a rate has no simple closed form (rows late in time or in order), the reference is TSBS's
own Go generator (pkg/data/usecases/iot at the mirrored commit, its Simulator run with the same
scale and epochs over many seeds); the port matched it on every rate measured (kept points,
null fields and tags, late rows) within a standard error.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ingestbench.tsbs import DatasetParams
from ingestbench.tsbs.columns import DIAGNOSTICS, IOT_TAGS, READINGS
from ingestbench.tsbs.truck_batches import IOT_CHANCES, MAX_FIELDS, BatchLayer, Chances
from ingestbench.tsbs.truck_fleet import DEVICE_VERSIONS, DRIVERS, FLEETS, MODELS, Trucks
from ingestbench.tsbs.trucks import arrow_schema_for, iter_trucks

SCALE, EPOCHS, SEED = 200, 60, 42
POINTS = 2 * SCALE * EPOCHS
NS = 10**9


def iot_params(scale: int = SCALE, epochs: int = EPOCHS, seed: int = SEED) -> DatasetParams:
    return DatasetParams(scale=scale, epochs=epochs, seed=seed, use_case="iot")


def tables(params: DatasetParams, chunk: int = 5_000) -> dict[str, pa.Table]:
    chunks = list(iter_trucks(params, chunk))
    return {
        s.table: pa.concat_tables([c[s.table] for c in chunks]) for s in (READINGS, DIAGNOSTICS)
    }


@pytest.fixture(scope="module")
def iot() -> dict[str, pa.Table]:
    return tables(iot_params())


def ints(column) -> np.ndarray:
    return column.cast(pa.int64()).to_numpy()


def grid(table: pa.Table, field: str) -> np.ndarray:
    """A field as (truck, epoch) values, NaN where the row is missing or the value or name null."""
    out = np.full((SCALE, EPOCHS), np.nan)
    named = table.filter(table.column("name").is_valid())
    truck = np.array([int(name[6:]) for name in named.column("name").to_pylist()])
    epoch = (ints(named.column("timestamp")) - iot_params().start_ns) // (10 * NS)
    values = named.column(field).to_numpy(zero_copy_only=False).astype(float)
    out[truck, epoch] = values
    return out


# ------------------------------------------------------------------------ determinism, schema


def test_the_same_seed_gives_the_same_rows_for_any_chunk_size(iot):
    for chunk in (1, 777, 10**9):  # one epoch per chunk, a few, all in one
        again = tables(iot_params(), chunk)
        assert all(again[t].equals(iot[t]) for t in iot), chunk
    other = tables(iot_params(seed=SEED + 1))
    assert not other["readings"].equals(iot["readings"])
    assert not other["diagnostics"].equals(iot["diagnostics"])


def test_chunks_cover_whole_epochs_and_progress_counts_every_epoch():
    got: list[int] = []
    chunks = list(iter_trucks(iot_params(), 10 * 2 * SCALE, got.append))
    assert sum(got) == EPOCHS and all(k > 0 for k in got)
    assert len(chunks) == EPOCHS // 10
    assert all(set(c) == {"readings", "diagnostics"} for c in chunks)


def test_the_schema_is_the_tables(iot):
    for spec in (READINGS, DIAGNOSTICS):
        schema = arrow_schema_for(spec)
        assert tuple(schema.names) == spec.columns
        assert iot[spec.table].schema == schema
        for tag in spec.tags:
            assert schema.field(tag).type == pa.dictionary(pa.int32(), pa.string())
            assert schema.field(tag).nullable
        for field, kind in zip(spec.fields, spec.kinds, strict=True):
            assert schema.field(field).type == (pa.int64() if kind == "long" else pa.float64())
            assert schema.field(field).nullable
        ts = schema.field("timestamp")
        assert ts.type == pa.timestamp("ns", tz="UTC") and not ts.nullable
        assert iot[spec.table].column("timestamp").null_count == 0
    assert iot["diagnostics"].schema.field("status").type == pa.int64()


def test_a_tiny_dataset_still_yields_both_tables():
    chunks = list(iter_trucks(iot_params(scale=1, epochs=1)))
    assert len(chunks) == 1 and chunks[0]["readings"].num_rows <= 1
    assert chunks[0]["readings"].schema == arrow_schema_for(READINGS)


# -------------------------------------------------------------------------------- the trucks


def test_every_truck_keeps_its_tags_and_its_models_capacities(iot):
    rows = [r for t in iot.values() for r in t.select(list(IOT_TAGS)).to_pylist()]
    seen: dict[str, dict[str, str]] = {}
    for row in rows:
        name = row["name"]
        if name is None:
            continue
        truck = seen.setdefault(name, {})
        for tag, value in row.items():
            if value is not None:
                assert truck.setdefault(tag, value) == value, (name, tag)
    assert set(seen) == {f"truck_{i}" for i in range(SCALE)}
    for truck in seen.values():
        if {"model", "load_capacity", "fuel_capacity", "nominal_fuel_consumption"} <= set(truck):
            model = MODELS[truck["model"]]
            assert (truck["load_capacity"], truck["fuel_capacity"]) == model[:2]
            assert truck["nominal_fuel_consumption"] == model.nominal_fuel_consumption
    assert {t["fleet"] for t in seen.values()} == set(FLEETS)
    assert {t["driver"] for t in seen.values()} == set(DRIVERS)
    assert {t["device_version"] for t in seen.values()} == set(DEVICE_VERSIONS)
    assert {t["model"] for t in seen.values()} == set(MODELS)
    assert MODELS["F-150"] == ("2000", "200", "15")  # float32 tags as TSBS prints them


@pytest.mark.parametrize(
    ("table", "field", "low", "high", "decimals", "step"),
    [
        ("readings", "latitude", -90, 90, 5, 0.005),
        ("readings", "longitude", -180, 180, 5, 0.005),
        ("readings", "elevation", 0, 5000, 0, 10),
        ("readings", "velocity", 0, 100, 0, 10),
        ("readings", "heading", 0, 360, 0, 5),
        ("readings", "grade", 0, 100, 0, 5),
        ("readings", "fuel_consumption", 0, 50, 1, 5),
        ("diagnostics", "fuel_state", 0, 1, 1, 0.001),
        ("diagnostics", "current_load", 0, 5000, 0, None),
        ("diagnostics", "status", 0, 5, 0, None),
    ],
)
def test_each_field_stays_in_its_range_at_its_precision(
    iot, table, field, low, high, decimals, step
):
    values = iot[table].column(field).drop_null().to_numpy().astype(float)
    assert values.min() >= low and values.max() <= high
    scaled = values * 10**decimals
    assert np.allclose(scaled, np.round(scaled), rtol=0, atol=1e-6)  # TSBS's FP precision
    assert len(np.unique(values)) > 1  # it moves
    if step is not None:  # a clamped walk: an epoch moves it by at most a step (plus the cut)
        moves = np.abs(np.diff(grid(iot[table], field), axis=1))
        moves = moves[~np.isnan(moves)]
        assert moves.max() <= step + 10.0**-decimals + 1e-9
        if 10.0**-decimals < step:
            assert moves.max() > 0.8 * step


def test_epoch_zero_holds_tsbs_start_values(iot):
    for table, field, start in (
        ("readings", "velocity", 0.0),
        ("readings", "grade", 0.0),
        ("readings", "fuel_consumption", 25.0),
        ("diagnostics", "fuel_state", 1.0),
        ("diagnostics", "current_load", 0.0),
        ("diagnostics", "status", 0.0),
    ):
        first = grid(iot[table], field)[:, 0]
        assert set(first[~np.isnan(first)]) == {start}, field
    for field, bound in (
        ("latitude", 90),
        ("longitude", 180),
        ("elevation", 500),
        ("heading", 360),
    ):
        first = grid(iot["readings"], field)[:, 0]
        first = first[~np.isnan(first)]
        assert first.min() >= 0 and first.max() < bound and len(np.unique(first)) > 100


def test_current_load_is_one_shared_value_per_epoch_as_in_tsbs(iot):
    """TSBS's loadUD is one package-level distribution that every truck's lazy distribution
    reads: all trucks report the value the last redraw of the epoch made."""
    loads = grid(iot["diagnostics"], "current_load")
    per_epoch = [np.unique(col[~np.isnan(col)]) for col in loads.T]
    assert all(len(values) == 1 for values in per_epoch)
    values = np.array([v[0] for v in per_epoch])
    assert values[0] == 0 and len(np.unique(values[1:])) > EPOCHS // 2  # 200 trucks: redrawn


def test_fuel_runs_down_and_is_refilled_when_empty():
    trucks = Trucks(5, SEED)
    _readings, diagnostics = trucks.values(6_000)
    fuel = diagnostics[0].reshape(6_000, 5)
    moves = np.diff(fuel, axis=0)
    assert set(np.round(moves, 6).ravel()) <= {0.0, -0.1, 1.0}  # down a tenth, or refilled
    refills = np.argwhere(np.isclose(moves, 1.0))
    assert len(refills) >= 5  # every truck empties in about 2,000 epochs
    assert all(fuel[e, t] == 0.0 for e, t in refills)  # from empty to full


# ---------------------------------------------------------------------------- the batch layer


def expected_dropped(c: Chances = IOT_CHANCES) -> float:
    """The share of base points dropped in the long run. A held batch exists at a config with
    probability pi, where held batches come (out of order, not inserting) as often as they go:
    b_ooo * (1 - b_ins * pi) = b_ins * pi. The configs that build a batch (neither missing nor
    inserting one) take 10 + 10 * e_missing base points and drop the missing ones (held entries
    come back as often as they are held); a missing batch takes and drops 10."""
    pi = c.batch_out_of_order / (c.insert_previous_batch * (1 + c.batch_out_of_order))
    building = (1 - c.batch_missing) * (1 - c.insert_previous_batch * pi)
    dropped = c.batch_missing + building * c.entry_missing
    return dropped / (c.batch_missing + building * (1 + c.entry_missing))


def test_about_a_tenth_of_the_points_is_dropped(iot):
    kept = sum(t.num_rows for t in iot.values()) / POINTS
    assert expected_dropped() == pytest.approx(0.0996, abs=1e-4)
    # TSBS's generator, 200 trucks x 60 epochs, 20 seeds: kept 0.9005, sd 0.0028 per run.
    assert kept == pytest.approx(1 - expected_dropped(), abs=0.012)


def test_null_fields_and_tags_come_at_tsbs_rates(iot):
    """A zeroed field or tag is drawn only at a position whose own missing flag is not set, so
    a 0.9 share of entries draws; the field index is drawn over 7, modulo the table's count."""
    c = IOT_CHANCES
    field_rate = (1 - c.entry_missing) * c.zero_field  # 0.09
    tag_rate = (1 - c.entry_missing) * c.zero_tag  # 0.009
    rows = {t: iot[t].num_rows for t in iot}
    total = sum(rows.values())

    def within(rate: float, expected: float, n: int) -> bool:  # 4 binomial sigmas
        return abs(rate - expected) <= 4 * np.sqrt(expected * (1 - expected) / n) + 1e-3

    null_fields = sum(iot[t].column(f).null_count for t in iot for f in iot[t].column_names[8:-1])
    assert within(null_fields / total, field_rate, total)
    for spec in (READINGS, DIAGNOSTICS):  # index % count: fuel_state takes 0, 3 and 6 of 0..6
        for k, field in enumerate(spec.fields):
            share = sum(i % len(spec.fields) == k for i in range(MAX_FIELDS)) / MAX_FIELDS
            rate = iot[spec.table].column(field).null_count / rows[spec.table]
            assert within(rate, field_rate * share, rows[spec.table]), field
    null_tags = sum(iot[t].column(g).null_count for t in iot for g in IOT_TAGS)
    assert within(null_tags / total, tag_rate, total)
    for spec in (READINGS, DIAGNOSTICS):  # one field and one tag at most per entry
        table = iot[spec.table]
        fields = np.stack([table.column(f).is_null().to_numpy(False) for f in spec.fields])
        tags = np.stack([table.column(g).is_null().to_numpy(False) for g in spec.tags])
        assert fields.sum(axis=0).max() == 1 and tags.sum(axis=0).max() == 1


def test_each_entry_comes_once_within_the_epochs(iot):
    params = iot_params()
    last = params.start_ns + (EPOCHS - 1) * params.interval_ns
    for table in iot.values():
        ts = ints(table.column("timestamp"))
        assert ts.min() >= params.start_ns and ts.max() <= last
        assert not ((ts - params.start_ns) % params.interval_ns).any()
        named = table.filter(table.column("name").is_valid())
        keys = list(zip(named.column("name").to_pylist(), ints(named.column("timestamp")),
                        strict=True))  # fmt: skip
        assert len(keys) == len(set(keys))
    layer = BatchLayer(POINTS, SEED)
    points = layer.run(POINTS)[:, 0]
    assert len(np.unique(points)) == len(points) and points.min() >= 0 and points.max() < POINTS
    assert layer.oldest_held() is None  # everything held back was flushed at the end


def late(values: np.ndarray) -> float:
    """The share of values below the running maximum of the values before them."""
    return float(np.mean(values < np.maximum.accumulate(values)))


def test_rows_come_late_in_order_as_in_tsbs(iot):
    """Late in order: a row after a row of a later base point of its table (key epoch, truck).
    TSBS's generator, 200 trucks x 60 epochs, 20 seeds: 0.187 (sd 0.005 per run) per table."""
    for table in iot.values():
        named = table.filter(table.column("name").is_valid())
        epoch = (ints(named.column("timestamp")) - iot_params().start_ns) // (10 * NS)
        truck = np.array([int(n[6:]) for n in named.column("name").to_pylist()])
        assert late(epoch * SCALE + truck) == pytest.approx(0.187, abs=0.025)


def test_rows_come_late_in_time_when_few_trucks_share_an_epoch():
    """Every truck of an epoch shares its timestamp, so a row is late in time only when it is
    held back past its table's next block of points: 20 trucks x 300 epochs in TSBS's generator,
    40 seeds: 0.024 of each table's rows (sd 0.004 per run); 200 trucks: none."""
    rates = []
    for seed in (1, 2, 3):
        for table in tables(iot_params(scale=20, epochs=300, seed=seed)).values():
            rates.append(late(ints(table.column("timestamp"))))
    assert 0.014 < np.mean(rates) < 0.035
    assert min(rates) > 0.005


def test_held_items_stay_close_behind():
    """Bounded state: held entries and batches come back within a few batches."""
    layer, behind = BatchLayer(2_000_000, SEED), []
    for stop in range(10_000, 2_000_001, 10_000):
        layer.run(stop)
        oldest = layer.oldest_held()
        behind.append(0 if oldest is None else layer.consumed - oldest)
    assert max(behind) < 1_000 and np.mean(behind) < 100


def crafted(total: int, draws: list[float], chances: Chances = IOT_CHANCES) -> np.ndarray:
    """The layer's entries with its first uniforms replaced by `draws` (then 0.9: no event)."""
    layer = BatchLayer(total, 0, chances)
    layer.u = np.full(1 << 12, 0.9)
    layer.u[: len(draws)] = draws
    return layer.run(total)


NOTHING = [0.9] * 4  # a position's missing, zero-field, zero-tag and out-of-order draws


def test_a_late_entry_comes_back_and_the_zero_flags_follow_the_position():
    """TSBS keys missing/out-of-order/insert by i + offset but zero-field/tag by the position i."""
    first = [0.9, 0.9]  # batch: not missing, not out of order (no held batch: no insert draw)
    first += [0.9, 0.05, 0.99, 0.9, 0.1]  # i=0: zero field 6, out of order
    first += [0.05]  # i=1: missing (nothing more drawn)
    first += NOTHING * 8
    second = [0.9, 0.9]  # one entry held: each position draws insert-previous first
    second += [0.1, 0.9, 0.9, 0.005, 0.0, 0.9]  # i=0: insert the held entry, zero tag 0 (name)
    second += NOTHING * 9  # the count drawn against is spent: no more insert draws
    entries = crafted(40, first + second)
    # k=0 (point 0) held, k=1 (point 1) dropped, point 2 placed at i=0 with its zero field.
    assert entries[:, 0].tolist() == [*range(2, 12), 0, *range(12, 40)]
    assert entries[0].tolist() == [2, 6, -1]
    assert entries[10].tolist() == [0, -1, 0]
    assert (entries[np.r_[1:10, 11:39], 1:] == -1).all()


def test_the_end_flushes_held_batches_then_held_entries():
    first = [0.9, 0.01]  # batch out of order: built, then held
    first += [0.9, 0.9, 0.9, 0.1] + NOTHING * 9  # i=0: its entry held
    entries = crafted(20, first)
    # The held batch is points 1..10; then 11..19 (the end cuts the last batch short), then
    # the held batch, then the held entry.
    assert entries[:, 0].tolist() == [*range(11, 20), *range(1, 11), 0]
    assert (entries[:, 1:] == -1).all()


TOTAL = 3_001  # 150 batches of 20 points and one left: more than the buffers start with
EVEN = [p for p in range(TOTAL) if p // 10 % 2 == 0]  # each batch's first ten points
ODD = [p for p in range(TOTAL) if p // 10 % 2 == 1]


@pytest.mark.parametrize(
    ("chances", "expected"),
    [
        (Chances(0, 0, 0, 0, 0, 0, 0, 0), list(range(TOTAL))),
        (Chances(0, 1, 0, 0, 0, 0, 0, 0), list(range(TOTAL))),  # every batch held, flushed
        (Chances(1, 0, 0, 0, 0, 0, 0, 0), []),  # every batch missing
        # Flags exist for k = 0..9 only: a batch drops (or holds) ten points, then takes ten.
        (Chances(0, 0, 0, 1, 0, 0, 0, 0), ODD),
        (Chances(0, 0, 0, 0, 1, 0, 0, 0), ODD + EVEN),  # the held ones flushed at the end
    ],
)
def test_extreme_chances(chances, expected):
    layer = BatchLayer(TOTAL, 7, chances)
    entries = layer.run(TOTAL)
    assert entries[:, 0].tolist() == expected
    assert (entries[:, 1:] == -1).all()
    assert layer.consumed == TOTAL and layer.oldest_held() is None


def test_zero_indices_are_uniform_over_the_most_fields_and_the_tags():
    entries = BatchLayer(100_000, 3, Chances(0, 0, 0, 0, 0, 0, 1, 1)).run(100_000)
    fields = np.bincount(entries[:, 1], minlength=MAX_FIELDS) / len(entries)
    tags = np.bincount(entries[:, 2], minlength=len(IOT_TAGS)) / len(entries)
    assert len(fields) == MAX_FIELDS == 7 and len(tags) == len(IOT_TAGS) == 8
    assert np.allclose(fields, 1 / 7, atol=0.01) and np.allclose(tags, 1 / 8, atol=0.01)
