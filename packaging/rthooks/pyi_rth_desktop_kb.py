# PyInstaller runtime hook for desktop-kb: runs in the frozen app before the entry script.
# - Nothing from the network: the Hugging Face libraries work from local files only
#   (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE; the explicit `models install --online` still works,
#   it flips them for its own duration).
# - The default LLM shipped read-only in <bundle>/models/ is found when the data folder has no copy
#   (desktop_kb.models.registry falls back to desktop_kb.frozen's bundled folder itself).


def _desktop_kb_runtime_setup() -> None:
    from desktop_kb import frozen

    frozen.force_offline_env()


_desktop_kb_runtime_setup()
del _desktop_kb_runtime_setup
