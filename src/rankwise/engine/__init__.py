"""The engine: segmented arrays, alignment of a run with qrels, ideal orderings."""

from rankwise.engine.align import QrelsIndex, align
from rankwise.engine.conventions import Conventions
from rankwise.engine.ranked import RankedLists

__all__ = ["Conventions", "QrelsIndex", "RankedLists", "align"]
