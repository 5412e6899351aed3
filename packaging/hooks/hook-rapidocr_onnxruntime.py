# RapidOCR reads config.yaml and its PP-OCRv4 ONNX models from its package folder.
from PyInstaller.utils.hooks import collect_data_files

datas = collect_data_files("rapidocr_onnxruntime", includes=["config.yaml", "models/*.onnx", "**/*.yaml"])
