# jieba (fallback Chinese segmenter when rjieba is unavailable). Overrides the contrib hook, which
# collects every data file: keep the dictionaries and HMM/IDF tables, drop lac_small (the 13 MB
# PaddlePaddle model for paddle mode, which needs paddle and is never used).
from PyInstaller.utils.hooks import collect_data_files

datas = collect_data_files("jieba", excludes=["lac_small/**", "**/lac_small/**"])
excludedimports = ["paddle", "jieba.lac_small"]
