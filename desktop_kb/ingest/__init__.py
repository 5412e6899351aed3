"""Adding documents to a knowledge base: the ingest pipeline and what it keeps.

Owns: the pipeline (:mod:`.pipeline`: discover → convert → clean → chunk → embed → write, one file
committed at a time, with crash recovery), each stage's module (:mod:`.discover`, :mod:`.convert`
with :mod:`.pdf`, :mod:`.odf`, :mod:`.images`, :mod:`.ocr`; :mod:`.clean`, :mod:`.chunk`,
:mod:`.embed`, :mod:`.write`), tables of contents (:mod:`.toc`), page spans, tags and owners
(:mod:`.metadata`), the manifest (:mod:`.manifest`), re-embedding (:mod:`.reembed`), folder
watching (:mod:`.watch`) and the data folder's lock (:mod:`.folder_lock`).
May import: ``text`` and the base modules; backends only through :mod:`desktop_kb.protocols`.
"""
