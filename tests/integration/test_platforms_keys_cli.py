"""`gpu-companion platforms ...` and `keys ...`: a first-time set-up without the window.

Each command runs as a real process (`python -m gpu_companion`) on the harness Secret Service
keyring, the way a user or a script runs it; the keyring and the files are then checked directly.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from tests.harness.keyring_session import KeyringSession
from tests.harness.sshd import ComponentMissing

pytestmark = pytest.mark.keyring


def cli(*argv: str, stdin: str = "", env: dict[str, str] | None = None) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "gpu_companion", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env if env is not None else dict(os.environ),
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def listed(what: str) -> list[dict]:  # type: ignore[type-arg]
    code, out, err = cli(what, "list", "--json")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def keygen_fingerprint(public_line: str) -> str:
    """What ssh-keygen says about a public line (it refuses anything malformed)."""
    out = subprocess.run(
        ["ssh-keygen", "-lf", "-"], input=public_line, capture_output=True, text=True, check=True
    ).stdout
    return out.split()[1]


class Keyring:
    """What the app's keyring entries hold for this data dir (read as the app reads them)."""

    def __init__(self, app_paths, backend) -> None:  # type: ignore[no-untyped-def]
        self.app_paths, self.backend = app_paths, backend

    def _vault(self):  # type: ignore[no-untyped-def]
        from gpu_companion.core.ssh.vault import KeyVault
        from gpu_companion.core.storage.store import Store

        store = Store(self.app_paths.database)
        return store, KeyVault(store, self.app_paths.data_dir / "keys", self.backend)

    def entry(self, platform: str, previous: bool = False) -> str | None:
        store, vault = self._vault()
        try:
            key = vault.key(platform)
            assert key is not None
            name = f"{'previous-' if previous else ''}ssh-key:{key.platform_id}"
            return vault.backend.get_password(vault.service, name)  # type: ignore[no-any-return]
        finally:
            store.close()


def public_of(private_text: str) -> str:
    key = serialization.load_ssh_private_key(private_text.encode(), None)
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )


def private_markers(private_text: str) -> list[bytes]:
    """Byte strings that would betray the private key on disk."""
    key = serialization.load_ssh_private_key(private_text.encode(), None)
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return [b"PRIVATE KEY", raw, raw.hex().encode(), base64.b64encode(raw)[:40]]


def files_holding(roots: list[Path], markers: list[bytes]) -> list[str]:
    hits = []
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                path = Path(dirpath, name)
                if path.is_symlink() or not path.is_file():
                    continue
                data = path.read_bytes()
                hits += [f"{path}: {m[:12]!r}" for m in markers if m in data]
    return hits


