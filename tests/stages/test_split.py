from __future__ import annotations

import datetime as dt

from miner.core.config import load_config
from miner.stages.split import freshness, repository_split

SPLIT = load_config().split


def test_explicit_heldout_list_wins() -> None:
    config = SPLIT.model_copy(update={"heldout": ["secret"]})
    assert repository_split("secret", "a" * 40, config) == "heldout"
    assert repository_split("public", "a" * 40, config) == "dev"


def test_fraction_is_a_stable_hash_of_identity() -> None:
    config = SPLIT.model_copy(update={"heldout_fraction": 0.5})
    identities = [f"{i:040x}" for i in range(200)]
    first = [repository_split("r", i, config) for i in identities]
    assert first == [repository_split("other-name", i, config) for i in identities]
    assert 60 < first.count("heldout") < 140
    assert all(repository_split("r", i, SPLIT) == "dev" for i in identities)


def test_freshness_uses_utc_dates() -> None:
    config = SPLIT.model_copy(update={"cutoffs": {"model-a": dt.date(2025, 3, 1), "model-b": dt.date(2025, 6, 1)}})
    # 23:30 on 1 March in UTC-5 is 2 March in UTC: after model-a's cutoff.
    landed = dt.datetime(2025, 3, 1, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    assert freshness(landed, config) == {"model-a": True, "model-b": False}
