"""A hostile ~/.ssh/config (a copied snippet, a dotfiles repo) cannot make the import run a
command: every spelling of `Match exec` that OpenSSH itself would run is refused."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_companion.core.hosts.ssh_import import scan_ssh_config, ssh_words, without_match_exec

# Each reproduced on the landed main: the old filter split on whitespace and '=' and missed them.
SPELLINGS = [
    'Match "exec" "touch {ran}"',
    "Match 'exec' 'touch {ran}'",
    'Match ex""ec "touch {ran}"',
    'Match !"exec" "false; touch {ran}"',
    'Match host gpu-c EXEC "touch {ran}"',
    "Match exec=touch\\ {ran}",
    "  match\t'ex'ec \"touch {ran}\"",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_no_spelling_of_match_exec_runs_during_an_import(tmp_path: Path, spelling: str) -> None:
    ran = tmp_path / "ran"
    config = tmp_path / "config"
    config.write_text(
        spelling.format(ran=ran) + "\n  User fromexec\nHost gpu-c\n  HostName 203.0.113.9\n"
    )
    found = scan_ssh_config(config)
    assert not ran.exists()
    assert [c.alias for c in found] == ["Match (line 1)", "gpu-c"]
    assert found[0].host is None and "Match exec" in found[0].problem
    assert found[1].host is not None and found[1].host.user == "root"  # not "fromexec"


@pytest.mark.parametrize("spelling", [SPELLINGS[0], SPELLINGS[3]])
def test_the_spellings_are_real_commands_to_openssh(tmp_path: Path, spelling: str) -> None:
    """The test cases are not straw men: this machine's `ssh -G` (OpenSSH 9.2) runs these; newer
    OpenSSH splits words with argv_split, where single quotes and `ex""ec` are exec too."""
    ran = tmp_path / "ran"
    config = tmp_path / "config"
    config.write_text(spelling.format(ran=ran) + "\n  User fromexec\n")
    subprocess.run(["ssh", "-G", "-F", str(config), "gpu-c"], capture_output=True, timeout=30)
    assert ran.exists()


def test_words_follow_openssh_quoting() -> None:
    assert ssh_words('Match ex""ec "touch a b"') == ["Match", "exec", "touch a b"]
    assert ssh_words("Host 'a b' c # comment") == ["Host", "a b", "c"]
    assert ssh_words('Host a\\ b "x\\"y"') == ["Host", "a b", 'x"y']


lines = st.lists(
    st.text(alphabet=st.sampled_from(list("Mm aAtchexcHos=!\"'\\#\t*?-")), max_size=40),
    max_size=12,
).map("\n".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=lines)
def test_fuzz_the_filter_never_keeps_a_line_openssh_would_run(text: str) -> None:
    """No exception escapes, and every line kept whose words (as OpenSSH splits them) are a
    `Match` with exec in any spelling is impossible."""
    kept, _skipped = without_match_exec(text)
    for line in kept.splitlines():
        try:
            words = ssh_words(line)
        except ValueError:
            continue
        if words and words[0].partition("=")[0].lower() == "match":
            assert not any(w.lstrip("!").partition("=")[0].lower() == "exec" for w in words)


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=2000))
def test_fuzz_scan_never_raises_but_user_errors(text: str) -> None:
    import tempfile

    from gpu_companion.core.common.errors import UserError

    with tempfile.TemporaryDirectory() as d:
        config = Path(d) / "config"
        config.write_text(text, encoding="utf-8", errors="surrogateescape")
        try:
            scan_ssh_config(config)
        except UserError:
            pass


def test_a_large_config_is_read_in_bounded_time(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "".join(f"Host h{i}\n  HostName 10.0.{i // 250}.{i % 250}\n" for i in range(100))
    )
    start = time.process_time()
    found = scan_ssh_config(config)
    assert len(found) == 100
    assert time.process_time() - start < 5  # paramiko's lookup is quadratic in hosts
