"""desktop_kb: answer questions from your own documents, offline, with every claim cited."""

__version__ = "0.1.0"