def test_first_time_setup_without_the_window(keyring_backend, app_paths, isolated_home) -> None:
    keyring = Keyring(app_paths, keyring_backend)
    roots = [isolated_home, app_paths.data_dir, app_paths.config_dir, app_paths.log_dir]
    assert listed("platforms") == [] and listed("keys") == []

    # before: the host cannot name a platform that does not exist, and says how to add it
    code, _, err = cli("hosts", "add", "gpu1", "ssh4.vast.ai", "--platform", "vast.ai")
    assert code == 2 and "no platform named 'vast.ai' (known: none yet)" in err
    assert "gpu-companion platforms add 'vast.ai'" in err

    code, out, err = cli("platforms", "add", "vast.ai", "--console-url", "https://cloud.vast.ai/")
    assert code == 0 and out == "added vast.ai (billed per second, USD, https://cloud.vast.ai/)\n"
    assert "next: gpu-companion keys generate 'vast.ai'" in err
    code, _, err = cli("keys", "show-public", "vast.ai")
    assert code == 1 and "'vast.ai' has no SSH key yet" in err

    code, generated, err = cli("keys", "generate", "VAST.AI")  # names match in any case
    assert code == 0, err
    assert generated.count("\n") == 1 and generated.startswith("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5")
    assert generated.split()[2].startswith("gpu-companion:vast.ai:")
    code, shown, _ = cli("keys", "show-public", "vast.ai")
    assert code == 0 and shown == generated
    first_fp = keygen_fingerprint(shown)
    assert f"New ed25519 key for vast.ai: 256 {first_fp} " in err

    # the private half is in the keyring, is the half of the key shown, and is on no disk
    first_private = keyring.entry("vast.ai")
    assert first_private and first_private.startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    assert public_of(first_private).split()[:2] == shown.split()[:2]
    assert files_holding(roots, private_markers(first_private)) == []

    [row] = listed("keys")
    assert row["platform"] == "vast.ai" and row["kind"] == "ed25519" and row["bits"] == 256
    assert row["fingerprint"] == first_fp and row["hosts"] == [] and row["encrypted"] is False
    assert Path(row["public_key_path"]).read_text() == shown
    assert listed("platforms")[0]["key_fingerprint"] == first_fp

    code, out, _ = cli("hosts", "add", "gpu1", "ssh4.vast.ai", "--port", "41022",
                       "--platform", "vast.ai")  # fmt: skip
    assert code == 0 and out == "added gpu1 (root@ssh4.vast.ai:41022)\n"
    config = (isolated_home / ".ssh" / "gpu-companion" / "config").read_text()
    assert "Host gpu1\n" in config and "has no key" not in config
    assert "/vast.ai\n" in config.split("IdentityFile ", 1)[1]  # the platform's key, by its stem
    assert listed("keys")[0]["hosts"] == ["gpu1"]
    assert listed("platforms")[0]["hosts"] == ["gpu1"]

    # rotate: a new key, the old one kept in the keyring as the previous, the new line printed
    code, rotated, err = cli("keys", "rotate", "vast.ai")
    assert code == 0, err
    second_fp = keygen_fingerprint(rotated)
    assert second_fp != first_fp and rotated.count("\n") == 1
    assert f"({second_fp}; was {first_fp})" in err
    assert "Hosts still set up with the old key: gpu1." in err
    assert cli("keys", "show-public", "vast.ai")[1] == rotated
    [row] = listed("keys")
    assert row["fingerprint"] == second_fp and row["has_previous"] is True
    assert keyring.entry("vast.ai", previous=True) == first_private
    second_private = keyring.entry("vast.ai")
    assert second_private and public_of(second_private).split()[:2] == rotated.split()[:2]
    assert files_holding(roots, private_markers(second_private)) == []

    # a platform in use stays, with the registry's message
    code, _, err = cli("platforms", "remove", "vast.ai")
    assert code == 1 and "Hosts still belong to this platform: gpu1." in err
    assert "Nothing was changed." in err
    assert [p["name"] for p in listed("platforms")] == ["vast.ai"]

    # without hosts, its key still holds it (a platform added later must not inherit the key)
    assert cli("hosts", "remove", "gpu1")[0] == 0
    code, _, err = cli("platforms", "remove", "vast.ai")
    assert code == 1 and f"still has an SSH key ({second_fp})" in err
    assert "gpu-companion keys delete 'vast.ai' --yes" in err
    code, _, err = cli("keys", "delete", "vast.ai")
    assert code == 2 and "--yes" in err and keyring.entry("vast.ai") == second_private
    code, out, _ = cli("keys", "delete", "vast.ai", "--yes")
    assert code == 0 and out == "The key of vast.ai was deleted.\n"
    assert listed("keys")[0]["fingerprint"] is None
    code, out, _ = cli("platforms", "remove", "VAST.AI")
    assert code == 0 and out == "removed vast.ai\n"
    assert listed("platforms") == [] and listed("keys") == []


