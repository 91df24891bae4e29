import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.hosts.registry import LOCAL_HOST, Host, HostRegistry, Platform


@pytest.fixture
def registry(store):
    return HostRegistry(store)


def test_platform_and_host_round_trip(registry):
    vast = registry.save_platform(Platform("vast.ai", "https://cloud.vast.ai", "second", "USD"))
    host = registry.save_host(Host("gpu1", "ssh4.vast.ai", 41022, "root", vast.id, "RTX 4090", 2))
    assert registry.platforms() == [vast]
    assert registry.hosts() == [host]
    assert registry.host("gpu1") == host
    registry.save_host(Host("gpu1", "ssh5.vast.ai", 41023, "root", vast.id, id=host.id))
    assert registry.host("gpu1").hostname == "ssh5.vast.ai"


def test_duplicates_are_refused_case_insensitively(registry):
    registry.save_platform(Platform("RunPod"))
    with pytest.raises(ValidationError, match="already exists") as err:
        registry.save_platform(Platform("runpod"))
    assert err.value.field == "name"
    registry.save_host(Host("gpu1", "10.0.0.1"))
    with pytest.raises(ValidationError, match="already exists") as err:
        registry.save_host(Host("GPU1", "10.0.0.2"))
    assert err.value.field == "alias"


@pytest.mark.parametrize(
    "host,field",
    [
        (Host("gpu 1", "h"), "alias"),
        (Host("local", "h"), "alias"),
        (Host("gpu1", "h", port=0), "port"),
        (Host("gpu1", "h", port=70000), "port"),
        (Host("gpu1", "h\nProxyCommand x"), "hostname"),
        (Host("gpu1", "h", user="ro ot"), "user"),
        (Host("gpu1", "h", gpu_count=65), "gpu_count"),
        (Host("gpu1", "h", platform_id=999), "platform"),
    ],
)
def test_bad_hosts_are_refused_and_nothing_is_written(registry, host, field):
    with pytest.raises(ValidationError) as err:
        registry.save_host(host)
    assert err.value.field == field
    assert registry.hosts() == []


@pytest.mark.parametrize(
    "platform,field",
    [
        (Platform(""), "name"),
        (Platform("x", console_url="javascript:alert(1)"), "console_url"),
        (Platform("x", billing_granularity="fortnight"), "billing_granularity"),
        (Platform("x", currency="DOGE"), "currency"),
    ],
)
def test_bad_platforms(registry, platform, field):
    with pytest.raises(ValidationError) as err:
        registry.save_platform(platform)
    assert err.value.field == field


def test_a_platform_in_use_cannot_be_deleted(registry):
    p = registry.save_platform(Platform("Lambda"))
    h = registry.save_host(Host("lam1", "1.2.3.4", platform_id=p.id))
    with pytest.raises(ValidationError, match="lam1"):
        registry.delete_platform(p.id)
    registry.delete_host(h.id)
    registry.delete_platform(p.id)
    assert registry.platforms() == []


def test_this_computer_is_built_in(registry):
    assert registry.host("local") is LOCAL_HOST
    assert LOCAL_HOST.is_local
    assert LOCAL_HOST not in registry.hosts()


def test_instance_id_round_trips_and_bad_ones_are_refused(registry):
    host = registry.save_host(Host("gpu1", "10.0.0.1", instance_id=" 12345678 "))
    assert registry.host("gpu1").instance_id == "12345678" == host.instance_id
    for bad in ("a\nb", "x" * 129):
        with pytest.raises(ValidationError) as err:
            registry.save_host(Host("gpu2", "10.0.0.2", instance_id=bad))
        assert err.value.field == "instance_id"
    assert [h.alias for h in registry.hosts()] == ["gpu1"]


def test_hosts_stored_before_instance_ids_keep_their_data(tmp_path):
    from gpu_companion.core.storage.schema import MIGRATIONS
    from gpu_companion.core.storage.store import Store

    path = tmp_path / "db.sqlite3"
    old = Store(path, migrations=MIGRATIONS[:-1])
    old.db.table("hosts").insert(
        {"alias": "gpu1", "hostname": "10.0.0.1", "port": 22, "user": "root"}
    )
    old.close()
    store = Store(path)
    try:
        assert HostRegistry(store).host("gpu1").instance_id == ""
    finally:
        store.close()


def test_one_host_is_an_index_look_up_not_a_list_of_all(registry):
    """The tray, the rules and the collectors ask for hosts one alias at a time, per tick: a
    look-up in the alias index (reading all 100 hosts for each made a refresh quadratic)."""
    p = registry.save_platform(Platform(name="vast.ai"))
    for i in range(30):
        registry.save_host(Host(alias=f"gpu-{i:02d}", hostname=f"10.0.0.{i + 1}", platform_id=p.id))
    statements: list[str] = []
    registry.store.db.conn.set_trace_callback(statements.append)
    try:
        found = registry.host("gpu-17")
        missing = registry.host("GPU-17")  # aliases match exactly, as before
    finally:
        registry.store.db.conn.set_trace_callback(None)
    assert found is not None and found.hostname == "10.0.0.18"
    assert missing is None
    assert len(statements) == 2 and all("FROM hosts WHERE alias = " in s for s in statements)
    plan = " | ".join(
        r[3]
        for r in registry.store.db.execute(
            "EXPLAIN QUERY PLAN " + registry._HOST_COLUMNS + " WHERE alias = ?", ["x"]
        )
    )
    assert "USING INDEX" in plan and "SCAN" not in plan, plan
