# The runtime library is loaded into python3 with ctypes: not in sanitized
# builds (the instrumented library needs the ASan runtime preloaded).
# UNSUPPORTED: sanitized
# RUN: env MXMOE_RUNTIME_LIB=%mxmoe_obj_root/lib/libmxmoe_runtime.so %python %s %mxmoe_src_root
"""mxmoe.runtime.rejection() over ctypes: the meaning of a grouped kernel's
status word comes from the C runtime (mxmoeRtStatusMeaning), the same text
mxmoeRtCheckStatus reports. Needs no GPU: the driver is opened lazily."""
import sys
import unittest

ROOT = sys.argv.pop(1)
sys.path.insert(0, ROOT + "/python")

from mxmoe import runtime as rt  # noqa: E402


class StatusMeaning(unittest.TestCase):
    def test_offsets(self):
        text = rt.rejection(1)
        self.assertTrue(text.startswith("rejected its group offsets ("), text)
        self.assertIn("status 1", text)

    def test_sizes(self):
        text = rt.rejection(2)
        self.assertTrue(text.startswith("rejected its sizes ("), text)
        self.assertIn("status 2", text)

    def test_unknown_and_zero(self):
        self.assertEqual(rt.rejection(9), "wrote unknown status 9")
        with self.assertRaises(ValueError):
            rt.rejection(0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
