"""The PEP 517 build backend of pyproject.toml, standard library only.

`pip install .` calls build_wheel: the wheel holds python/mxmoe/*.py and,
in mxmoe/_lib, libmxmoe_runtime.so and libmxmoe_compiler.so taken from an
existing build ($MXMOE_BUILD_DIR, else <repo>/build; scripts/build.sh is
run first when they are missing there), so the installed package finds its
libraries next to itself (mxmoe.runtime.library_path) and works outside
the repository. The wheel is platform-specific (linux_x86_64: native
libraries) and pure Python otherwise (py3-none). Wheel format: PEP 427
(https://peps.python.org/pep-0427/), metadata: core metadata 2.1
(https://packaging.python.org/specifications/core-metadata/).
"""
from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sysconfig
import tomllib
import zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LIBRARIES = ("libmxmoe_runtime.so", "libmxmoe_compiler.so")


def _project() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _metadata(p: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p['description']}", f"Requires-Python: {p['requires-python']}"]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    return "\n".join(lines) + "\n"


def _tag() -> str:
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _libraries() -> dict:
    """arcname -> path of the native libraries (built if missing)."""
    build = os.environ.get("MXMOE_BUILD_DIR") or os.path.join(ROOT, "build")
    paths = {n: os.path.realpath(os.path.join(build, "lib", n)) for n in LIBRARIES}
    if not all(os.path.isfile(p) for p in paths.values()):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True,
                       env={**os.environ, "MXMOE_BUILD_DIR": build})
    missing = [p for p in paths.values() if not os.path.isfile(p)]
    if missing:
        raise RuntimeError(f"mxmoe_build: {missing} not built under {build}")
    return {f"mxmoe/_lib/{n}": p for n, p in paths.items()}


def _sources() -> dict:
    src = os.path.join(ROOT, "python", "mxmoe")
    return {f"mxmoe/{n}": os.path.join(src, n) for n in sorted(os.listdir(src))
            if n.endswith(".py")}


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _dist_info(p: dict) -> str:
    return f"{p['name']}-{p['version']}.dist-info"


def _write_metadata(directory: str, p: dict) -> str:
    info = os.path.join(directory, _dist_info(p))
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(_metadata(p))
    return _dist_info(p)


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_metadata(metadata_directory, _project())


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    info = _dist_info(p)
    name = f"{p['name']}-{p['version']}-{_tag()}.whl"
    files = {**_sources(), **_libraries()}
    generated = {
        f"{info}/METADATA": _metadata(p).encode(),
        f"{info}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: mxmoe_build\n"
                          f"Root-Is-Purelib: false\nTag: {_tag()}\n").encode(),
    }
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w",
                         zipfile.ZIP_DEFLATED) as whl:
        for arcname, path in files.items():
            with open(path, "rb") as f:
                data = f.read()
            info_z = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            # Libraries keep their execute bit (rwxr-xr-x), sources rw-r--r--.
            mode = 0o755 if arcname.endswith(".so") else 0o644
            info_z.external_attr = (0o100000 | mode) << 16
            info_z.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info_z, data)
            record.append(_record_line(arcname, data))
        for arcname, data in generated.items():
            whl.writestr(arcname, data)
            record.append(_record_line(arcname, data))
        record.append(f"{info}/RECORD,,")
        whl.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return name
