"""Saved tunnels per host id, pasted `-L` forwards read as tunnels, and the Jupyter server list a
host prints (untrusted: only a plain token and path are kept)."""

from __future__ import annotations

import pytest

from gpu_companion.core.access.jupyter import local_url, parse_server_list
from gpu_companion.core.access.specs import PRESETS, TunnelBook, TunnelSpec, specs_from_forwards
from gpu_companion.core.common.errors import ValidationError


def test_presets_then_saved_tunnels_by_host_id(store):
    book = TunnelBook(store)
    assert book.specs(1) == list(PRESETS)
    book.save(1, TunnelSpec("Gradio", 7860))
    book.save(1, TunnelSpec("My Jupyter", 8888, 9999))  # replaces the preset on that port
    names = [s.name for s in book.specs(1)]
    assert names == ["TensorBoard", "vLLM / OpenAI API", "Gradio", "My Jupyter"]
    assert book.specs(2) == list(PRESETS)  # another host's tunnels are its own
    book.save(1, TunnelSpec("gradio", 7861))  # same name: replaced, not doubled
    assert [s.remote_port for s in book.saved(1)] == [8888, 7861]
    book.save(1, TunnelSpec("tensorboard", 16006))  # a preset's name: the preset gives way
    assert [s.name for s in book.specs(1)].count("TensorBoard") == 0
    book.remove(1, "tensorboard")
    book.remove(1, "GRADIO")
    assert [s.name for s in book.saved(1)] == ["My Jupyter"]


def test_damaged_saved_rows_are_skipped(store):
    store.set_setting("access.tunnels.5", '[{"name": "ok", "remote_port": 80}, {"x": 1}, 3]')
    assert TunnelBook(store).saved(5) == [TunnelSpec("ok", 80)]
    store.set_setting("access.tunnels.6", "not json")
    assert TunnelBook(store).saved(6) == []


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (TunnelSpec("", 80), "name"),
        (TunnelSpec("x", 0), "port"),
        (TunnelSpec("x", 80, 70000), "port"),
        (TunnelSpec("x", 80, 0, "evil host"), "hostname"),
        (TunnelSpec("a\nb", 80), "name"),
    ],
)
def test_bad_specs_name_the_field(spec, field):
    with pytest.raises(ValidationError) as info:
        spec.validated()
    assert info.value.field == field


def test_pasted_local_forwards_become_tunnels():
    specs, notes = specs_from_forwards(
        [
            "-L 8080:localhost:8080",
            "-L 127.0.0.1:16006:localhost:6006",
            "-L 9000:[::1]:9001",
            "-R 9000:localhost:9000",
            "-D 1080",
            "-L /tmp/sock:localhost:80",
            "-L 80:localhost",
        ]
    )
    assert specs == [
        TunnelSpec("Port 8080", 8080, 0, "localhost"),
        TunnelSpec("Port 6006", 6006, 16006, "localhost"),
        TunnelSpec("Port 9001", 9001, 9000, "::1"),
    ]
    assert notes == [
        "-R 9000:localhost:9000 is not a local forward: not made a tunnel",
        "-D 1080 is not a local forward: not made a tunnel",
        "-L /tmp/sock:localhost:80 cannot be read as port:host:hostport: not made a tunnel",
        "-L 80:localhost cannot be read as port:host:hostport: not made a tunnel",
    ]


def test_jupyter_server_list_lines_and_lists():
    text = (
        "some banner the host prints\n"
        '{"port": 8888, "token": "t0k", "base_url": "/user/me"}\n'
        '[{"port": 8889, "token": "", "base_url": "/"}]\n'
        "{broken\n"
    )
    servers = parse_server_list(text)
    assert [s["port"] for s in servers] == [8888, 8889]
    assert local_url(servers, 8888, 18888) == "http://127.0.0.1:18888/user/me/?token=t0k"
    assert local_url(servers, 8889, 8889) == "http://127.0.0.1:8889/"
    assert local_url(servers, 6006, 6006) is None


@pytest.mark.parametrize(
    "server",
    [
        {"port": 8888, "token": "a&b=c", "base_url": "/"},
        {"port": 8888, "token": "t", "base_url": "/../../etc"},
        {"port": 8888, "token": "t", "base_url": "javascript:alert(1)"},
        {"port": 8888, "token": ["t"], "base_url": "/"},
        {"port": "8888", "token": "t", "base_url": "/"},
    ],
)
def test_odd_values_from_the_host_are_not_made_into_urls(server):
    assert local_url([server], 8888, 8888) is None
