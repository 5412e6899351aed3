"""Settings for tests that use the real shipped models."""

from __future__ import annotations

from pathlib import Path

from desktop_kb.settings import Settings


def real_settings_for(data_dir: Path, llm_path: Path) -> Settings:
    """A fresh data folder with the real default models (e5-small on its default runtime, shipped LLM, no reranker)."""
    import dataclasses

    settings = Settings(data_dir=data_dir)
    llm = dataclasses.replace(settings.models.llm, path=str(llm_path))
    return settings.replace(models=dataclasses.replace(settings.models, llm=llm))
