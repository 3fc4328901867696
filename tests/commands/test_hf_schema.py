"""The hf export's columns: derived from the record types, the same in the card and in Parquet, and
a record that outgrows them fails the export rather than a reader."""

from __future__ import annotations

import datetime as dt
from typing import Literal

import pytest

from miner.commands.export import HF_COLUMNS
from miner.commands.hf_schema import TIME, arrow_schema, columns, features, row
from miner.core.records import Record, UtcTime


class Part(Record):
    n: int
    tag: Literal["a", "b"] | None = None


class Whole(Record):
    name: str
    share: float | None
    on: bool
    when: UtcTime
    parts: tuple[Part, ...]
    seen: dict[str, bool]
    words: tuple[str, ...] = ()


class Pair(Record):
    pair: tuple[int, str]  # a fixed-length tuple: no column type


def test_columns_follow_the_record_types() -> None:
    assert columns(Whole) == {
        "name": "string",
        "share": "float64",
        "on": "bool",
        "when": TIME,
        "parts": [{"n": "int64", "tag": "string"}],
        "seen": [{"name": "string", "seen": "bool"}],
        "words": ["string"],
    }
    with pytest.raises(TypeError, match="'pair'"):
        columns(Pair)


def test_rows_hold_mappings_as_pairs_and_refuse_fields_they_do_not_declare() -> None:
    cols = columns(Whole)
    record = Whole(
        name="x", share=None, on=True, when="2021-04-01T10:00:00Z", parts=(Part(n=1),), seen={"b": False, "a": True}
    ).model_dump(mode="json")
    assert row(record, cols) == {**record, "seen": [{"name": "a", "seen": True}, {"name": "b", "seen": False}]}
    parsed = row(record, cols, dt.datetime.fromisoformat)
    assert parsed["when"] == dt.datetime(2021, 4, 1, 10, tzinfo=dt.timezone.utc) and parsed["parts"] == [{"n": 1, "tag": None}]
    with pytest.raises(ValueError, match="extra"):
        row({**record, "extra": 1}, cols)
    with pytest.raises(ValueError, match="columns"):
        row({**record, "parts": [{"n": 1}]}, cols)


def test_the_card_and_the_parquet_schema_declare_the_same_types() -> None:
    import datasets

    for cols in (*HF_COLUMNS.values(), columns(Whole)):
        assert datasets.Features._from_yaml_list(features(cols)).arrow_schema == arrow_schema(cols)
