"""What both store backends share."""

from __future__ import annotations

import numpy as np

from ..protocols import ScoredRecord, SearchFilter, SparseVec

__all__ = ["SingleLegSearch"]


class SingleLegSearch:
    """``search_dense`` / ``search_sparse`` as one leg of the backend's ``search_both``."""

    def search_both(
        self, name: str, dense: np.ndarray | None, sparse: SparseVec | None, flt: SearchFilter | None, limit: int
    ) -> tuple[list[ScoredRecord], list[ScoredRecord]]:
        raise NotImplementedError

    def search_dense(self, name: str, vector: np.ndarray, flt: SearchFilter | None, limit: int) -> list[ScoredRecord]:
        return self.search_both(name, vector, None, flt, limit)[0]

    def search_sparse(self, name: str, vector: SparseVec, flt: SearchFilter | None, limit: int) -> list[ScoredRecord]:
        return self.search_both(name, None, vector, flt, limit)[1]
