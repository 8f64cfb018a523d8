"""Metric definitions (one pure function per metric) and the metric-name registry."""