def test_platform_fields_are_validated_like_the_hosts_page(app_paths) -> None:
    assert cli("platforms", "add", "vast.ai")[0] == 0
    code, _, err = cli("platforms", "add", "VAST.AI")
    assert code == 1 and "refused (name): A platform named 'VAST.AI' already exists." in err
    code, _, err = cli("platforms", "add", "runpod", "--console-url", "ftp://runpod.io")
    assert code == 1 and "refused (console_url): The console address must start with" in err
    code, _, err = cli("platforms", "add", "runpod", "--granularity", "day")
    assert code == 1 and "Billing granularity must be one of: second, minute, hour." in err
    code, _, err = cli("platforms", "add", "runpod", "--currency", "XYZ")
    assert code == 1 and "Unknown currency 'XYZ'" in err
    assert [p["name"] for p in listed("platforms")] == ["vast.ai"]  # nothing was added

    code, out, _ = cli("platforms", "add", "runpod", "--granularity", "hour", "--currency", "eur")
    assert code == 0 and out == "added runpod (billed per hour, EUR)\n"
    url = "https://runpod.io/console"
    code, out, _ = cli("platforms", "edit", "RunPod", "--name", "RunPod Secure",
                       "--granularity", "minute", "--console-url", url)  # fmt: skip
    assert code == 0 and out == f"saved RunPod Secure (billed per minute, EUR, {url})\n"
    code, _, err = cli("platforms", "edit", "runpod secure", "--name", "Vast.ai")
    assert code == 1 and "already exists" in err
    code, _, err = cli("platforms", "edit", "lambda", "--currency", "USD")
    assert code == 2 and "no platform named 'lambda' (known: RunPod Secure, vast.ai)" in err
    assert cli("platforms", "remove", "lambda")[0] == 2
    rows = {p["name"]: p for p in listed("platforms")}
    assert rows["RunPod Secure"]["billing_granularity"] == "minute"
    assert rows["RunPod Secure"]["console_url"] == url
    assert rows["vast.ai"] == {
        "name": "vast.ai", "console_url": None, "billing_granularity": "second",
        "currency": "USD", "hosts": [], "key_fingerprint": None,
    }  # fmt: skip
    code, out, _ = cli("platforms", "list")
    assert out.splitlines()[0] == f"RunPod Secure\tper minute\tEUR\t{url}\tno hosts\tno key"

    # the spend ledger's rows keep their platform's name
    from gpu_companion.core.storage.store import Store

    store = Store(app_paths.database)
    with store.transaction() as db:
        pid = db.execute("SELECT id FROM platforms WHERE name = 'vast.ai'").fetchone()[0]
        db.table("rentals").insert(
            {"platform_id": pid, "billing_mode": "on_demand", "rate": "1.5", "currency": "USD",
             "granularity": "second", "started_at": "2025-01-15T09:00:00+00:00"}
        )  # fmt: skip
    store.close()
    code, _, err = cli("platforms", "remove", "vast.ai")
    assert code == 1 and "The spend ledger has rentals, charges or budgets on this platform" in err
    code, out, _ = cli("platforms", "remove", "runpod secure")
    assert code == 0 and out == "removed RunPod Secure\n"
    assert [p["name"] for p in listed("platforms")] == ["vast.ai"]


