"""Server processes spectop starts: launching, lifetime, log copies, speculative flags, tiny models."""
