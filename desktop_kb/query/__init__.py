"""Answering a question: the query pipeline's stages up to the model's answer.

Owns: the pipeline (:mod:`.pipeline`: search → read → generate → check), the search stage
(:mod:`.search`: :mod:`.rewrite`, :mod:`.translate`, :mod:`.retrieve`, :mod:`.fuse`, :mod:`.scope`,
:mod:`.rerank`, :mod:`.fallback`), the reading stage (:mod:`.read`: :mod:`.evidence`,
:mod:`.sections`), generation (:mod:`.generate`, :mod:`.prompts`, :mod:`.llm_json`) and the warm-up
(:mod:`.warm`).
May import: :mod:`desktop_kb.verify` (the answer check runs last), ``ingest`` (the manifest a
retrieval view reads), ``text`` and the base modules; never ``library``, ``cli``, ``eval`` or ``gui``:
stages take the views, readers and models they need, not the ``Library``.
"""
