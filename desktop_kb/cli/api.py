"""``desktop-kb serve``, ``desktop-kb api token create|list|revoke`` and ``desktop-kb mcp``: the local
API (:mod:`desktop_kb.api`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..settings import Settings

__all__ = ["register"]


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from ..api.server import make_server
    from ..api.tokens import TokenStore
    from .common import open_library

    with open_library(settings) as lib:
        server = make_server(lib, settings.data_dir, args.host, args.port, allow_remote=args.allow_remote,
                             max_waiting=args.queue)
        if not any(t.active for t in TokenStore(settings.data_dir).list()):
            print("No API token yet: create one with `desktop-kb api token create NAME`.", file=sys.stderr)
        print(f"desktop-kb API on http://{args.host}:{args.port}/v1 (Ctrl-C stops it)", file=sys.stderr)
        server.run()
    return 0


def cmd_token(args: argparse.Namespace, settings: Settings) -> int:
    from ..api.tokens import TokenStore
    from .common import print_json

    store = TokenStore(settings.data_dir)
    if args.token_command == "create":
        info, secret = store.create(args.name)
        if args.json:
            print_json({"id": info.id, "name": info.name, "token": secret})
        else:
            print(f"Token {info.name!r} (id {info.id}) — shown this once, keep it safe:\n{secret}")
    elif args.token_command == "revoke":
        info = store.revoke(args.name)
        print_json({"revoked": info.name, "id": info.id}) if args.json else print(f"Revoked {info.name!r} ({info.id}).")
    else:
        tokens = store.public()
        if args.json:
            print_json(tokens)
        for t in [] if args.json else tokens:
            print(f"{t['id']}  {t['name']:<24} {'active' if t['active'] else 'revoked'}")
    return 0


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    from ..api.mcp_server import build_mcp
    from ..api.service import Service
    from .common import open_library

    with open_library(settings) as lib:
        build_mcp(Service(lib)).run("stdio")
    return 0


def register(sub: Any) -> None:
    from ..api.server import DEFAULT_PORT

    s = sub.add_parser("serve", help="let other programs on this computer ask (OpenAI-compatible HTTP API)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this computer only)")
    s.add_argument("--port", type=int, default=DEFAULT_PORT)
    s.add_argument("--allow-remote", action="store_true", help="allow an address other computers can reach")
    s.add_argument("--queue", type=int, default=4, help="questions that may wait for the model (more get 429)")
    s.set_defaults(func=cmd_serve)
    a = sub.add_parser("api", help="API tokens")
    tok = a.add_subparsers(dest="api_command", required=True).add_parser("token", help="create, list or revoke tokens")
    tsub = tok.add_subparsers(dest="token_command", required=True)
    for name, helptext in (("create", "a new token (shown once)"), ("revoke", "revoke a token by name or id")):
        p = tsub.add_parser(name, help=helptext)
        p.add_argument("name")
        p.add_argument("--json", action="store_true")
    lst = tsub.add_parser("list", help="the tokens (never their secrets)")
    lst.add_argument("--json", action="store_true")
    tok.set_defaults(func=cmd_token)
    m = sub.add_parser("mcp", help="serve search and ask as MCP tools over stdio")
    m.set_defaults(func=cmd_mcp)
