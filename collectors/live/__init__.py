"""Live figures: the rolling energy accounting over polls and meter readings, and the verdicts drawn from it."""
