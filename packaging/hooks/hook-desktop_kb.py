# desktop_kb: every submodule (the CLI registers sub-commands by name: cli.ask, cli.evaluate, cli.demo;
# backends are imported lazily) and the package data (resources/sample_docs, py.typed).
from PyInstaller.utils.hooks import collect_data_files, collect_submodules

hiddenimports = collect_submodules("desktop_kb")
datas = collect_data_files("desktop_kb")
# Optional backends that would drag torch into the bundle: refused with a clear
# "needs the Python package …" message when selected in a frozen app.
excludedimports = ["torch", "sentence_transformers", "transformers"]
