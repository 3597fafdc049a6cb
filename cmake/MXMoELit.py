"""lit helper for projects whose tests run against an installed mxmoe.

Installed as <prefix>/lib/cmake/MXMoE/MXMoELit.py; find_package(MXMoE)
names it MXMoE_LIT_HELPER and the tools' directory MXMoE_TOOLS_DIR. In a
lit.site.cfg.py configured by CMake:

    import importlib.util
    spec = importlib.util.spec_from_file_location("mxmoe_lit", "@MXMoE_LIT_HELPER@")
    mxmoe_lit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mxmoe_lit)
    mxmoe_lit.configure(config, lit_config, "@MXMoE_TOOLS_DIR@",
                        "@LLVM_TOOLS_BINARY_DIR@")

Then RUN lines use mxmoe-opt, mxmoe-compile, FileCheck and not by name
(the two directories lead PATH) or %mxmoe-opt / %mxmoe-compile / %mxmoe-run
(full paths).
test/cmake-consumer/ does this; docs/embedding.md describes it.
"""

import os

TOOLS = ("mxmoe-opt", "mxmoe-compile", "mxmoe-run")


def configure(config, lit_config, mxmoe_tools_dir, llvm_tools_dir):
    """Puts the installed mxmoe tools and LLVM's FileCheck/not on PATH.

    mxmoe_tools_dir: <prefix>/bin of the install (MXMoE_TOOLS_DIR).
    llvm_tools_dir: LLVM's bin directory holding FileCheck and not
    (LLVM_TOOLS_BINARY_DIR, e.g. /usr/lib/llvm-22/bin).
    A missing tool is a lit fatal error naming the path looked at.
    """
    for tool in TOOLS:
        path = os.path.join(mxmoe_tools_dir, tool)
        if not os.access(path, os.X_OK):
            lit_config.fatal(f"mxmoe: no executable {path} (MXMoE_TOOLS_DIR)")
        config.substitutions.append((f"%{tool}", path))
    for tool in ("FileCheck", "not"):
        if not os.access(os.path.join(llvm_tools_dir, tool), os.X_OK):
            lit_config.fatal(f"mxmoe: no {tool} in {llvm_tools_dir}")
    path = config.environment.get("PATH", os.environ.get("PATH", ""))
    config.environment["PATH"] = os.pathsep.join(
        [mxmoe_tools_dir, llvm_tools_dir, path])
