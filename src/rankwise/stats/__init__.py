"""Paired significance tests, confidence intervals, effect sizes and multiple-comparison corrections."""
