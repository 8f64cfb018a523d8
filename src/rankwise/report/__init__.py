"""Output formats: trec_eval-compatible text, tables, JSON and CSV."""
