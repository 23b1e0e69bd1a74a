"""Requests and their figures: the streaming client, stream parsing, latency, the capture proxy, the server log."""
