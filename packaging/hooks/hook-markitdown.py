# markitdown: converters import their optional libraries inside try/except (mammoth, pptx,
# openpyxl/pandas, xlrd, pdfminer, bs4 …); make sure those used by desktop-kb's formats are analysed,
# and keep the metadata (entry points are read for plugins, which desktop-kb disables).
from PyInstaller.utils.hooks import collect_submodules, copy_metadata

hiddenimports = collect_submodules("markitdown.converters") + collect_submodules("markitdown.converter_utils") + [
    "mammoth", "pptx", "openpyxl", "xlrd", "pandas", "pdfminer.high_level", "bs4", "markdownify",
    "charset_normalizer", "defusedxml", "olefile",
]
datas = copy_metadata("markitdown")
# Cloud / media converters desktop-kb never uses offline.
excludedimports = ["azure", "youtube_transcript_api", "speech_recognition", "pydub", "openai"]
