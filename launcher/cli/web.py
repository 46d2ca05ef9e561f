"""``launcher web tokens`` and ``launcher web revoke ID``: the web panel's paired phones."""

from __future__ import annotations

import argparse
import sys

from launcher.cli.options import verb

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from launcher.web.tokens import TokenStore

HELP = "list or revoke the web panel's tokens (its paired phones)"
_WHERE = ("the token file is web-tokens.json beside the state file: the config's state.path "
          "(/var/lib/launcher on a Pi), or with --simulated the one `launcher run "
          "--simulated` uses ($XDG_STATE_HOME/launcher)")


def register(subparsers: argparse._SubParsersAction) -> None:
    web = verb(subparsers, "web", help=HELP,
               description="The phones paired with the web panel, each by a token (a phone "
               "gets one by pairing on the launcher's button). The file keeps only each "
               "token's SHA-256; a token expires after web.token_days unused. A revoke counts "
               "from the phone's next request, with the service running. " + _WHERE[0].upper()
               + _WHERE[1:] + ".",
               examples=["sudo /opt/launcher/venv/bin/launcher web tokens --config "
                         "/etc/launcher/launcher.toml",
                         "launcher web revoke 3f2a9c1e --simulated"])
    sub = web.add_subparsers(dest="web_command", metavar="ACTION", required=True)
    tokens = verb(sub, "tokens", help="list the tokens: id, made, last used, expires (UTC)",
                  description="List every token that has not expired: its id, when it was "
                  "made and last used, and when it expires unused (UTC). No secret is shown "
                  "(none is kept).",
                  examples=["launcher web tokens --simulated"],
                  exit_status="0 listed (none, too), 1 the token file does not read (every "
                  "token is then refused; the line says why), 2 a bad config value.")
    revoke = verb(sub, "revoke", help="revoke one token by its id",
                  description="Revoke the token ID (`launcher web tokens` lists the ids): the "
                  "phone that holds it is refused from its next request and must pair again.",
                  examples=["launcher web revoke 3f2a9c1e"],
                  exit_status="0 revoked, 1 no such token or the file cannot be written, 2 a "
                  "bad config value.")
    revoke.add_argument("id", metavar="ID")
    for p in (tokens, revoke):
        p.add_argument("--config", metavar="FILE",
                       help="TOML config naming state.path (default: built-in defaults)")
        p.add_argument("--state", metavar="FILE",
                       help="the state file whose folder holds the tokens (default: the "
                            "config's state.path)")
        p.add_argument("--simulated", action="store_true",
                       help="the tokens of `launcher run --simulated` (its state folder)")
    tokens.set_defaults(func=_tokens)
    revoke.set_defaults(func=_revoke)


def _store(args: argparse.Namespace) -> TokenStore:
    from pathlib import Path

    from launcher.core import config
    from launcher.web.tokens import TokenStore, token_path

    settings = config.load(args.config)
    if args.simulated:
        from launcher.cli.paths import simulated_state

        settings = simulated_state(settings, "run-state.json", args.state)
    state = Path(args.state) if args.state else settings.state_path
    # A file that does not read is the verb's one error line (``_tokens``), not a log line.
    return TokenStore(token_path(state), settings.web.token_days, warn=lambda why: None)


def _tokens(args: argparse.Namespace) -> int:
    store = _store(args)
    if store.problem:
        print(f"error: {store.path} {store.problem}: every token is refused (a new pairing "
              "writes it afresh)", file=sys.stderr)
        return 1
    rows = store.rows()
    if not rows:
        print(f"no tokens in {store.path} (a phone gets one by pairing)")
        return 0
    print(f"{'ID':<8}  {'MADE':<16}  {'LAST USED':<16}  EXPIRES")
    for r in rows:
        print(f"{r['id']:<8}  {_utc(r['made'])}  {_utc(r['last_used'])}  {_utc(r['expires'])}")
    return 0


def _revoke(args: argparse.Namespace) -> int:
    from launcher.core.errors import LauncherError

    store = _store(args)
    if not store.revoke(args.id):
        why = f" ({store.path} {store.problem})" if store.problem else ""
        raise LauncherError(f"no token {args.id!r} in {store.path}{why}; "
                            "`launcher web tokens` lists them")
    print(f"revoked {args.id}")
    return 0


def _utc(t: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(t))
