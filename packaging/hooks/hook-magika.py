# magika (file-type detection used by markitdown): its ONNX model and JSON config live in the package
# (magika/models/<name>/model.onnx, magika/config/*.json); __init__ reads its version from metadata.
from PyInstaller.utils.hooks import collect_data_files, copy_metadata

datas = collect_data_files("magika", excludes=["**/cli/**"]) + copy_metadata("magika")
excludedimports = ["magika.cli"]
