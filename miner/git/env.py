"""How miner runs git: a fixed configuration on every command line (no user setting can change what
git prints) and an environment that takes no optional locks, speaks C and never prompts."""

from __future__ import annotations

import os

GIT_CONFIG = [
    "-c",
    "core.quotepath=false",
    "-c",
    "diff.noprefix=false",
    "-c",
    "diff.mnemonicprefix=false",
    "-c",
    "log.showsignature=false",
    "-c",
    "color.ui=never",
    "-c",
    "core.pager=cat",
    "-c",
    "diff.relative=false",
    "-c",
    "log.follow=false",
    # git maps pack files in windows of up to 8 GB in all and caches 96 MB of delta bases: on
    # numpy the history walk reached 360 MB, and 146 MB with these limits, in the same time.
    "-c",
    "core.packedGitWindowSize=16m",
    "-c",
    "core.packedGitLimit=128m",
    "-c",
    "core.deltaBaseCacheLimit=32m",
]


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat"})
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    return env
