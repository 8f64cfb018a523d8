"""Ranking metrics over RankedLists: each returns one value per query."""
