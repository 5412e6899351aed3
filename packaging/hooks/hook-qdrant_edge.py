# qdrant-edge-py: one compiled extension (qdrant_edge/qdrant_edge.abi3.so), imported by its
# __init__ with `from .qdrant_edge import *` (found by the analysis); keep the distribution metadata.
from PyInstaller.utils.hooks import copy_metadata

hiddenimports = ["qdrant_edge.qdrant_edge"]
datas = copy_metadata("qdrant-edge-py")
