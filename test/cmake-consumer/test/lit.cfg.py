# lit suite of the consumer project: tests of mxmoe's lowerings run
# against the installed mxmoe-opt and against consumer-opt.
import os

import lit.formats

config.name = "mxmoe-consumer"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.environment["PATH"] = os.pathsep.join(
    [config.consumer_tools_dir, config.environment["PATH"]])
