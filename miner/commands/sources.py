"""Which repository of a fixture set each given path is: what audit and export read next to an output."""

from __future__ import annotations

from pathlib import Path

from miner.commands.build import repository_name
from miner.core.errors import RepositoryMismatchError, UnknownRevisionError
from miner.core.output import Manifest
from miner.git import Repo

RepoSpec = Path | tuple[str, Path]  # a path, or (name, path) naming the output's repository it is


def mined_repositories(manifest: Manifest, specs: list[RepoSpec]) -> dict[str, Repo]:
    """Repository name in the manifest -> the --repo that is it (same root commit, holds the mined head).

    A fork mined beside the repository it came from holds the other's head too, so a path can fit
    several entries: a ``(name, path)`` spec chooses one; a bare path takes the one mined at its
    ``HEAD``, else the one of its directory's name, else the first not yet taken. Two specs that are
    one entry are an error rather than one check left out."""
    out: dict[str, Repo] = {}
    given: dict[str, str] = {}
    names = ", ".join(repr(e.name) for e in manifest.repositories) or "none"
    for spec in specs:
        name, path = spec if isinstance(spec, tuple) else (None, Path(spec))
        shown = f"{name}={path}" if name is not None else str(path)
        repo = Repo(path)
        fits = [e for e in manifest.repositories if repo.was_mined_as(e.head, e.identity)]
        if name is not None:
            if not any(e.name == name for e in manifest.repositories):
                raise RepositoryMismatchError(f"--repo {shown}: no repository is named {name!r} in this output ({names})")
            fits = [e for e in fits if e.name == name]
        if not fits and name is not None:
            raise RepositoryMismatchError(
                f"--repo {shown} is not the repository mined as {name!r}; give the one `miner build` read"
            )
        if not fits:
            raise RepositoryMismatchError(
                f"--repo {shown} is none of the repositories mined into this output ({names}); "
                "give the repositories `miner build` read"
            )
        try:
            head: str | None = repo.resolve("HEAD")
        except UnknownRevisionError:
            head = None  # an empty or detached-and-broken HEAD: the other preferences decide
        match = min(fits, key=lambda e: (e.head != head, e.name != repository_name(path), e.name in out))
        if match.name in out:
            raise RepositoryMismatchError(
                f"--repo {shown} and --repo {given[match.name]} are both the repository mined as {match.name!r}; "
                "give each repository once, as NAME=PATH where one holds another's history"
            )
        if match.dropped.get("walk", {}).get("paths_with_missing_objects"):
            # The build read history without the paths whose objects are missing; so must the audit.
            repo.exclude = tuple(repo.paths_with_missing_objects(match.head))
        out[match.name] = repo
        given[match.name] = shown
    return out
