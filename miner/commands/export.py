"""``miner export``: a fixture set in the shapes other tools load without glue.

Formats (each written deterministically into ``--to``, which must be new or empty):

- ``jsonl``: ``visible.jsonl`` and ``answers.jsonl``, one line per fixture each.
- ``inspect``: ``samples.jsonl`` with Inspect's own field names (``id``, ``input``, ``target``,
  ``metadata``), loadable by ``inspect_ai.dataset.json_dataset`` with no field mapping; ``target``
  holds the answer (the scorer's side), never ``input``.
- ``hf``: a folder to push to a dataset hub: ``visible`` and ``answers`` as two configurations, each
  split into ``dev`` and ``heldout`` JSON Lines (or Parquet) files, and a dataset card whose YAML header
  names them and declares every column's type (``miner.commands.hf_schema``).
- ``promptfoo``: ``tests.jsonl`` (``vars``: title, description, diff; ``assert``: a Python assertion,
  ``miner_assert.py`` beside it, that scores the output with miner's matching, the answer in the
  assertion's ``config``, never in ``vars``) and a starter ``promptfooconfig.yaml``.
- ``bundle``: git bundles from which ``materialize.sh`` (git alone) rebuilds what ``miner materialize``
  makes of each fixture (needs ``--repo``): each repository's history once, cut at the fixtures'
  bases, and per fixture a thin bundle of its change and the list of history bundles it needs,
  none of them later than it; with ``--squash``, per fixture one bundle of its base tree and change.
  See ``miner.commands.bundle``.

What a model may see (``visible``, ``input``) carries no answer field: not the kind, not a fix, not
a defect line. By default the answers of held-out fixtures are left out (``--with-answers`` puts them
in). Every export carries the fixture set's canary string, in its README and in each record's
metadata, so that a later crawl of it can be recognised.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tempfile
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from miner.commands.bundle import HOW_TO_APPLY, write_bundles
from miner.commands.hf_schema import ColumnType, arrow_schema, columns, features, row
from miner.commands.sources import RepoSpec, mined_repositories
from miner.core.errors import MinerError, TargetDirError
from miner.core.output import FixtureSet, open_output
from miner.core.records import Answer, Fixture, Visible
from miner.stages.write import write_atomic

Format = Literal["jsonl", "inspect", "hf", "promptfoo", "bundle"]
FORMATS: tuple[Format, ...] = ("jsonl", "inspect", "hf", "promptfoo", "bundle")
_CANARY_SPACE = uuid.UUID("6f1d3c1e-52a4-4e0b-9a51-8d6c2f6a2b10")
# The hf export's configurations and their columns: what ``visible_record`` and ``_answer`` write.
HF_COLUMNS: dict[str, dict[str, ColumnType]] = {
    "visible": {**columns(Visible), "repository": "string", "split": "string", "canary": "string"},
    "answers": {**columns(Answer), "canary": "string"},
}


@dataclass(frozen=True)
class Exported:
    to: Path
    fixtures: int
    answers: int  # answers written (held-out ones are left out by default)
    canary: str


def canary(fixtures: FixtureSet) -> str:
    """The fixture set's canary: a fixed GUID derived from what its reviewers are shown."""
    return f"MINER CANARY GUID {uuid.uuid5(_CANARY_SPACE, fixtures.digest())}"


def visible_record(fixture: Fixture, mark: str) -> dict[str, Any]:
    """What a model may see of a fixture: its change, and nothing of the answer."""
    v = fixture.visible
    return {
        "id": v.id,
        "repository": fixture.answer.repository,
        "split": fixture.split,
        "title": v.title,
        "description": v.description,
        "diff": v.diff,
        "files": [f.model_dump(mode="json") for f in v.files],
        "canary": mark,
    }


def prompt(fixture: Fixture) -> str:
    """The text a reviewer model is given: title, description and the diff."""
    v = fixture.visible
    head = f"# {v.title}\n\n" + (v.description.strip() + "\n\n" if v.description.strip() else "")
    return head + "```diff\n" + v.diff.rstrip("\n") + "\n```\n"


@dataclass(frozen=True)
class Selection:
    """Which fixtures an export holds (of a split, landed on or after ``since``), and whose answers go
    with them: ``with_answers`` None (the default) the dev fixtures' only; True all; False none."""

    split: Literal["dev", "heldout", "all"] = "all"
    since: dt.date | None = None
    with_answers: bool | None = None


