"""How a build runs its expensive stages: ``engine`` sends tasks to an executor (inline, a process
pool, or Dask) and merges their results in a fixed order; ``cache`` keeps what was mined in the
output, so a rebuild mines only what is new and an interrupted build resumes."""
