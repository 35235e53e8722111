"""Claims: every number in the README rendered from committed evidence (ADR 0016).

`model` reads claims/claims.yaml, `metrics` are the named functions claims compute, `inputs`
hashes what they read, `registration` is pre-registration, `prove` writes claims/evidence/<id>.json
and `readme` renders the README's markers and lints its claims sections.
"""
