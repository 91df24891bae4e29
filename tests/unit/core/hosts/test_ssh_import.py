from gpu_companion.core.hosts.ssh_import import scan_ssh_config

CONFIG = """\
# my hosts
Host *
    ServerAliveInterval 30

Host gpu-a
    HostName 203.0.113.7
    Port 40022
    User ubuntu

Host gpu-b box-b
    HostName gpu-b.example.org

Host !bad *.internal
    User x

Host evil
    HostName "a b"

Match host foo
    User bar
"""


def test_scan_lists_real_aliases_and_skips_wildcards(tmp_path):
    path = tmp_path / "config"
    path.write_text(CONFIG)
    found = {c.alias: c for c in scan_ssh_config(path, frozenset({"box-b"}))}
    assert list(found) == ["gpu-a", "gpu-b", "box-b", "evil"]
    a = found["gpu-a"].host
    assert (a.hostname, a.port, a.user) == ("203.0.113.7", 40022, "ubuntu")
    b = found["gpu-b"].host
    assert (b.hostname, b.port, b.user) == ("gpu-b.example.org", 22, "root")
    assert found["box-b"].exists
    assert found["evil"].host is None and "spaces" in found["evil"].problem


def test_missing_config_imports_nothing(tmp_path):
    assert scan_ssh_config(tmp_path / "nope") == []


def test_scanning_never_changes_the_file(tmp_path):
    path = tmp_path / "config"
    path.write_bytes(CONFIG.encode())
    scan_ssh_config(path)
    assert path.read_bytes() == CONFIG.encode()


def test_import_never_runs_match_exec_and_reads_host_equals(tmp_path):
    ran = tmp_path / "ran"
    path = tmp_path / "config"
    path.write_text(
        f'Match exec "touch {ran}-1"\n  User fromexec\n'
        f'Match host gpu-c !exec "touch {ran}-2"\n  Port 2\n'
        f'match=EXEC "touch {ran}-3"\n  Port 3\n'
        f"Match all\n  ServerAliveInterval 30\n"
        "Host=gpu-c\n  HostName 203.0.113.9\n  Port 41022\n"
        f'Match originalhost gpu-c exec "touch {ran}-4"\n  User fromexec\n'
    )
    found = {c.alias: c for c in scan_ssh_config(path)}
    assert [a for a, c in found.items() if c.host] == ["gpu-c"]
    assert [a for a, c in found.items() if not c.host] == [
        f"Match (line {n})" for n in (1, 3, 5, 12)
    ]
    c = found["gpu-c"].host
    assert (c.hostname, c.port, c.user) == ("203.0.113.9", 41022, "root")
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("ran")]  # none ran
