"""`gpu-companion keys list|generate|rotate|show-public|delete`: the Keys page for scripts.

One SSH key per platform, the private half only in the system keyring (the same KeyVault the page
uses); a public key goes to standard output for piping into a provider's console. A passphrase
is read from standard input only, never from the command line.
Exit codes: 0 done, 1 refused (a key already there, no key yet; nothing changed), 2 usage
(unknown platform, no passphrase on stdin) or the keyring is locked or missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.i18n import _

if TYPE_CHECKING:
    from gpu_companion.core.hosts.registry import Platform
    from gpu_companion.core.ssh.vault import StoredKey
    from gpu_companion.services import Services

USAGE = 2
KINDS = ("ed25519", "rsa")  # what KeyVault.generate makes (rsa: 4096 bits)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "keys",
        help=_("list, generate, rotate and show the per-platform SSH keys"),
        description=_(
            "Manage the SSH key of each platform (the Keys page, scripted). Private "
            "keys live only in the system keyring; public keys are printed for the "
            "provider's console."
        ),
    )
    actions = p.add_subparsers(dest="keys_action", metavar="ACTION", required=True)

    ls = actions.add_parser("list", help=_("every platform and its key (tab-separated)"))
    ls.add_argument("--json", action="store_true", help=_("print JSON for scripts"))

    gen = actions.add_parser(
        "generate", help=_("make a new key for a platform and print its public line")
    )
    gen.add_argument("platform", help=_("the platform's name (any case)"))
    gen.add_argument("--kind", choices=KINDS, default="ed25519", help=_("key type (ed25519)"))
    _passphrase_option(gen)

    rot = actions.add_parser(
        "rotate",
        help=_(
            "replace a platform's key (the old one is kept until forgotten on the Keys "
            "page) and print the new public line"
        ),
    )
    rot.add_argument("platform")
    rot.add_argument("--kind", choices=KINDS, help=_("key type (default: the old key's)"))
    _passphrase_option(rot)

    show = actions.add_parser(
        "show-public", help=_("print the platform's OpenSSH public key line only")
    )
    show.add_argument("platform")

    rm = actions.add_parser("delete", help=_("delete a platform's key from the keyring"))
    rm.add_argument("platform")
    rm.add_argument("--yes", action="store_true", help=_("really delete it"))
    p.set_defaults(handler=run)


def _passphrase_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--passphrase-stdin",
        dest="passphrase_stdin",
        action="store_true",
        help=_(
            "protect the key with a passphrase read from standard input (its first line; "
            "typed twice on a terminal)"
        ),
    )


def _err(text: str) -> None:
    print(_("gpu-companion keys: {text}").format(text=text), file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import run_action

    actions = {
        "list": _list,
        "generate": _generate,
        "rotate": _rotate,
        "show-public": _show_public,
        "delete": _delete,
    }
    return run_action("keys", actions, args.keys_action, args)


def _platform(services: Services, name: str) -> Platform | None:
    from gpu_companion.commands.platforms import find_platform

    return find_platform(services.registry, name, "keys")


def _key_changed(services: Services) -> None:
    """What the page does after every key action: a new or deleted key changes IdentityFile."""
    services.ssh_sync.request()


def _notes(key: StoredKey | None, shared_with: list[str]) -> str:
    """The Notes column of the Keys page."""
    if key is None:
        return _("no key yet: generate or import one")
    notes = []
    if shared_with:
        notes.append(_("same key as {platforms}").format(platforms=", ".join(shared_with)))
    if key.has_previous:
        notes.append(_("old key kept until you forget it"))
    if key.encrypted:
        notes.append(_("passphrase"))
    return "; ".join(notes)


def _list(services: Services, args: argparse.Namespace) -> int:
    if args.json:  # for scripts: the notes in it English, whatever the language
        from gpu_companion.commands.opening import english

        with english():
            return _list_keys(services, args)
    return _list_keys(services, args)


def _list_keys(services: Services, args: argparse.Namespace) -> int:
    vault = services.vault  # reads the store only: the keyring is not touched
    keys = {k.platform: k for k in vault.keys()}
    shared = vault.shared_public_keys()
    rows: list[dict[str, Any]] = []
    for p in services.registry.platforms():
        k = keys.get(p.name)
        others = [n for n in shared.get(k.fingerprint, []) if n != p.name] if k else []
        rows.append(
            {
                "platform": p.name,
                "kind": k.kind if k else None,
                "bits": k.bits if k else None,
                "fingerprint": k.fingerprint if k else None,
                "public_key_path": str(k.public_path) if k else None,
                "created": k.created if k else None,
                "hosts": vault.hosts_using(p.name),
                "encrypted": k.encrypted if k else None,
                "has_previous": k.has_previous if k else None,
                "shared_with": others,
                "notes": _notes(k, others),
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        kind = f"{r['kind']} {r['bits']}" if r["kind"] else "-"
        created = (r["created"] or "-")[:10]
        print(
            f"{r['platform']}\t{kind}\t{r['fingerprint'] or '-'}\t{r['public_key_path'] or '-'}\t"
            f"{created}\t{', '.join(r['hosts']) or '-'}\t{r['notes'] or '-'}"
        )
    if shared:
        groups = "; ".join(
            _("{platforms} share one key").format(platforms=", ".join(n)) for n in shared.values()
        )
        _err(_("warning: {groups}. One leaked key would open all of them: rotate one of them.")
             .format(groups=groups))  # fmt: skip
    return 0


def _read_passphrase(args: argparse.Namespace) -> tuple[bool, str | None]:
    """(go on?, passphrase): None without --passphrase-stdin. Printed the reason when not."""
    if not args.passphrase_stdin:
        return True, None
    if sys.stdin is None:
        _err(_("--passphrase-stdin: standard input is closed."))
        return False, None
    if sys.stdin.isatty():
        import getpass

        first = getpass.getpass(_("Passphrase: "))
        if first != getpass.getpass(_("Repeat passphrase: ")):
            _err(_("The two passphrases differ. Nothing was changed."))
            return False, None
    else:
        first = sys.stdin.readline().rstrip("\r\n")
    if not first:
        _err(_("--passphrase-stdin: no passphrase on standard input (its first line is empty)."))
        return False, None
    return True, first


def _generate(services: Services, args: argparse.Namespace) -> int:
    platform = _platform(services, args.platform)
    if platform is None:
        return USAGE
    go, passphrase = _read_passphrase(args)
    if not go:
        return USAGE
    try:
        stored = services.vault.generate(platform.name, args.kind, passphrase)
    finally:
        _key_changed(services)
    print(stored.public_line)
    print(
        _(
            "New {kind} key for {platform}: {fingerprint}. Paste the public key above (standard "
            "output) into the platform's console."
        ).format(kind=stored.kind, platform=platform.name, fingerprint=stored.fingerprint_line),
        file=sys.stderr,
    )
    return 0


def _rotate(services: Services, args: argparse.Namespace) -> int:
    platform = _platform(services, args.platform)
    if platform is None:
        return USAGE
    go, passphrase = _read_passphrase(args)
    if not go:
        return USAGE
    try:
        result = services.vault.rotate(platform.name, args.kind, passphrase)
    finally:
        _key_changed(services)
    print(result.new.public_line)
    hosts = ", ".join(result.hosts_on_old_key) or _("none")
    print(
        _(
            "New key for {platform} ({new}; was {old}). Hosts still set up with the old key: "
            "{hosts}. Paste the new public key above (standard output) into the platform's "
            "console, or into ~/.ssh/authorized_keys on those hosts; the old key keeps working "
            "here until you click 'Forget old key' on the Keys page."
        ).format(
            platform=platform.name,
            new=result.new.fingerprint,
            old=result.old.fingerprint,
            hosts=hosts,
        ),
        file=sys.stderr,
    )
    return 0


def _require(services: Services, platform: Platform) -> StoredKey | None:
    key = services.vault.key(platform.name)
    if key is None:
        _err(
            _(
                "The platform {name} has no SSH key yet. Generate one: "
                "gpu-companion keys generate {name}"
            ).format(name=repr(platform.name))
        )
    return key


def _show_public(services: Services, args: argparse.Namespace) -> int:
    platform = _platform(services, args.platform)
    if platform is None:
        return USAGE
    key = _require(services, platform)
    if key is None:
        return 1
    try:
        line = key.public_line
    except OSError as exc:
        _err(
            _("Could not read {path}: {problem}. Rotate the key to make a new one.").format(
                path=key.public_path, problem=exc.strerror
            )
        )
        return 1
    print(line)
    return 0


def _delete(services: Services, args: argparse.Namespace) -> int:
    platform = _platform(services, args.platform)
    if platform is None:
        return USAGE
    key = _require(services, platform)
    if key is None:
        return 1
    hosts = services.vault.hosts_using(platform.name)
    if not args.yes:
        if hosts:
            text = _(
                "this deletes the key of {platform} from your keyring. GPU Companion will "
                "no longer reach: {hosts}. Run it again with --yes to delete it."
            )
        else:
            text = _(
                "this deletes the key of {platform} from your keyring. Run it again with "
                "--yes to delete it."
            )
        _err(text.format(platform=platform.name, hosts=", ".join(hosts)))
        return USAGE
    try:
        services.vault.delete(platform.name)
    finally:
        _key_changed(services)
    print(_("The key of {platform} was deleted.").format(platform=platform.name))
    return 0
