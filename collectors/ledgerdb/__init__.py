"""The energy ledger on disk: joules, tokens and drafting by server, hour and batch level (SQLite)."""
