"""Energy accounting: the ledger's equations, per-request attribution, live windows, verdicts."""
