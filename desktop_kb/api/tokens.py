"""Bearer tokens for the local API: created, named, listed and revoked by the person (in the app,
or ``desktop-kb api token create|list|revoke``), stored hashed in the data folder.

A token is shown once, when it is created (``dkb_`` and 43 random URL-safe characters); the file
``api-tokens.json`` (mode 0600) holds only its SHA-256, its name, a short id and the times it was
created, last used and revoked. A request's token is checked in constant time against every
unrevoked hash.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["TOKENS_FILE", "TokenInfo", "TokenStore"]

TOKENS_FILE = "api-tokens.json"
PREFIX = "dkb_"
MAX_NAME = 80


@dataclass(frozen=True)
class TokenInfo:
    id: str  # a short public id (the first characters of the hash), to name a token safely
    name: str
    created_at: int
    last_used_at: int = 0
    revoked_at: int = 0

    @property
    def active(self) -> bool:
        return not self.revoked_at


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class TokenStore:
    """The tokens of one data folder. Thread-safe; every change is written whole, then renamed."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / TOKENS_FILE
        self._lock = threading.Lock()

    def _read(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise ConfigError(f"The API token file {self.path} cannot be read: {exc}",
                              "Delete it and create new tokens (`desktop-kb api token create NAME`).") from exc
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(tokens, list):
            raise ConfigError(f"The API token file {self.path} is not valid.",
                              "Delete it and create new tokens (`desktop-kb api token create NAME`).")
        return [t for t in tokens if isinstance(t, dict) and isinstance(t.get("sha256"), str)]

    def _write(self, tokens: list[dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"version": 1, "tokens": tokens}, fh, indent=2)
        os.replace(tmp, self.path)

    @staticmethod
    def _info(t: dict[str, Any]) -> TokenInfo:
        return TokenInfo(str(t.get("id", "")), str(t.get("name", "")), int(t.get("created_at", 0)),
                         int(t.get("last_used_at", 0)), int(t.get("revoked_at", 0)))

    def create(self, name: str) -> tuple[TokenInfo, str]:
        """A new token named ``name``: (its info, the secret — shown this once, never stored)."""
        name = " ".join(str(name).split())
        if not name or len(name) > MAX_NAME:
            raise ConfigError(f"A token's name must be 1 to {MAX_NAME} characters.")
        secret = PREFIX + secrets.token_urlsafe(32)
        digest = _hash(secret)
        with self._lock:
            tokens = self._read()
            if any(t.get("name") == name and not t.get("revoked_at") for t in tokens):
                raise ConfigError(f"A token named {name!r} exists already.", "Revoke it first, or choose another name.")
            entry = {"id": digest[:8], "name": name, "sha256": digest, "created_at": int(time.time())}
            tokens.append(entry)
            self._write(tokens)
        return self._info(entry), secret

    def list(self) -> list[TokenInfo]:
        with self._lock:
            return [self._info(t) for t in self._read()]

    def revoke(self, name_or_id: str) -> TokenInfo:
        with self._lock:
            tokens = self._read()
            hits = [t for t in tokens if not t.get("revoked_at") and name_or_id in (t.get("name"), t.get("id"))]
            if not hits:
                raise ConfigError(f"No active token named {name_or_id!r}.", "`desktop-kb api token list` shows them.")
            for t in hits:
                t["revoked_at"] = int(time.time())
            self._write(tokens)
        return self._info(hits[0])

    def check(self, secret: str | None) -> TokenInfo | None:
        """The active token ``secret`` is, or None (missing, wrong or revoked)."""
        if not secret or not secret.startswith(PREFIX) or len(secret) > 200:
            return None
        digest = _hash(secret)
        with self._lock:
            tokens = self._read()
            found = None
            for t in tokens:  # every entry compared, in constant time
                if hmac.compare_digest(str(t["sha256"]), digest) and not t.get("revoked_at"):
                    found = t
            if found is None:
                return None
            if int(time.time()) - int(found.get("last_used_at", 0)) > 60:  # at most a write a minute
                found["last_used_at"] = int(time.time())
                self._write(tokens)
            return self._info(found)

    def public(self) -> list[dict[str, Any]]:
        return [asdict(t) | {"active": t.active} for t in self.list()]
