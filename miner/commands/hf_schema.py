"""The columns of ``miner export --format hf``, derived from the records (``miner.core.records``) so that
they cannot drift from what a fixture holds.

A dataset loader that is not told a column's type infers it from the first rows it reads: a field that
is null there (``files[].old_path`` before the first renamed file) gets the type null, and the first
string after it fails the whole load. So the export declares every column: as ``features`` in its
dataset card (the ``datasets`` library casts each batch of JSON Lines to them), and as the schema of
each Parquet file.

A column's type (its kind) is a scalar name (``"string"``, ``"int64"``, ``"float64"``, ``"bool"``, or
``TIME`` for a field typed ``UtcTime``), a one-item list (a list of that kind) or a dict (a struct).

Times are declared as times, not text: the JSON reader under ``datasets`` (pyarrow) turns ISO 8601
text into a timestamp before any declared type applies, so a time declared ``string`` would come back
rewritten ("2021-04-01 10:00:00" for "2021-04-01T10:00:00Z"); declared a time, it loads as one from
JSON Lines and Parquet alike.

A mapping such as ``fresh`` (cutoff name -> bool) becomes a list of ``{"name": key, "fresh": value}``:
its keys are the cutoffs a build was configured with (none by default), while a struct needs its names
fixed in advance and at least one of them (Parquet cannot store an empty struct); a list of pairs has
one type whatever the configuration.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from miner.core.records import UTC_TIME

ColumnType = Union[str, list["ColumnType"], dict[str, "ColumnType"]]
TIME = "timestamp[s, tz=UTC]"
_SCALARS: dict[Any, str] = {str: "string", bool: "bool", int: "int64", float: "float64"}


def columns(model: type[BaseModel]) -> dict[str, ColumnType]:
    """The columns of a record: one per field, in the model's order."""
    return {
        name: TIME if UTC_TIME in field.metadata else _kind(field.annotation, name)  # pydantic keeps Annotated's extras apart
        for name, field in model.model_fields.items()
    }


def _kind(annotation: Any, name: str) -> ColumnType:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return TIME if UTC_TIME in args[1:] else _kind(args[0], name)
    if origin in (Union, types.UnionType):
        arms = [a for a in args if a is not type(None)]  # every column may be null
        if len(arms) == 1:
            return _kind(arms[0], name)
    elif origin is Literal and all(isinstance(a, str) for a in args):
        return "string"
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return [_kind(args[0], name)]
    elif origin is dict and args[0] is str:
        return [{"name": "string", name: _kind(args[1], name)}]
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return columns(annotation)
    elif annotation in _SCALARS:
        return _SCALARS[annotation]
    raise TypeError(f"the hf export has no column type for field {name!r} ({annotation!r})")


def row(value: Any, kind: ColumnType, time: Callable[[str], Any] = str) -> Any:
    """A JSON-ready value (as ``model_dump(mode="json")`` gives it) in the shape ``kind`` declares:
    mappings as lists of name/value pairs, times passed through ``time`` (Parquet needs them parsed).
    A struct with other keys than its columns is refused, so a record that outgrew its columns fails
    the export instead of losing a field."""
    if value is None:
        return value
    if isinstance(kind, str):
        return time(value) if kind == TIME else value
    if isinstance(kind, dict):
        if set(value) != set(kind):
            raise ValueError(f"a record's fields {sorted(value)} are not the hf export's columns {sorted(kind)}")
        return {key: row(value[key], sub, time) for key, sub in kind.items()}
    (item,) = kind
    if isinstance(value, dict):  # a mapping: its pairs, in key order like the JSON miner writes
        assert isinstance(item, dict)
        field = next(key for key in item if key != "name")
        return [{"name": key, field: row(v, item[field], time)} for key, v in sorted(value.items())]
    return [row(v, item, time) for v in value]


def features(cols: dict[str, ColumnType]) -> list[dict[str, Any]]:
    """The columns as a dataset card's ``features`` (the YAML form of ``datasets.Features``)."""
    return [{"name": name, **_feature(kind)} for name, kind in cols.items()]


def _feature(kind: ColumnType) -> dict[str, Any]:
    if isinstance(kind, str):
        return {"dtype": kind}
    if isinstance(kind, dict):
        return {"struct": features(kind)}
    inner = _feature(kind[0])
    return {"list": inner.get("struct", inner)}  # a list of structs lists their fields, as datasets writes it


def arrow_schema(cols: dict[str, ColumnType]) -> Any:
    """The columns as a ``pyarrow.Schema`` (pyarrow is imported only here: only Parquet needs it)."""
    import pyarrow as pa

    scalars = {"string": pa.string(), "bool": pa.bool_(), "int64": pa.int64(), "float64": pa.float64()}
    scalars[TIME] = pa.timestamp("s", tz="UTC")

    def arrow(kind: ColumnType) -> Any:
        if isinstance(kind, str):
            return scalars[kind]
        if isinstance(kind, dict):
            return pa.struct([pa.field(name, arrow(sub)) for name, sub in kind.items()])
        return pa.list_(arrow(kind[0]))

    return pa.schema([pa.field(name, arrow(kind)) for name, kind in cols.items()])
