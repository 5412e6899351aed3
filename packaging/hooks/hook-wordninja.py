# wordninja (a single module) opens wordninja/wordninja_words.txt.gz beside its own file.
import importlib.util
from pathlib import Path

_spec = importlib.util.find_spec("wordninja")
datas = [(str(Path(_spec.origin).parent / "wordninja" / "wordninja_words.txt.gz"), "wordninja")] if _spec else []
