"""Reading a fixture set: the typed manifest, and the fixtures one by one; and the one JSON form
miner writes (``dumps``).

``open_output(path)`` is the one way into what ``miner build`` wrote, for miner's own commands
(explain, refresh, audit, materialize), its scripts, and anyone building on the format::

    from miner import open_output

    fixtures = open_output("fixtures_out")
    for fixture in fixtures:
        print(fixture.id, fixture.kind, fixture.split, fixture.visible.title)
    answer = fixtures["fx-..."].answer

A manifest that does not parse as the schema below is refused with one line naming the file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from miner.core.config import Tier
from miner.core.errors import OutputDirError
from miner.core.records import Answer, CleanQuota, Fixture, Visible

MANIFEST = "manifest.json"


def dumps(data: Any) -> str:
    """The one JSON form miner writes: sorted keys, UTF-8, stable across runs."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


Kind = Literal["bug", "clean"]
Split = Literal["dev", "heldout"]
STAGES = ("walk", "vet", "blame", "bug", "clean", "judge", "write")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Entry(_Model):
    """One fixture in the manifest: where its two files are, and what a split or a filter needs."""

    id: str
    kind: Kind
    split: Split
    repository: str
    family: str
    visible: str  # path of the visible file, relative to the output
    answer: str  # path of the answer file, relative to the output


class JudgeSpend(_Model):
    """What screening a repository's candidates (or the whole set's) with the judge cost: the verdicts
    it relied on, the candidates left without one, and the tokens and retries of those verdicts, as the
    endpoint reported them when they were asked (a rebuild that reuses them costs nothing more)."""

    verdicts: int
    unanswered: int
    unasked: int
    retries: int
    input_tokens: int
    output_tokens: int


class RepositoryReport(_Model):
    """What the build did with one repository: what it walked, kept, and dropped at each stage, why."""

    name: str
    identity: str
    head: str
    head_date: str
    split: Split
    shallow: bool
    commits: int
    fixes: int
    labels_by_tier: dict[str, int]
    fixtures: dict[Kind, int]
    vendored_trees: list[str]
    sizes: dict[Kind, dict[str, float | int]]
    dropped: dict[str, dict[str, int]]
    clean_quota: CleanQuota | None = None  # how the clean sample fared against clean.ratio (older builds: none)
    judge: JudgeSpend | None = None  # a judged build's (``--judge``)


class Window(_Model):
    since: str | None
    until: str | None


class Manifest(_Model):
    """``manifest.json``: how the set was built, its repositories and its fixtures."""

    miner_version: str
    config_hash: str
    min_tier: Tier
    description_mode: Literal["original", "title", "none"]
    seed: int
    window: Window
    cutoffs: dict[str, str]
    fresh: dict[str, dict[str, int]]
    visible_key: str
    repositories: list[RepositoryReport]
    fixtures: list[Entry]
    judge: JudgeSpend | None = None  # a judged build's totals

    def json_text(self) -> str:
        """The manifest as miner writes it (a build without a judge says nothing of one)."""
        data = self.model_dump(mode="json")
        for holder in (data, *data["repositories"]):
            if holder.get("judge") is None:
                holder.pop("judge", None)
        return dumps(data)


class FixtureSet:
    """A fixture set on disk. Iterating it yields every ``Fixture`` (visible part and answer) in
    manifest order; ``fixtures[id]`` finds one; ``answers()`` reads the answers alone."""

    def __init__(self, path: Path, manifest: Manifest) -> None:
        self.path = path
        self.manifest = manifest
        self._entries = {entry.id: entry for entry in manifest.fixtures}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, fixture_id: object) -> bool:
        return fixture_id in self._entries

    def __iter__(self) -> Iterator[Fixture]:
        for entry in self.manifest.fixtures:
            yield self._load(entry)

    def __getitem__(self, fixture_id: str) -> Fixture:
        return self._load(self.entry(fixture_id))

    def require(self, fixture_id: str) -> Fixture:
        """``self[fixture_id]``, or one line for a person naming the way to list the ids."""
        if fixture_id not in self._entries:
            raise OutputDirError(
                f"no fixture {fixture_id!r} in {self.path}; list them with `jq '.fixtures[].id' {self.path / MANIFEST}`"
            )
        return self[fixture_id]

    def entry(self, fixture_id: str) -> Entry:
        """The manifest's entry of one fixture."""
        try:
            return self._entries[fixture_id]
        except KeyError:
            raise KeyError(f"no fixture {fixture_id!r} in {self.path}") from None

    def answer(self, fixture_id: str) -> Answer:
        return self._read(self.entry(fixture_id).answer, Answer)

    def visible(self, fixture_id: str) -> Visible:
        return self._read(self.entry(fixture_id).visible, Visible)

    def answers(self) -> Iterator[Answer]:
        """Every fixture's answer, without reading the visible parts (which carry whole files)."""
        for entry in self.manifest.fixtures:
            yield self._read(entry.answer, Answer)

    def digest(self, part: Literal["visible", "answer"] = "visible") -> str:
        """A digest of every fixture's visible part (what a reviewer was shown), or of the answers: a
        run is scored only on the fixture set it was made on."""
        outer = hashlib.sha256()
        for entry in sorted(self.manifest.fixtures, key=lambda e: e.id):
            inner = hashlib.sha256((self.path / getattr(entry, part)).read_bytes()).hexdigest()
            outer.update(f"{entry.id} {inner}\n".encode())
        return outer.hexdigest()[:16]

    def _load(self, entry: Entry) -> Fixture:
        return Fixture(visible=self._read(entry.visible, Visible), answer=self._read(entry.answer, Answer))

    def _read(self, relative: str, model: type[Answer] | type[Visible]):
        path = self.path / relative
        try:
            return model.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            raise OutputDirError(f"{path} is missing; rebuild the output with `miner build --force`") from None
        except (OSError, ValidationError) as exc:
            raise OutputDirError(f"{path} cannot be read ({_first(exc)}); rebuild with `miner build --force`") from None


def open_output(path: Path | str) -> FixtureSet:
    """The fixture set ``miner build`` wrote at ``path``."""
    path = Path(path)
    try:
        data = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OutputDirError(f"{path} has no {MANIFEST}; give a directory written by `miner build`") from None
    except (OSError, ValueError) as exc:
        raise OutputDirError(f"{path / MANIFEST} cannot be read ({exc}); rebuild with `miner build --force`") from None
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        raise OutputDirError(
            f"{path / MANIFEST} is not a manifest this miner reads ({_first(exc)}); rebuild it with `miner build --force`"
        ) from None
    return FixtureSet(path, manifest)


def _first(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
    return str(exc)
