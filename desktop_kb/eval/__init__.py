"""Measuring quality on public data (``desktop-kb eval`` and ``benchmarks/``): BEIR retrieval
(:mod:`.retrieval`, :mod:`.metrics`), answers on QA sets with unanswerables (:mod:`.answers`), the
answer check on given claims (:mod:`.claims`, the set built by :mod:`.faithfulness`), injected
instructions (:mod:`.injection`) and the knowledge-base probe (:mod:`.probe`). Scores come from gold
data (answer spans, context ids), never from the validator that gates answers.
May import: :mod:`desktop_kb.query`, :mod:`desktop_kb.verify` and everything below them; it is given
a ``Library``, never imports one.
"""
