"""Text helpers every layer uses: tokenising (CJK and Latin), token budgets, figures and
quantities, common words, document frequencies (:mod:`.term_stats`) and the sentences addressed to
the answering model that are data, never instructions (:mod:`.directives`).
May import: the base modules only.
"""
