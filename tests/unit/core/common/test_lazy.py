import subprocess
import sys


def test_a_lazy_module_loads_on_first_attribute_and_is_shared():
    code = (
        "import sys\n"
        "from gpu_companion.core.common.lazy import is_loaded, lazy_import\n"
        "m = lazy_import('wave')\n"
        "assert 'wave' in sys.modules and not is_loaded('wave')\n"
        "import wave\n"
        "assert wave is m\n"
        "assert m.Error and is_loaded('wave')\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.stdout.strip() == "ok", out.stderr


def test_an_unknown_module_is_an_import_error():
    import pytest

    from gpu_companion.core.common.lazy import lazy_import

    with pytest.raises(ModuleNotFoundError):
        lazy_import("no_such_module_here")
