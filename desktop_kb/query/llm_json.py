"""Schema-constrained LLM calls: JSON mode on the generator, then jsonschema validation."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..errors import Cancelled, GenerationError
from ..progress import CancelToken
from ..protocols import ChatMessage, Generator

__all__ = ["ask_json"]


def ask_json(
    generator: Generator, messages: Sequence[ChatMessage], schema: dict[str, Any], *,
    max_tokens: int = 128, cancel: CancelToken | None = None,
) -> dict[str, Any] | None:
    """The model's JSON reply if it parses and validates against ``schema``, else None.
    (llama.cpp's grammar ignores some constraints, e.g. integer bounds, so we always validate.)"""
    import jsonschema

    try:
        raw = generator.chat(messages, max_tokens=max_tokens, temperature=0.0, json_schema=schema, cancel=cancel)
        value = json.loads(raw)
        jsonschema.validate(value, schema)
    except Cancelled:
        raise
    except (ValueError, jsonschema.ValidationError, GenerationError):
        return None  # unparsable, invalid, or cut off at max_tokens: the caller falls back
    return value if isinstance(value, dict) else None
