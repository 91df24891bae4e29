"""Away means away, end to end: `gpu-companion watch` runs as a real process over the harness
(real sshd hosts, the nvidia-smi stand-in), with a running rental that has crossed its budget
and whose GPUs are idle. A local server that answers like ntfy and a local SMTP server
(aiosmtpd, with a login whose password is in the keyring) each receive exactly one budget alert
naming the host, its rate and its cost so far, and the idle auto-release countdown; a channel
that refuses is retried and reported while the others deliver. The channels are set up through
the CLI, as a user would; the secrets travel only through the keyring."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from gpu_companion.cli import main
from tests.harness.fake_notify import FakeNotify, FakeSmtp
from tests.harness.util import wait_for

pytestmark = [pytest.mark.sshd, pytest.mark.keyring]

TOKEN = "tk_watchtest0123456789abcdef0"


def _cli(monkeypatch, *argv: str, stdin: str = "") -> int:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    return main(list(argv))


def _mail_texts(smtp: FakeSmtp) -> list[str]:
    out = []
    for m in smtp.messages:
        body = m.get_body(("plain",)) if hasattr(m, "get_body") else None
        text = body.get_content() if body is not None else m.get_payload(decode=True).decode()
        out.append(f"{m['Subject']}\n{text}")
    return out


def test_watch_sends_the_budget_alert_and_the_countdown_to_the_phone_and_the_mailbox(
    fleet, standin, monkeypatch, tmp_path
):
    from gpu_companion.core.autorelease.policy import Policy
    from gpu_companion.core.autorelease.service import save_policy

    s = fleet.services
    host = s.registry.host("box-a")
    s.ledger.start_rental(host.platform_id, "2.40", host_id=host.id,
                          started_at=datetime.now(timezone.utc) - timedelta(hours=1))  # fmt: skip
    s.budgets.set_budget("day", Decimal("1.00"), "USD")  # the rental has spent $2.40 of it
    save_policy(s.store, host.id, Policy(idle_minutes=1, notice_minutes=30))
    standin.configure(util="idle")  # 0 %, 70 W of 700 W

    with FakeNotify() as ntfy, FakeSmtp(mode="plain") as smtp, FakeNotify() as broken:
        ntfy.tokens["gpu-alerts"] = TOKEN
        broken.fail_next(500, times=1000)  # a webhook whose server errs all along
        assert _cli(monkeypatch, "notify", "add", "ntfy", "--server", ntfy.url, "--topic",
                    "gpu-alerts", "--token-stdin", stdin=TOKEN + "\n") == 0  # fmt: skip
        assert _cli(monkeypatch, "notify", "add", "email", "--host", "127.0.0.1", "--port",
                    str(smtp.port), "--security", "none", "--user", smtp.user,
                    "--password-stdin", "--from", "companion@example.com", "--to",
                    "me@example.com", stdin=smtp.password + "\n") == 0  # fmt: skip
        assert _cli(monkeypatch, "notify", "add", "webhook", "--url", broken.url + "/hook",
                    "--format", "json") == 0  # fmt: skip
        env = dict(os.environ)
        env.pop("SSH_AUTH_SOCK", None)
        watch = subprocess.Popen(
            [sys.executable, "-m", "gpu_companion", "watch", "--every", "2"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        )  # fmt: skip
        try:
            def phone() -> list[str]:
                return [f"{r.headers.get('title', '')}\n{r.text}" for r in ntfy.to("/gpu-alerts")]

            wait_for(lambda: any("budget" in t.lower() for t in phone()), 60, "the budget alert")
            wait_for(lambda: any("budget" in t.lower() for t in _mail_texts(smtp)), 60,
                     "the budget e-mail")  # fmt: skip
            wait_for(lambda: any("its GPUs are idle" in t for t in phone()), 150,
                     "the idle countdown on the phone")  # fmt: skip
            wait_for(lambda: any("its GPUs are idle" in t for t in _mail_texts(smtp)), 60,
                     "the idle countdown by e-mail")  # fmt: skip
            time.sleep(5)  # two more rounds of the rules: nothing is sent twice
            for texts in (phone(), _mail_texts(smtp)):
                budget = [t for t in texts if "Daily budget" in t]
                assert len(budget) == 1, texts
                assert "box-a at $2.40/h" in budget[0] and "so far" in budget[0]
                countdown = [t for t in texts if "its GPUs are idle" in t]
                assert len(countdown) == 1 and "released in 30 min" in countdown[0]
            assert all(r.headers["authorization"] == f"Bearer {TOKEN}"
                       for r in ntfy.to("/gpu-alerts"))  # fmt: skip
            assert smtp.logins and set(smtp.logins) == {smtp.user}
            # the refusing webhook was tried, is being retried, and its status says why
            assert broken.to("/hook")
            out = subprocess.run(
                [sys.executable, "-m", "gpu_companion", "notify", "list"],
                capture_output=True, text=True, env=env, timeout=60,
            )  # fmt: skip
            assert "500" in out.stdout, out.stdout
        finally:
            watch.send_signal(signal.SIGTERM)
            said, _ = watch.communicate(timeout=60)
    assert watch.returncode == 0, said
    assert TOKEN not in said and smtp.password not in said
