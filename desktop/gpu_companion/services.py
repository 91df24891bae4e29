"""Every long-lived service, built once and shared: the window, the tray and every CLI command use
the same `Services` (no Qt here, so headless commands and tests build exactly what the app runs)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_companion.core.common.clock import Clock, SystemClock
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.listeners import Listeners
from gpu_companion.core.common.notifier import Notifier
from gpu_companion.core.common.paths import AppPaths
from gpu_companion.core.storage.store import Store

log = logging.getLogger(__name__)
REFUSED_RETRY_S = 60.0  # a host that refused the key is tried again this often

if TYPE_CHECKING:  # imported where first used: the first window paints without them
    from gpu_companion.core.access.launch import Launcher
    from gpu_companion.core.access.manager import TunnelManager
    from gpu_companion.core.access.tunnel import TunnelStatus
    from gpu_companion.core.autorelease.loop import CoreLoop
    from gpu_companion.core.autorelease.service import AutoReleaseService
    from gpu_companion.core.common.background import BackgroundSync
    from gpu_companion.core.fleet.runs import Runs
    from gpu_companion.core.hosts.registry import HostRegistry
    from gpu_companion.core.monitor.live import Monitor
    from gpu_companion.core.monitor.watcher import HostWatcher
    from gpu_companion.core.notify.center import NotifyCenter
    from gpu_companion.core.providers.accounts import ProviderAccounts
    from gpu_companion.core.providers.reconcile import ProviderSync
    from gpu_companion.core.release.wiring import ReleaseWiring
    from gpu_companion.core.spend.alerts import SpendAlerts
    from gpu_companion.core.spend.budgets import Budgets
    from gpu_companion.core.spend.ledger import SpendLedger
    from gpu_companion.core.ssh.agent import AppAgent, RuntimePaths
    from gpu_companion.core.ssh.config_writer import SshConfigWriter
    from gpu_companion.core.ssh.connection import SessionFactory
    from gpu_companion.core.ssh.managed import ManagedConfig
    from gpu_companion.core.ssh.shared import SharedSessions
    from gpu_companion.core.ssh.vault import KeyVault
    from gpu_companion.core.transfers.queue import TransferQueue


class Services:
    """Paths, store, registries, keys, connections, transfers, ledger, alerts, release, monitor.

    Each service is made on first use, so a CLI command builds only what it touches (a
    `ledger report` never opens the transfer queue, whose start-up pauses interrupted jobs)."""

    def __init__(self, paths: AppPaths) -> None:
        self.paths = paths.ensure()
        self.store = Store(paths.database)
        self.key_passphrases: dict[str, str] = {}  # typed this session, memory only
        self._monitor: Monitor | None = None
        self._monitor_lock = threading.Lock()
        self.started = False  # start() was called: the app runs, so its agent should too
        self._core_loop: CoreLoop | None = None
        self._notify_detach: Callable[[], None] | None = None
        self._refused_retry: threading.Thread | None = None
        self._closing = threading.Event()
        # one time line for the meter, the idle stretches and the release: an idle alert's cost
        # and the meter's end agree (tests set a ManualClock before the first service is made)
        self.clock: Clock = SystemClock()

    @cached_property
    def notifier(self) -> Notifier:
        return Notifier()

    @cached_property
    def registry(self) -> HostRegistry:
        from gpu_companion.core.hosts.registry import HostRegistry

        registry = HostRegistry(self.store)
        # the app's own ssh -F / rsync read the managed file: keep it in step with the hosts,
        # off the caller's thread (often the GUI's): the sync runs `ssh -G` per host
        registry.on_hosts_changed.subscribe(lambda _host: self.ssh_sync.request())
        return registry

    @cached_property
    def ssh_sync(self) -> BackgroundSync:
        from gpu_companion.core.common.background import BackgroundSync

        def sync() -> None:
            problem = self.managed_ssh.sync_quietly()
            if problem:
                self.notifier.warning(
                    _("The generated ssh config was not updated: {problem}").format(
                        problem=problem
                    ),
                    source="hosts",
                    key="sshconfig",
                )

        return BackgroundSync(sync)

    @cached_property
    def vault(self) -> KeyVault:
        from gpu_companion.core.ssh.vault import KeyVault

        return KeyVault(self.store, self.paths.data_dir / "keys")  # keyring touched on first use

    @cached_property
    def ssh_config(self) -> SshConfigWriter:
        from gpu_companion.core.ssh.config_writer import SshConfigWriter

        return SshConfigWriter(Path.home())

    @cached_property
    def sessions(self) -> SessionFactory:
        from gpu_companion.core.ssh.connection import SessionFactory

        return SessionFactory(self.vault, self.ssh_config.known_hosts, self.key_passphrases.get)

    @cached_property
    def shared_sessions(self) -> SharedSessions:
        """One connection per host for the monitor, the tunnels and the release checklist (the
        auto-release probe too); `sessions` stays for what must really connect (Test connection,
        first contact)."""
        from gpu_companion.core.ssh.shared import SharedSessions

        return SharedSessions(lambda host, timeout: self.sessions.connect(host, timeout))

    @cached_property
    def runtime_paths(self) -> RuntimePaths:
        from gpu_companion.core.ssh.agent import RuntimePaths

        return RuntimePaths.for_data_dir(self.paths.data_dir)

    @cached_property
    def agent(self) -> AppAgent:
        """The app's own ssh-agent: started by `start()`, stopped by `close()`."""
        from gpu_companion.core.ssh.agent import AppAgent

        return AppAgent(self.runtime_paths, self.vault, self.key_passphrases.get)

    def start(self) -> None:
        """What runs while the app runs (window or tray): the app's ssh-agent (milliseconds; a
        UserError when ssh-agent is missing). Then `start_background` off the GUI thread."""
        self.started = True
        self.agent.start()

    def start_background(self) -> list[str]:
        """The keys of the active hosts' platforms that need no passphrase (so terminal
        `ssh ALIAS` works at once) and the managed ssh config; the keys that failed, and why."""
        platforms = {self.vault.platform_of(h) for h in self.registry.hosts(include_released=False)}
        problems = self.agent.preload(sorted(p for p in platforms if p))
        self.ssh_sync.request()  # hosts from an earlier run, keys changed
        return problems

    @cached_property
    def managed_ssh(self) -> ManagedConfig:
        from gpu_companion.core.ssh.managed import ManagedConfig

        return ManagedConfig(self.ssh_config, self.registry, self.vault, self.runtime_paths)

    @cached_property
    def transfers(self) -> TransferQueue:
        from gpu_companion.core.ssh.agent import auth_help
        from gpu_companion.core.transfers.service import build_transfer_queue

        return build_transfer_queue(
            self.store,
            self.registry,
            ssh_argv=self.managed_ssh.ssh_argv,
            client_factory=self.sessions.connect,
            before_connect=self.agent.ensure_for_host,
            auth_help=lambda host: auth_help(host, self.vault, self.agent),
        )

    @cached_property
    def ledger(self) -> SpendLedger:
        from gpu_companion.core.spend.ledger import SpendLedger

        return SpendLedger(self.store, self.clock)

    @cached_property
    def budgets(self) -> Budgets:
        from gpu_companion.core.spend.budgets import Budgets

        return Budgets(self.ledger)

    @cached_property
    def alerts(self) -> SpendAlerts:
        from gpu_companion.core.spend.alerts import SpendAlerts

        alerts = SpendAlerts(self.ledger, self.notifier, self.budgets)
        alerts.last_sync = self._last_checkpoint_sync  # spot rentals: last verified backup
        return alerts

    @cached_property
    def notify(self) -> NotifyCenter:
        """Off-desk alert channels (ntfy, webhooks, e-mail, desktop), secrets in the keyring.
        Built only: the always-on loop attaches it to the notifier and starts its thread."""
        from gpu_companion.core.notify.center import NotifyCenter

        return NotifyCenter(self.store, self.vault, self.clock)

    @cached_property
    def tunnels(self) -> TunnelManager:
        """Port tunnels over the app's verified connections; closed with their host."""
        from gpu_companion.core.access.manager import TunnelManager

        # the verified sessions (paramiko) are made when a tunnel first connects, not before
        return TunnelManager(
            lambda host: self.shared_sessions.connect(host), self.registry, self.tunnel_changes
        )

    @cached_property
    def tunnel_changes(self) -> Listeners[TunnelStatus]:
        """Every tunnel state change, to subscribe to before any tunnel code is loaded."""
        return Listeners("tunnels")

    @cached_property
    def launcher(self) -> Launcher:
        """Terminal and VS Code launches through the user's own ssh config."""
        from gpu_companion.core.access.launch import Launcher, LaunchPrefs

        return Launcher(self.ssh_config, LaunchPrefs(self.store))

    def has_running_rentals(self) -> bool:
        return self.ledger.has_running()

    @cached_property
    def release(self) -> ReleaseWiring:
        from gpu_companion.core.release.wiring import ReleaseWiring
        from gpu_companion.core.transfers.presets import BACKUPS_DIR

        return ReleaseWiring.build(
            self.store,
            self.registry,
            self.ledger,
            self.paths.data_dir / BACKUPS_DIR,
            connect=self.shared_sessions.connect,
            queue=self.transfers,  # checkpoint sync and archive download are queue jobs
            ssh_config=self.managed_ssh,
            accounts=self.providers,
        )

    @cached_property
    def providers(self) -> ProviderAccounts:
        """vast.ai and RunPod accounts; their API keys live in the keyring beside the SSH keys."""
        from gpu_companion.core.providers.accounts import ProviderAccounts

        return ProviderAccounts(self.store, self.registry, self.vault)

    @cached_property
    def provider_sync(self) -> ProviderSync:
        """The accounts' instances against the registry: imports, orphans, gone and stopped."""
        from gpu_companion.core.providers.reconcile import ProviderSync

        return ProviderSync(self.providers, self.registry, self.ledger, self.notifier)

    def resolve_interrupted_releases(self) -> list[str]:
        """Releases a dead process left half-done, read back and finished or alerted."""
        from gpu_companion.core.release.recovery import resolve_interrupted

        return resolve_interrupted(self.release, self.notifier)

    @cached_property
    def runs(self) -> Runs:
        """Sharded runs on GNU parallel, over the same ssh config as every other ssh call."""
        from gpu_companion.core.fleet.runs import Runs

        return Runs(self.paths.data_dir / "runs", self.managed_ssh.ssh_argv_unshared,
                    prepare=self._keys_for, lend_keys=self._lend_keys)  # fmt: skip

    def _lend_keys(self, aliases: list[str], socket: Path) -> list[str]:
        """A run's own agent gets its hosts' keys: the run outlives the window (issue 27)."""
        hosts = [h for h in map(self.registry.host, aliases) if h is not None]
        return self.agent.lend_keys(hosts, socket)

    def _keys_for(self, aliases: list[str]) -> None:
        """Before a run's ssh reaches its hosts: their keys in the app's agent."""
        for alias in aliases:
            host = self.registry.host(alias)
            if host is not None:
                self.agent.ensure_for_host(host)

    def use_agent(self) -> None:
        """A CLI command that runs ssh or rsync: the window's agent, or one of its own."""
        self.agent.start_or_attach()

    @cached_property
    def autorelease(self) -> AutoReleaseService:
        """Policies applied while the user is away: fed by the monitor, ticked by the always-on
        loop (`start_always_on()`: the window, the tray and `watch` alike)."""
        from gpu_companion.core.autorelease.service import AutoReleaseService

        service = AutoReleaseService(
            self.store,
            self.registry,
            self.ledger,
            self.release,
            self.notifier,
            last_sync=self.transfers.last_verified_download,
            budgets=self.budgets,
        )
        self.monitor().subscribe(service.on_event)
        return service

    @property
    def always_on_here(self) -> bool:
        """Whether this process runs the always-on rules (it took the data dir's lock)."""
        return self._core_loop is not None

    def start_always_on(self, every_s: float = 30.0, desktop_shown_here: bool = False) -> bool:
        """The rules that must work while the user is away, on threads of their own: spend
        alerts, auto-release and unreachable hosts (every `every_s`), the providers' instances
        (every few minutes), and first a release a dead process left half-done; their alerts
        go out through the notification channels (ntfy, webhooks, e-mail, the desktop).
        `desktop_shown_here`: this process shows desktop notifications itself (the window's
        tray), so the desktop channel is left to processes without one. False when another
        process on this data dir (a window or `gpu-companion watch`) already runs the rules
        (its alerts are still queued for the channels here; that process delivers them)."""
        if self._core_loop is None:
            from gpu_companion.core.autorelease.loop import LOCK_NAME, CoreLoop

            if self._notify_detach is None:
                self.notify.shows_desktop_itself = desktop_shown_here
                self._notify_detach = self.notify.attach(self.notifier)
            loop = CoreLoop(self.paths.data_dir / LOCK_NAME)
            if not loop.claim():
                return False
            self.notify.start()
            self.start_watching()  # the billed hosts stream (a no-op when already watching)
            loop.every("alerts", self.alerts.check, every_s)
            loop.every("autorelease", self.autorelease.tick, every_s)
            loop.every("providers", self.provider_sync.tick, every_s)
            loop.every("spend rollup", self.catch_up_spend_rollup, every_s)
            loop.start(first=(self.resolve_interrupted_releases,))
            self._core_loop = loop
        return True

    def catch_up_spend_rollup(self) -> bool:
        """Derive what the ledger's hourly rollup lacks (after an upgrade or a big import: tens
        of seconds at a million rentals), a week per transaction and at most a few seconds per
        round of the always-on loop, so the Spend chart and reports take their quick path.
        True when nothing is left."""
        from gpu_companion.core.spend import rollup

        return rollup.catch_up(self.store, max_seconds=5.0)

    def _billed(self, alias: str) -> bool:
        rental = self.ledger.running_for_alias(alias)
        return rental is not None and rental.computing

    def cost_per_hour(self, alias: str) -> str:
        """The running rental's hourly rate as text, "" when nothing is metered for `alias`."""
        from gpu_companion.core.common.money import format_rate, to_minor

        rental = self.ledger.running_for_alias(alias)
        if rental is None:
            return ""
        return format_rate(to_minor(rental.hourly_rate(), rental.currency), rental.currency)

    def _on_monitor_event(self, event: object) -> None:
        """Idle GPUs on a billed rental: the ledger says what the idle stretch cost so far."""
        from gpu_companion.core.monitor.live import HintEvent

        if isinstance(event, HintEvent) and event.hint.kind == "idle":
            since = datetime.fromtimestamp(event.hint.since, timezone.utc)
            self.alerts.on_idle(event.hint.alias, since)

    def _last_checkpoint_sync(self, host_id: int) -> datetime | None:
        host = next((h for h in self.registry.hosts() if h.id == host_id), None)
        return self.transfers.last_verified_download(host.alias) if host else None

    def _idle_minutes(self, alias: str) -> float | None:
        """The host's own idle-alert minutes (chosen in the wizard), None for the default."""
        from gpu_companion.core.spend.alerts import idle_minutes

        host = self.registry.host(alias)
        return idle_minutes(self.store, host.id) if host is not None and host.id else None

    def _monitor_clock(self) -> float:
        """The monitor's seconds on the ledger's clock (sub-second when that is the system's)."""
        if isinstance(self.clock, SystemClock):
            return time.time()
        return self.clock.now().timestamp()

    def monitor(self) -> Monitor:
        """The live GPU monitor, made on first use: it connects like every other feature, bills
        by the spend ledger and turns idle hints into cost."""
        with self._monitor_lock:  # the tray, a page and the watcher ask for it at launch
            if self._monitor is None:
                self._monitor = self._make_monitor()
        return self._monitor

    def _make_monitor(self) -> Monitor:
        from gpu_companion.core.monitor.live import Monitor

        monitor = Monitor(
            self.shared_sessions.connect,
            store=self.store,
            notifier=self.notifier,
            is_billed=self._billed,
            clock=self._monitor_clock,
            idle_minutes_for=self._idle_minutes,
        )
        monitor.subscribe(self._on_monitor_event)
        return monitor

    @cached_property
    def watcher(self) -> HostWatcher:
        """Which hosts are watched: every running rental from launch, page shown or not."""
        from gpu_companion.core.monitor.watcher import HostWatcher

        return HostWatcher(self.registry, self.ledger, self.monitor)  # made when first needed

    def start_watching(self) -> None:
        """Called once at launch (window shown or not): the rented hosts stream from now on,
        and a host that refused the key is tried again every minute (the key may have been
        added at the provider meanwhile)."""
        self.watcher.start()
        if self._refused_retry is None:
            self._refused_retry = threading.Thread(
                target=self._retry_refused_loop, name="monitor-refused-retry", daemon=True
            )
            self._refused_retry.start()

    def retry_refused_hosts(self) -> list[str]:
        """Connect again to the watched hosts that refused the app's key: a collector stops
        at "auth failed" until asked (a wrong key would otherwise be tried in a loop)."""
        from gpu_companion.core.monitor.collector import HostState

        if self._monitor is None:
            return []
        monitor = self._monitor
        refused = [a for a in monitor.aliases() if monitor.status(a).state is HostState.AUTH_FAILED]
        for alias in refused:
            monitor.reconnect(alias)
        return refused

    def _retry_refused_loop(self) -> None:
        while not self._closing.wait(REFUSED_RETRY_S):
            try:
                self.retry_refused_hosts()
            except Exception:  # the loop outlives one bad round
                log.exception("retrying the hosts that refused the key failed")

    def close(self) -> None:
        self._closing.set()
        if self._core_loop is not None:
            self._core_loop.stop()
        if "notify" in self.__dict__:
            self.notify.stop(5.0)  # what is still queued stays in the store for the next start
        if "ssh_sync" in self.__dict__:
            self.ssh_sync.close()  # a pending host change still reaches the managed file
        if "watcher" in self.__dict__:
            self.watcher.stop()
        if "transfers" in self.__dict__:
            self.transfers.shutdown()  # running transfers pause and keep their partial data
        if self._monitor is not None:
            self._monitor.stop()
        if "tunnels" in self.__dict__:
            self.tunnels.close_all()
        if "runs" in self.__dict__:
            self.runs.close()
        if "shared_sessions" in self.__dict__:
            self.shared_sessions.close_all()  # after the monitor, the tunnels and the release
        if "agent" in self.__dict__:
            self.agent.stop()  # shared connections close, the keys leave memory
        self.store.close()


def build_services(paths: AppPaths | None = None) -> Services:
    """The one way to build the app's services: the window, the tray and the CLI all call this."""
    return Services(paths or AppPaths.default())
