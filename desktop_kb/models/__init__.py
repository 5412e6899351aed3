"""Models on disk: what is installed where (:mod:`.registry`), installing from a folder, a file or
the shipped packages (:mod:`.install`, :mod:`.assemble`, :mod:`.e5_onnx`), and telling a model's
kind from its files (:mod:`.detect`).
May import: ``backends`` (to load and check a model) and the base modules.
"""
