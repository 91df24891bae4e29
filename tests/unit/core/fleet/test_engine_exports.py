"""Ray's and SkyPilot's exports against the engines' own checks (vendored: tests/data/engines),
for fleets the harness cannot make: one host, many workers, mapped ports, odd names."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.fleet.export import FleetHost, render
from tests.data.engines.engine_checks import (
    ray_prepare_local,
    ray_validate,
    sky_validate_pool_config,
)


def _hosts(n: int, user: str = "root") -> list[FleetHost]:
    return [FleetHost(f"box-{i}", f"203.0.113.{i + 1}", 22 if i % 2 else 40000 + i, user,
                      "RunPod", 1, "/keys/runpod.pub") for i in range(n)]  # fmt: skip


@pytest.mark.parametrize("n", [1, 2, 5])
def test_ray_accepts_the_config_for_any_fleet_size(n: int):
    cfg = yaml.safe_load(render("ray", _hosts(n), Path("/cfg")))
    ray_validate(cfg)
    prepared = ray_prepare_local(cfg)
    ray_validate(prepared)
    node = prepared["available_node_types"]["local.cluster.node"]
    assert node["min_workers"] == node["max_workers"] == n - 1
    assert "ssh_private_key" not in cfg["auth"]


def test_ray_refuses_two_users():
    hosts = [*_hosts(1), *_hosts(1, user="ubuntu")]
    with pytest.raises(UserError, match="one ssh user"):
        render("ray", hosts, Path("/cfg"))


def test_the_ray_start_script_quotes_every_word():
    text = render("ray-start", _hosts(3), Path("/a dir/config"))
    lines = [x for x in text.splitlines() if x.startswith("ssh ")]
    assert lines == [
        "ssh -F '/a dir/config' -- box-0 'ray start --head --port=6379'",
        "ssh -F '/a dir/config' -- box-1 'ray start --address=203.0.113.1:6379'",
        "ssh -F '/a dir/config' -- box-2 'ray start --address=203.0.113.1:6379'",
    ]
    assert "box-0 (ssh on port 40000)" in text  # a mapped port is named


def test_skypilot_one_pool_per_host_each_passing_the_pool_check():
    hosts = [*_hosts(2), FleetHost("Box.0", "198.51.100.9", 22, "root", "RunPod", 1, "/k.pub")]
    pools = yaml.safe_load(render("skypilot", hosts, Path("/cfg")))
    assert list(pools) == ["box-0", "box-1", "box-0-2"]  # distinct names, never merged
    for pool in pools.values():
        sky_validate_pool_config(pool)
        assert [set(h) for h in pool["hosts"]] == [{"ip"}]
