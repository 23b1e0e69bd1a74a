"""Export: the Prometheus exporter, its series, and the stable JSON forms of spectop's objects."""