def export(
    out: Path,
    fmt: Format,
    to: Path,
    select: Selection = Selection(),
    *,
    repo: Path | None = None,
    repos: Iterable[RepoSpec] = (),
    parquet: bool = False,
    squash: bool = False,
) -> Exported:
    """Write the fixtures of ``out`` that ``select`` chooses to ``to`` as ``fmt``.

    A bundle is made from the repository a fixture was mined from: ``repo``, or each of ``repos`` (a
    path, or ``(name, path)`` where one holds another's history), matched as ``miner audit`` matches them."""
    specs: list[RepoSpec] = [*([repo] if repo is not None else []), *repos]
    split, since, with_answers = select.split, select.since, select.with_answers
    if fmt not in FORMATS:
        raise MinerError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    if parquet and fmt != "hf":
        raise MinerError("--parquet is for --format hf")
    if squash and fmt != "bundle":
        raise MinerError("--squash is for --format bundle")
    if parquet:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise MinerError("--parquet needs pyarrow: pip install pyarrow, or export JSON Lines") from None
    if fmt == "bundle" and not specs:
        raise MinerError("--format bundle needs --repo, the repository the fixtures were mined from")
    if to.exists() and (not to.is_dir() or any(to.iterdir())):
        raise TargetDirError(f"--to {to} is not empty; give a new or empty directory")
    fixtures = open_output(out)
    chosen = [
        f
        for f in fixtures
        if (split == "all" or f.split == split) and (since is None or f.answer.head_date[:10] >= since.isoformat())
    ]
    mark = canary(fixtures)
    sources = mined_repositories(fixtures.manifest, specs) if fmt == "bundle" else {}
    lacking = sorted({f.answer.repository for f in chosen} - set(sources)) if fmt == "bundle" else []
    if lacking:
        raise MinerError(
            f"--format bundle needs a --repo for each repository of the fixtures exported; none is given for "
            f"{', '.join(map(repr, lacking))}"
        )
    answered = {f.id for f in chosen if with_answers or (with_answers is None and f.split == "dev")}
    to.parent.mkdir(parents=True, exist_ok=True)  # the staging directory beside --to: one rename puts it in place
    staging = Path(tempfile.mkdtemp(prefix=".miner-export-", dir=to.parent))
    try:
        if fmt == "jsonl":
            _jsonl(staging, chosen, answered, mark)
        elif fmt == "inspect":
            _inspect(staging, chosen, answered, mark)
        elif fmt == "hf":
            _hf(staging, chosen, answered, mark, parquet)
        elif fmt == "promptfoo":
            _promptfoo(staging, chosen, answered, mark)
        else:
            write_bundles(staging, chosen, sources, fixtures.manifest, squash=squash)
        write_atomic(staging / "README.md", _readme(fmt, chosen, answered, mark, out, "parquet" if parquet else "jsonl"))
        if to.exists():
            to.rmdir()
        staging.rename(to)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Exported(to=to, fixtures=len(chosen), answers=len(answered), canary=mark)


def _lines(records: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records)


def _answer(fixture: Fixture, mark: str) -> dict[str, Any]:
    return {**fixture.answer.model_dump(mode="json"), "canary": mark}


def _jsonl(to: Path, chosen: list[Fixture], answered: set[str], mark: str) -> None:
    write_atomic(to / "visible.jsonl", _lines(visible_record(f, mark) for f in chosen))
    write_atomic(to / "answers.jsonl", _lines(_answer(f, mark) for f in chosen if f.id in answered))


def _inspect(to: Path, chosen: list[Fixture], answered: set[str], mark: str) -> None:
    def sample(f: Fixture) -> dict[str, Any]:
        record: dict[str, Any] = {
            "id": f.id,
            "input": prompt(f),
            "metadata": {"repository": f.answer.repository, "split": f.split, "canary": mark},
        }
        if f.id in answered:
            record["target"] = json.dumps(
                {
                    "kind": f.kind,
                    "defects": [
                        {"path": d.path, "line_start": d.line_start, "line_end": d.line_end} for d in f.answer.defects or ()
                    ],
                },
                sort_keys=True,
            )
        return record

    write_atomic(to / "samples.jsonl", _lines(sample(f) for f in chosen))


