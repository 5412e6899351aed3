# stopwordsiso reads stopwords-iso.json with importlib.resources and its version from metadata.
from PyInstaller.utils.hooks import collect_data_files, copy_metadata

datas = collect_data_files("stopwordsiso") + copy_metadata("stopwordsiso")
