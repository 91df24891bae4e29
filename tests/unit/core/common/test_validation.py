import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.validation import (
    validate_alias,
    validate_hostname,
    validate_port,
    validate_user,
)


@pytest.mark.parametrize("alias", ["gpu1", "vast-4090.a", "A_100", "x"])
def test_good_aliases(alias):
    assert validate_alias(alias) == alias


@pytest.mark.parametrize(
    "alias",
    [
        "",
        "gpu 1",
        "gpu\n1",
        "gpu#1",
        'gp"u',
        "gpu'1",
        "-gpu",
        "gpu*",
        "gрu1",
        "a" * 64,
        "x\tProxyCommand",
    ],
)
def test_bad_aliases_name_the_field(alias):
    with pytest.raises(ValidationError) as err:
        validate_alias(alias)
    assert err.value.field == "alias"
    assert err.value.message


@pytest.mark.parametrize("host", ["ssh4.vast.ai", "127.0.0.1", "::1", "fe80::1", "gpu-box"])
def test_good_hostnames(host):
    assert validate_hostname(host) == host


@pytest.mark.parametrize(
    "host",
    [
        "",
        "a b",
        "host\nProxyCommand nc x",
        "-oProxyCommand=x",
        "h#1",
        "exa_mple.com",
        "éxample.com",
        "a..b",
        "x" * 64 + ".com",
        "$(id)",
    ],
)
def test_bad_hostnames(host):
    with pytest.raises(ValidationError) as err:
        validate_hostname(host)
    assert err.value.field == "hostname"


@pytest.mark.parametrize("port,expected", [("22", 22), (1, 1), (" 65535 ", 65535)])
def test_good_ports(port, expected):
    assert validate_port(port) == expected


@pytest.mark.parametrize("port", [0, 70000, -1, "22a", "", "1e3"])
def test_bad_ports(port):
    with pytest.raises(ValidationError) as err:
        validate_port(port)
    assert err.value.field == "port"


@pytest.mark.parametrize("user", ["root", "ubuntu", "_svc", "a.b-c"])
def test_good_users(user):
    assert validate_user(user) == user


@pytest.mark.parametrize("user", ["", "ro ot", "1root", "root;id", "us\ner"])
def test_bad_users(user):
    with pytest.raises(ValidationError):
        validate_user(user)
