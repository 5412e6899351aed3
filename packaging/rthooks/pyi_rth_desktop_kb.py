# PyInstaller runtime hook for desktop-kb: runs in the frozen app before the entry script.
# - Nothing from the network: the Hugging Face libraries work from local files only
#   (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE; the explicit `models install --online` still works,
#   it flips them for its own duration).
# - The default LLM shipped read-only in <bundle>/models/ is found when the data folder has no copy
#   (desktop_kb.frozen; a no-op once desktop_kb.models.registry calls with_bundled_fallback itself).


def _desktop_kb_runtime_setup() -> None:
    from desktop_kb import frozen

    frozen.force_offline_env()
    frozen.install_registry_fallback()


_desktop_kb_runtime_setup()
del _desktop_kb_runtime_setup
