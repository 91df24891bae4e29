"""Pasting a provider's ssh command fills host, port and user."""

from __future__ import annotations

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.ssh.command import SshTarget, parse_ssh_command


def test_the_usual_console_line():
    assert parse_ssh_command("ssh -p 41234 root@1.2.3.4") == SshTarget("1.2.3.4", 41234, "root")


def test_forward_after_the_destination_is_an_option_not_a_command():
    t = parse_ssh_command("ssh -p 2222 root@1.2.3.4 -L 8080:localhost:8080")
    assert (t.hostname, t.port, t.user) == ("1.2.3.4", 2222, "root")
    assert t.forwards == ("-L 8080:localhost:8080",)
    assert any("forwards" in n for n in t.notes)


def test_port_and_key_after_the_destination():
    t = parse_ssh_command("ssh root@host -p 22 -i key")
    assert (t.hostname, t.port, t.user, t.identity_file) == ("host", 22, "root", "key")
    assert any("'key'" in n and "platform's own key" in n for n in t.notes)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ssh -p2222 ubuntu@gpu.example.com", ("gpu.example.com", 2222, "ubuntu")),
        ("ssh -vp 2200 me@10.0.0.5", ("10.0.0.5", 2200, "me")),
        ("ssh -l alice -p 30022 region-1.autodl.com", ("region-1.autodl.com", 30022, "alice")),
        ("ssh ssh://bob@h.example:2022", ("h.example", 2022, "bob")),
        ("ssh -o Port=2201 -o User=carol h2", ("h2", 2201, "carol")),
        ("/usr/bin/ssh -tt -p 22 root@[::1]", ("::1", 22, "root")),
        ("$ ssh -p 123 root@9.9.9.9", ("9.9.9.9", 123, "root")),
        ("root@5.6.7.8", ("5.6.7.8", 22, "root")),
        ("ssh h3", ("h3", 22, "root")),
        ("Connect with:\nssh -p 40022 root@ssh4.vast.ai\n", ("ssh4.vast.ai", 40022, "root")),
    ],
)
def test_many_spellings(text, expected):
    t = parse_ssh_command(text)
    assert (t.hostname, t.port, t.user) == expected


def test_the_remote_command_is_ignored_and_said_so():
    t = parse_ssh_command("ssh -p 22 root@h nvidia-smi -L")
    assert t.hostname == "h" and any("nvidia-smi -L" in n for n in t.notes)


def test_jump_host_is_kept():
    assert parse_ssh_command("ssh -J jump@bastion root@10.1.1.1").jump == "jump@bastion"


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ("", "command", "Paste"),
        ("ssh", "command", "no host"),
        ("ssh -p", "command", "-p has no value"),
        ("ssh -p 70000 root@h", "port", "between 1 and 65535"),
        ("ssh -p abc root@h", "port", "not a number"),
        ("ssh -Z root@h", "command", "not an ssh option"),
        ("ssh 'root@h", "command", "cannot be read"),
        ("ssh root@bad;host", "hostname", "must not contain"),
        ("ssh 'ro ot'@h", "user", "spaces"),
        ("ssh 'root@h ProxyCommand=x'", "hostname", "spaces"),
        ("ssh -o ProxyCommand=x 'root@h\nx'", "command", "cannot be read"),
    ],
)
def test_bad_commands_name_the_field(text, field, words):
    with pytest.raises(ValidationError) as info:
        parse_ssh_command(text)
    assert info.value.field == field
    assert words in info.value.message
