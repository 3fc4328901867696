"""miner: mine git history into bug and clean fixtures for evaluating AI code reviewers."""

__version__ = "0.3.0"