def _hf(to: Path, chosen: list[Fixture], answered: set[str], mark: str, parquet: bool = False) -> None:
    """A file per configuration and split that has records (a dataset loader refuses an empty split),
    JSON Lines or, with ``parquet``, Parquet; each row in the shape of ``HF_COLUMNS``, which the card
    declares (and a Parquet file's schema holds), so no loader has to guess a type from the first rows."""
    for split in ("dev", "heldout"):
        mine = [f for f in chosen if f.split == split]
        for config, records in (
            ("visible", [visible_record(f, mark) for f in mine]),
            ("answers", [_answer(f, mark) for f in mine if f.id in answered]),
        ):
            if records:
                (to / config).mkdir(exist_ok=True)
                if parquet:
                    import pyarrow as pa
                    import pyarrow.parquet as pq

                    rows = [row(r, HF_COLUMNS[config], dt.datetime.fromisoformat) for r in records]
                    try:
                        table = pa.Table.from_pylist(rows, schema=arrow_schema(HF_COLUMNS[config]))
                        pq.write_table(table, to / config / f"{split}.parquet")
                    except pa.ArrowException as exc:
                        raise MinerError(f"Parquet cannot hold the {config} records ({exc}); export JSON Lines") from None
                else:
                    write_atomic(to / config / f"{split}.jsonl", _lines(row(r, HF_COLUMNS[config]) for r in records))


ASSERTION = '''"""Score a reviewer's output on one miner fixture, for promptfoo (exported by `miner export`).

The output must be miner's findings format: a JSON list of findings, or {"findings": [...]}. A bug
fixture scores the share of its defects matched (one to one, within 3 lines: miner's rule); a clean
fixture passes when no finding of severity warning or worse was raised. Needs miner installed.
"""

from miner.commands.score import Lines, score_output


def get_assert(output, context):
    answer = context["config"]
    defects = [Lines(d["path"], d["line_start"], d["line_end"]) for d in answer["defects"]]
    value, passed, why = score_output(output, answer["kind"], defects)
    return {"pass": passed, "score": value, "reason": why}
'''

PROMPTFOO_CONFIG = """# A starter configuration: give your reviewer as the provider; the prompt asks for miner's findings format.
description: miner code-review fixtures
prompts:
  - |
    Review this change. Answer with a JSON list of findings, each {"path", "line_start", "message", "severity"},
    or [] when there is nothing to say.

    # {{title}}

    {{description}}

    {{diff}}
providers:
  - id: echo   # replace with your reviewer
tests: file://tests.jsonl
"""


def _promptfoo(to: Path, chosen: list[Fixture], answered: set[str], mark: str) -> None:
    def test(f: Fixture) -> dict[str, Any]:
        v = f.visible
        record: dict[str, Any] = {
            "description": f.id,
            "vars": {"title": v.title, "description": v.description, "diff": "```diff\n" + v.diff.rstrip("\n") + "\n```"},
            "metadata": {"fixture_id": f.id, "split": f.split, "canary": mark},
        }
        if f.id in answered:
            record["assert"] = [
                {
                    "type": "python",
                    "value": "file://miner_assert.py",
                    "config": {"kind": f.kind, "defects": [d.model_dump(mode="json") for d in f.answer.defects or ()]},
                }
            ]
        return record

    write_atomic(to / "tests.jsonl", _lines(test(f) for f in chosen))
    write_atomic(to / "miner_assert.py", ASSERTION)
    write_atomic(to / "promptfooconfig.yaml", PROMPTFOO_CONFIG)


def _readme(fmt: Format, chosen: list[Fixture], answered: set[str], mark: str, out: Path, suffix: str = "jsonl") -> str:
    by_split = {s: sum(f.split == s for f in chosen) for s in ("dev", "heldout")}
    header = ""
    if fmt == "hf":
        configs, infos = [], []
        for config in ("visible", "answers"):
            splits = [
                s for s in ("dev", "heldout") if any(f.split == s and (config == "visible" or f.id in answered) for f in chosen)
            ]
            if splits:
                files = [{"split": s, "path": f"{config}/{s}.{suffix}"} for s in splits]
                configs.append({"config_name": config, "data_files": files})
                infos.append({"config_name": config, "features": features(HF_COLUMNS[config])})
        card = {"configs": configs, "dataset_info": infos, "license": "other"}
        header = "---\n" + yaml.safe_dump(card, sort_keys=False, allow_unicode=True) + "---\n\n"
    return (
        header + f"# Code-review fixtures exported by miner ({fmt})\n\n"
        f"{len(chosen)} fixtures ({by_split['dev']} dev, {by_split['heldout']} held out) from `{out.name}`; "
        f"answers for {len(answered)} of them.\n\n"
        "Visible records hold what a reviewer may see of each change; answers are kept apart and must never "
        "be shown to the model under evaluation. Held-out answers are left out unless the export was made "
        "with `--with-answers`.\n\n"
        f"Canary: `{mark}`. Do not train on this data; a model that can reproduce this string has seen it.\n"
        + (HOW_TO_APPLY if fmt == "bundle" else "")
    )
