"""Vector stores: the embedded engine (default, ``edge``) and a Qdrant server by URL (``server``).
The factory (:func:`desktop_kb.library.factory.open_store`) picks one from the settings."""
