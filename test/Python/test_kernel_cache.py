# The compiler and runtime libraries are loaded into python3 with ctypes:
# not in sanitized builds (the instrumented libraries need the ASan runtime).
# UNSUPPORTED: sanitized
# RUN: env MXMOE_COMPILER_LIB=%mxmoe_obj_root/lib/libmxmoe_compiler.so MXMOE_RUNTIME_LIB=%mxmoe_obj_root/lib/libmxmoe_runtime.so %python %s %mxmoe_src_root
"""mxmoe.kernel_cache: a grouped GEMM's kernels compiled once per key, every
token count bound to them by a programs-only compile (equal kernel hashes),
entries shared through the disk by processes racing for them, keys that
change with every option that changes code and not with M. Needs no GPU:
the C runtime binds the cached programs (mxmoeRtProgramLoad) without one."""
import json
import multiprocessing
import os
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1)
sys.path.insert(0, os.path.join(ROOT, "python"))
from mxmoe import kernel_cache as kc  # noqa: E402
from mxmoe import runtime as rt  # noqa: E402

SHAPE = dict(k=256, n=384, experts=4, chip="sm_90a")
OPTS = {"recipe": "mx128", "toolkit": "/usr/local/cuda"}


def _race(root, m, queue):
    cache = kc.KernelCache(root)
    d = cache.grouped_mm(m=m, options=OPTS, **SHAPE)
    queue.put((d, cache.stats))


def _values(manifest, function):
    prog = next(p for p in manifest["programs"] if p["function"] == function)
    return [b["value"] for s in prog["steps"] for b in s["bindings"] if "value" in b]


class KernelCacheTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def load(self, d):
        with open(os.path.join(d, "manifest.json")) as f:
            return json.load(f)

    def test_one_compile_for_every_token_count(self):
        cache = kc.KernelCache(self.root)
        d512 = cache.grouped_mm(m=512, options=OPTS, **SHAPE)
        d700 = cache.grouped_mm(m=700, options=OPTS, **SHAPE)
        d0 = cache.grouped_mm(m=0, options=OPTS, **SHAPE)
        self.assertEqual(cache.stats,
                         {"kernels": 1, "programs": 3, "unbound": 0, "policies": 0, "hits": 0})
        self.assertEqual(os.path.dirname(d512), os.path.dirname(d700))
        m700 = self.load(d700)
        self.assertIn(700, _values(m700, "gmm.forward"))
        self.assertNotIn(700, _values(self.load(d512), "gmm.forward"))
        for row in m700["kernels"]:
            self.assertEqual(row["cubin"], "../kernels/sm_90a/kernels.cubin")
            self.assertTrue(os.path.isfile(os.path.join(d700, row["cubin"])))
        # The C executor binds the cached programs (no GPU needed).
        for fn in ("gmm.forward", "gmm.input_grad", "gmm.weight_grad"):
            p = rt.Program(d700, fn, "sm_90a")
            self.assertGreater(p.num_status_words, 0)
        self.assertEqual(self.load(d0)["programs"][0]["args"][0]["shape"], [0, 256])
        # Memoized in the process: the same directory, no new work.
        self.assertEqual(cache.grouped_mm(m=700, options=OPTS, **SHAPE), d700)
        self.assertEqual(cache.stats["programs"], 3)

    def test_disk_hit_compiles_nothing(self):
        kc.KernelCache(self.root).grouped_mm(m=512, options=OPTS, **SHAPE)

        def refuse(*a, **k):
            raise AssertionError("compiled although cached")
        cache = kc.KernelCache(self.root, compile_fn=refuse)
        d = cache.grouped_mm(m=512, options=OPTS, **SHAPE)
        self.assertEqual(cache.stats["hits"], 1)
        self.assertTrue(os.path.isfile(os.path.join(d, "manifest.json")))

    def test_processes_racing_share_one_entry(self):
        ctx = multiprocessing.get_context("fork")
        q = ctx.Queue()
        procs = [ctx.Process(target=_race, args=(self.root, 640, q)) for _ in range(4)]
        for p in procs:
            p.start()
        results = [q.get(timeout=120) for _ in procs]
        for p in procs:
            p.join()
            self.assertEqual(p.exitcode, 0)
        # One of them compiled, the others found its entry.
        total = {k: sum(st[k] for _, st in results) for k in results[0][1]}
        self.assertEqual(total,
                         {"kernels": 1, "programs": 1, "unbound": 0, "policies": 0, "hits": 3})
        dirs = {d for d, _ in results}
        self.assertEqual(len(dirs), 1)
        d = dirs.pop()
        self.assertIn(640, _values(self.load(d), "gmm.forward"))
        base = os.path.dirname(d)
        self.assertEqual(sorted(os.listdir(base)), ["kernels", "key.json", "m640"])
        self.assertEqual(sorted(os.listdir(self.root)),
                         [os.path.basename(base), os.path.basename(base) + ".lock"])

    def test_key(self):
        cache = kc.KernelCache(self.root)
        key = cache.key(options=OPTS, **SHAPE)
        self.assertEqual(key, cache.key(options=dict(OPTS), **SHAPE))
        self.assertNotEqual(key, cache.key(options={**OPTS, "recipe": "mx32"}, **SHAPE))
        self.assertNotEqual(key, cache.key(options={**OPTS, "rounding": "floor"}, **SHAPE))
        self.assertNotEqual(key, cache.key(options={**OPTS, "toolkit": "/nonexistent"}, **SHAPE))
        self.assertNotEqual(key, cache.key(options=OPTS, **{**SHAPE, "k": 512}))
        self.assertNotEqual(key, cache.key(options=OPTS, **{**SHAPE, "chip": "sm_100a"}))
        self.assertNotEqual(key, cache.key(options=OPTS, out_dtype="f32", **SHAPE))

    def test_changed_kernels_get_their_own_compile(self):
        cache = kc.KernelCache(self.root)
        d = cache.grouped_mm(m=512, options=OPTS, **SHAPE)
        kernels = os.path.join(os.path.dirname(d), "kernels", "manifest.json")
        m = json.load(open(kernels))
        m["kernels"][0]["kernel_hash"] = "0" * 16  # as if another compiler built them
        json.dump(m, open(kernels, "w"))
        d2 = cache.grouped_mm(m=768, options=OPTS, **SHAPE)
        self.assertEqual(cache.stats["unbound"], 1)
        own = self.load(d2)
        self.assertEqual(own["kernels"][0]["cubin"], "sm_90a/kernels.cubin")
        self.assertTrue(os.path.isfile(os.path.join(d2, "sm_90a", "kernels.cubin")))

    def test_bad_sizes(self):
        with self.assertRaisesRegex(ValueError, "K must be an int >= 1"):
            kc.grouped_mm_ir(16, 0, 128, 2)
        with self.assertRaisesRegex(ValueError, "M must be an int >= 0"):
            kc.grouped_mm_ir(-1, 128, 128, 2)

    def test_cache_root(self):
        env = dict(os.environ)
        try:
            os.environ["MXMOE_CACHE_DIR"] = "/x/y"
            self.assertEqual(kc.cache_root(), "/x/y")
            del os.environ["MXMOE_CACHE_DIR"]
            os.environ["XDG_CACHE_HOME"] = "/c"
            self.assertEqual(kc.cache_root(), "/c/mxmoe")
        finally:
            os.environ.clear()
            os.environ.update(env)


if __name__ == "__main__":
    unittest.main(verbosity=1)
