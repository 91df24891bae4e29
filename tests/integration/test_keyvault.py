"""The key vault against the real Secret Service keyring, ssh-keygen and ssh-agent."""

from __future__ import annotations

import base64
import os
import stat
import subprocess

import pytest
from cryptography.hazmat.primitives import serialization

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.hosts.registry import Host, HostRegistry, Platform
from gpu_companion.core.ssh.keys import PassphraseNeeded

pytestmark = pytest.mark.keyring


def keygen_l(path):
    return subprocess.run(
        ["ssh-keygen", "-lf", str(path)], capture_output=True, text=True, check=True
    ).stdout.strip()


def private_markers(vault, platform):
    """Byte strings that would betray private material of `platform`'s key on disk."""
    key = serialization.load_ssh_private_key(vault.private_text(platform).encode(), None)
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return [b"PRIVATE KEY", raw, raw.hex().encode(), base64.b64encode(raw)[:40]]


def scan(roots, markers):
    hits = []
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                path = os.path.join(dirpath, name)
                if os.path.islink(path):
                    continue
                data = open(path, "rb").read()
                hits += [(path, m[:12]) for m in markers if m in data]
    return hits


def test_generate_keeps_the_private_key_only_in_the_keyring(vault, isolated_home, app_paths):
    stored = vault.generate("vast.ai")
    assert stored.kind == "ed25519"
    assert stored.comment.startswith("gpu-companion:vast.ai:")
    # readable through the keyring only
    secret = vault.backend.get_password(vault.service, f"ssh-key:{stored.platform_id}")
    assert secret.startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    hits = scan(
        [isolated_home, app_paths.data_dir, app_paths.config_dir], private_markers(vault, "vast.ai")
    )
    assert hits == []
    # the public file and fingerprint are what ssh-keygen says
    assert keygen_l(stored.public_path) == stored.fingerprint_line
    assert vault.fingerprint("vast.ai") == stored.fingerprint_line
    assert vault.load_pkey("vast.ai").fingerprint == stored.fingerprint
    assert stored.public_path.read_text().startswith("ssh-ed25519 ")


def test_a_platform_named_in_chinese_gets_a_key_with_an_ascii_comment(vault):
    """恒源云, as a Chinese renter names the platform: the key is made, its public line (pasted
    into the provider's console) is ASCII, and ssh-keygen reads it."""
    stored = vault.generate("恒源云")
    assert stored.comment.startswith("gpu-companion:xn--9kqr64bsmk:")
    assert stored.public_line.isascii() and stored.public_path.read_text().isascii()
    assert keygen_l(stored.public_path) == stored.fingerprint_line


def test_rsa_and_a_passphrase(vault):
    stored = vault.generate("Lambda", kind="rsa", passphrase="correct horse")
    assert (stored.kind, stored.bits, stored.encrypted) == ("rsa", 4096, True)
    assert keygen_l(stored.public_path) == stored.fingerprint_line
    with pytest.raises(PassphraseNeeded):
        vault.load_pkey("Lambda")
    with pytest.raises(PassphraseNeeded, match="wrong"):
        vault.load_pkey("Lambda", "battery staple")
    assert vault.load_pkey("Lambda", "correct horse").get_bits() == 4096


def test_import_an_encrypted_key_made_by_ssh_keygen(vault, tmp_path):
    path = tmp_path / "id_ed25519"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "s3cret", "-C", "me", "-f", str(path)],
        check=True,
    )
    text = path.read_text()
    with pytest.raises(PassphraseNeeded):
        vault.import_private_key("RunPod", text)
    with pytest.raises(PassphraseNeeded):
        vault.import_private_key("RunPod", text, "nope")
    assert vault.key("RunPod") is None  # nothing stored on a failed import
    stored = vault.import_private_key("RunPod", text, "s3cret", new_passphrase="")
    assert not stored.encrypted
    expected = keygen_l(str(path) + ".pub").split()[1]
    assert stored.fingerprint == expected
    assert vault.load_pkey("RunPod").fingerprint == expected


def test_import_refuses_public_keys_and_garbage(vault, tmp_path):
    with pytest.raises(UserError, match="public key"):
        vault.import_private_key("X", "ssh-ed25519 AAAAC3Nza me")
    with pytest.raises(UserError, match="not a private key"):
        vault.import_private_key("X", "hello")
    assert vault.keys() == []


def test_import_a_pem_rsa_key(vault, tmp_path):
    path = tmp_path / "id_rsa"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-m", "PEM", "-N", "", "-f", str(path)],
        check=True,
    )
    assert path.read_text().startswith("-----BEGIN RSA PRIVATE KEY-----")
    stored = vault.import_private_key("uni", path.read_text())
    assert stored.fingerprint == keygen_l(str(path) + ".pub").split()[1]


def test_one_key_per_platform_and_shared_keys_are_reported(vault, tmp_path):
    vault.generate("vast.ai")
    with pytest.raises(UserError, match="already has a key"):
        vault.generate("vast.ai")
    path = tmp_path / "k"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    vault.import_private_key("RunPod", path.read_text())
    vault.import_private_key("Lambda", path.read_text())
    shared = vault.shared_public_keys()
    assert list(shared.values()) == [["Lambda", "RunPod"]]


def test_rotate_lists_the_hosts_and_keeps_the_old_key_until_forgotten(vault, store):
    reg = HostRegistry(store)
    p = reg.save_platform(Platform("vast.ai"))
    reg.save_host(Host("gpu1", "10.0.0.1", platform_id=p.id))
    reg.save_host(Host("gpu2", "10.0.0.2", platform_id=p.id))
    old = vault.generate("vast.ai")
    result = vault.rotate("vast.ai")
    assert result.old.fingerprint == old.fingerprint != result.new.fingerprint
    assert result.hosts_on_old_key == ["gpu1", "gpu2"]
    assert keygen_l(result.new.public_path) == result.new.fingerprint_line
    assert [k.fingerprint for k in vault.load_pkeys("vast.ai")] == [
        result.new.fingerprint,
        old.fingerprint,
    ]
    vault.forget_previous("vast.ai")
    assert [k.fingerprint for k in vault.load_pkeys("vast.ai")] == [result.new.fingerprint]


def test_delete_removes_it_from_the_keyring(vault):
    stored = vault.generate("vast.ai")
    vault.delete("vast.ai")
    assert vault.backend.get_password(vault.service, f"ssh-key:{stored.platform_id}") is None
    assert not stored.public_path.exists()
    assert vault.key("vast.ai") is None


def test_export_is_0600_and_never_overwrites(vault, tmp_path):
    vault.generate("vast.ai")
    out = tmp_path / "exported"
    vault.export_private_key("vast.ai", out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert keygen_l(out).split()[1] == vault.key("vast.ai").fingerprint
    # the scan used above does find private material once it is on disk
    assert scan([tmp_path], private_markers(vault, "vast.ai"))
    with pytest.raises(UserError, match="already exists"):
        vault.export_private_key("vast.ai", out)


def test_load_into_agent_over_stdin(vault, ssh_agent):
    stored = vault.generate("vast.ai", passphrase="pw")
    msg = vault.load_into_agent("vast.ai", lifetime_s=600, passphrase="pw")
    assert "600 s" in msg
    listed = subprocess.run(["ssh-add", "-l"], capture_output=True, text=True, check=True).stdout
    assert stored.fingerprint in listed


def test_load_into_agent_without_an_agent_says_what_to_do(vault, monkeypatch):
    vault.generate("vast.ai")
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    with pytest.raises(UserError, match="No ssh-agent"):
        vault.load_into_agent("vast.ai")
