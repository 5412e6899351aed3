# fastembed (ONNX embedders/rerankers installed from a folder): reads its own version from metadata.
from PyInstaller.utils.hooks import copy_metadata

datas = copy_metadata("fastembed")