def test_keys_unknown_platform_kinds_and_a_passphrase_from_stdin(
    keyring_backend, app_paths
) -> None:
    from gpu_companion.core.ssh.keys import PassphraseNeeded, parse_private_key

    keyring = Keyring(app_paths, keyring_backend)
    assert cli("platforms", "add", "vast.ai")[0] == 0
    for argv in (("generate", "runpod"), ("rotate", "runpod"), ("show-public", "runpod"),
                 ("delete", "runpod", "--yes")):  # fmt: skip
        code, out, err = cli("keys", *argv)
        assert code == 2 and out == ""
        assert "gpu-companion keys: no platform named 'runpod' (known: vast.ai)" in err
    # the vault would have made the platform for a new name: the command does not
    assert [p["name"] for p in listed("platforms")] == ["vast.ai"]
    code, _, err = cli("keys", "rotate", "vast.ai")
    assert code == 1 and "has no SSH key yet" in err

    # --passphrase-stdin with nothing on stdin is a usage error and changes nothing
    code, _, err = cli("keys", "generate", "vast.ai", "--passphrase-stdin", stdin="\n")
    assert code == 2 and "no passphrase on standard input" in err
    assert listed("keys")[0]["fingerprint"] is None

    code, out, err = cli("keys", "generate", "vast.ai", "--passphrase-stdin",
                         stdin="correct horse\n")  # fmt: skip
    assert code == 0, err
    assert listed("keys")[0]["encrypted"] is True
    secret = keyring.entry("vast.ai")
    assert secret is not None
    with pytest.raises(PassphraseNeeded):
        parse_private_key(secret, None)
    key = parse_private_key(secret, "correct horse")  # the trailing newline is not part of it
    assert keygen_fingerprint(out) == keygen_fingerprint(
        key.public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )
    code, _, err = cli("keys", "generate", "vast.ai")
    assert code == 1 and "'vast.ai' already has a key." in err

    # rsa, for old servers; rotate keeps the kind unless told
    # a host already on the platform gets the new key in the managed ssh config at once
    assert cli("platforms", "add", "cluster")[0] == 0
    assert cli("hosts", "add", "box", "10.0.0.7", "--platform", "cluster")[0] == 0
    config = Path.home() / ".ssh" / "gpu-companion" / "config"
    assert "# this host's platform has no key in GPU Companion yet" in config.read_text()
    code, out, _ = cli("keys", "generate", "cluster", "--kind", "rsa")
    assert code == 0 and out.startswith("ssh-rsa ")
    assert "/cluster\n" in config.read_text().split("IdentityFile ", 1)[1]
    assert cli("hosts", "remove", "box")[0] == 0
    code, out, _ = cli("keys", "rotate", "cluster")
    assert code == 0 and out.startswith("ssh-rsa ")
    rows = {r["platform"]: r for r in listed("keys")}
    assert rows["cluster"]["kind"] == "rsa" and rows["cluster"]["bits"] == 4096
    assert rows["cluster"]["has_previous"] is True and rows["cluster"]["encrypted"] is False
    code, out, _ = cli("keys", "list")
    cluster = next(line for line in out.splitlines() if line.startswith("cluster\t"))
    assert cluster.split("\t")[1:3] == ["rsa 4096", rows["cluster"]["fingerprint"]]
    assert cluster.endswith("\told key kept until you forget it")
    for platform in ("vast.ai", "cluster"):
        assert cli("keys", "delete", platform, "--yes")[0] == 0
        assert cli("keys", "show-public", platform)[0] == 1


@pytest.fixture
def own_keyring(tmp_path, keyring_session):  # type: ignore[no-untyped-def]
    """A gnome-keyring of this test's own (unlocked with "pw"), so the shared one stays usable."""
    session = KeyringSession(tmp_path / "own-keyring", password="pw")
    try:
        session.start()
    except ComponentMissing as exc:
        from tests.conftest import missing_component

        missing_component(str(exc))
    yield session  # start() pointed this process's D-Bus address at it; stop() restores it
    session.stop()


def test_a_locked_or_missing_keyring_is_one_clear_error_line(own_keyring, app_paths) -> None:
    assert cli("platforms", "add", "vast.ai")[0] == 0
    assert cli("platforms", "add", "runpod")[0] == 0
    code, line, _ = cli("keys", "generate", "vast.ai")
    assert code == 0
    before = listed("keys")

    own_keyring.restart_daemon("a wrong password")  # the keyring stays locked
    for argv in (("rotate", "vast.ai"), ("generate", "runpod"), ("delete", "vast.ai", "--yes")):
        code, out, err = cli("keys", *argv)
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and err.startswith("error: Your system keyring is locked.")
        assert "Unlock it" in err
    # nothing changed; what needs only the public half still works
    assert listed("keys") == before
    assert cli("keys", "show-public", "vast.ai")[1] == line
    assert not (app_paths.data_dir / "keys" / "runpod.pub").exists()

    no_bus = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    code, _, err = cli("keys", "generate", "runpod", env=no_bus)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: No system keyring (Secret Service) is available")
    assert "never stored in plain text" in err
    assert listed("keys") == before
