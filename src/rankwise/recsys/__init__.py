"""Recommender evaluation beyond accuracy: coverage, novelty, popularity bias, diversity,
personalisation, calibration and serendipity of recommendation lists (``beyond_accuracy``),
each metric declared once in ``BEYOND_ACCURACY``."""

from rankwise.recsys.evaluate import BeyondAccuracyResult, beyond_accuracy
from rankwise.recsys.inputs import RecsysData
from rankwise.recsys.metrics import BEYOND_ACCURACY

__all__ = ["BEYOND_ACCURACY", "BeyondAccuracyResult", "RecsysData", "beyond_accuracy"]
