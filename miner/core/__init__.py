"""What every part of miner shares: the typed records the stages pass and the output holds
(``records``), the configuration and its shipped defaults (``config``, ``defaults.yaml``), the
errors (``errors``), the rules that classify commit messages and paths (``classify``), the lexer
that tells code from comments and strings (``lexer``), the reader of a fixture set (``output``),
and the findings a reviewer reports (``findings``)."""
