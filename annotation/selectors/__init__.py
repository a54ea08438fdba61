"""Reads: one module per area (projects, annotate, batches, qc). Services own writes."""
