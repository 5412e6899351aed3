# qdrant-client (Qdrant server by URL): reads its version from metadata for the server check.
from PyInstaller.utils.hooks import copy_metadata

datas = copy_metadata("qdrant-client")
# Optional fastembed integration is imported lazily by qdrant-client; desktop-kb uses it directly.
