"""PyTorch: ``sync`` a streaming metric's state across ranks with one collective (extra ``torch``).

``from rankwise.torch import sync``; see :mod:`rankwise.torch.sync`.
"""

from __future__ import annotations

from rankwise.torch.sync import STATE_REDUCTIONS, sync, sync_plan

__all__ = ["STATE_REDUCTIONS", "sync", "sync_plan"]
