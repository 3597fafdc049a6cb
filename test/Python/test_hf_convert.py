# The compiler library is loaded into python3 with ctypes: not in sanitized
# builds (the instrumented library needs the ASan runtime).
# UNSUPPORTED: sanitized
# RUN: env MXMOE_COMPILER_LIB=%mxmoe_obj_root/lib/libmxmoe_compiler.so %python %s %mxmoe_src_root
"""mxmoe.hf without torch: which modules of a transformers MoE model
`convert` matches (stub modules named and shaped like Qwen3-MoE's, gpt-oss's
and Llama 4's), the precision-policy IR it writes for their expert GEMMs
and routers, the per-GEMM recipes it takes from the policy's report (run
through the compiler library), the report's cache, and its errors."""
import os
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1)
sys.path.insert(0, os.path.join(ROOT, "python"))
from mxmoe import hf  # noqa: E402
from mxmoe import kernel_cache as kc  # noqa: E402


P = hf.ShapeOnly  # a parameter: shape and dim() are all the matching reads


class Module:
    def __init__(self, **children):
        self._children = {}
        for k, v in children.items():
            setattr(self, k, v)
            if isinstance(v, Module):
                self._children[k] = v
        self.hooks = []

    def named_modules(self, prefix=""):
        yield prefix, self
        for k, c in self._children.items():
            yield from c.named_modules(f"{prefix}.{k}" if prefix else k)

    def register_forward_pre_hook(self, fn):
        self.hooks.append(fn)
        return fn


def cls(name):
    return type(name, (Module,), {})


def qwen3_layer(e=8, h=2048, i=768):
    experts = cls("Qwen3MoeExperts")(gate_up_proj=P(e, 2 * i, h), down_proj=P(e, h, i),
                                     act_fn=object())
    return cls("Qwen3MoeSparseMoeBlock")(gate=cls("Qwen3MoeTopKRouter")(weight=P(e, h)),
                                         experts=experts)


def model(*layers, **extra):
    return cls("Model")(model=cls("Inner")(layers=Module(**{
        str(n): cls("DecoderLayer")(mlp=layer) for n, layer in enumerate(layers)}), **extra))


def gpt_oss_layer(e=4, h=2880, i=2880):
    experts = cls("GptOssExperts")(gate_up_proj=P(e, h, 2 * i), down_proj=P(e, i, h),
                                   gate_up_proj_bias=P(e, 2 * i))
    return cls("GptOssMLP")(router=cls("GptOssTopKRouter")(weight=P(e, h)), experts=experts)


def llama4_block(e=16, h=1024, i=2048):
    experts = cls("Llama4TextExperts")(gate_up_proj=P(e, h, 2 * i), down_proj=P(e, i, h),
                                       act_fn=object())
    return cls("Llama4TextMoe")(router=cls("Llama4Router")(weight=P(e, h)), experts=experts,
                                shared_expert=Module())


class ConvertTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cache = kc.KernelCache(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def convert(self, m, **kw):
        return hf.convert(m, chip="sm_90a", cache=self.cache, **kw)

    def test_families_and_policy_recipes(self):
        m = cls("Model")(model=cls("Inner")(layers=Module(**{
            "0": cls("DecoderLayer")(mlp=qwen3_layer()),
            "1": cls("DecoderLayer")(mlp=gpt_oss_layer()),
            "2": cls("DecoderLayer")(feed_forward=llama4_block())})))
        r = self.convert(m)
        self.assertEqual(r["converted"], {"model.layers.0.mlp.experts": "fused",
                                          "model.layers.1.mlp.experts": "gpt_oss",
                                          "model.layers.2.feed_forward": "llama4"})
        # auto on sm_90a: MX128 for every expert GEMM that passes the rules.
        self.assertEqual(set(r["gemms"].values()), {"mx128"})
        self.assertEqual(len(r["gemms"]), 6)
        self.assertIn("model.layers.2.feed_forward.experts.down_proj", r["gemms"])
        by_fqn = {d["fqn"]: d for d in r["policy"]["decisions"]}
        for router in ("model.layers.0.mlp.gate", "model.layers.1.mlp.router",
                       "model.layers.2.feed_forward.router"):
            self.assertEqual(by_fqn[router]["precision"], "bf16", router)
            self.assertEqual(by_fqn[router]["rule"], "exclude", router)
        up = by_fqn["model.layers.1.mlp.experts.gate_up_proj"]  # gpt-oss [E, H, 2I]
        self.assertEqual((up["N"], up["K"], up["groups"]), (5760, 2880, 4))
        self.assertTrue(all(mod.forward is not None for mod in
                            (m.model.layers._children["0"].mlp.experts,)))
        self.assertEqual(len(m.hooks), 1)
        self.assertEqual(m.model.layers._children["0"].mlp.experts._mxmoe_converted, "fused")

    def test_recipe_mx32_and_bf16_by_rule(self):
        # H = 2050: no GEMM that contracts over it can be MX (legality rule),
        # the down projection (K = I = 768, N = 2050) neither (its input
        # gradient contracts over N).
        r = self.convert(model(qwen3_layer(h=2050), qwen3_layer()), recipe="mx32")
        g = r["gemms"]
        self.assertEqual(g["model.layers.0.mlp.experts.gate_up_proj"], "bf16")
        self.assertEqual(g["model.layers.0.mlp.experts.down_proj"], "bf16")
        self.assertEqual(g["model.layers.1.mlp.experts.gate_up_proj"], "mx32")
        self.assertEqual(g["model.layers.1.mlp.experts.down_proj"], "mx32")
        rule = {d["fqn"]: d["rule"] for d in r["policy"]["decisions"]}
        self.assertEqual(rule["model.layers.0.mlp.experts.gate_up_proj"], "legality")

    def test_report_cached_and_no_conversion(self):
        m = model(qwen3_layer())
        a = hf.precision_report(m, chip="sm_90a", cache=self.cache)
        self.assertEqual(self.cache.stats["policies"], 1)
        self.assertFalse(hasattr(m.model.layers._children["0"].mlp.experts, "_mxmoe_converted"))
        b = hf.precision_report(m, chip="sm_90a", cache=kc.KernelCache(self.tmp.name,
                                compile_fn=lambda *a, **k: self.fail("compiled again")))
        self.assertEqual(a, b)
        self.assertEqual(a["recipe"], "auto -> mx128")

    def test_pending_without_compiler(self):
        # A GPU machine without the compiler library: the report's input is
        # left pending, the error names the fill command; filling it where
        # the compiler is makes the next call a hit.
        def no_compiler(*a, **kw):
            raise OSError("libMLIR.so.22.1: cannot open shared object file")
        m = model(qwen3_layer())
        gpu = kc.KernelCache(self.tmp.name, compile_fn=no_compiler)
        with self.assertRaisesRegex(RuntimeError, "--fill-pending"):
            hf.convert(m, chip="sm_90a", cache=gpu)
        self.assertFalse(hasattr(m.model.layers._children["0"].mlp.experts, "_mxmoe_converted"))
        pending = [f for f in os.listdir(os.path.join(self.tmp.name, "policy"))
                   if f.endswith(".pending.json")]
        self.assertEqual(len(pending), 1)
        self.assertEqual(self.cache.fill_pending(), 1)
        self.assertEqual(os.listdir(os.path.join(self.tmp.name, "policy")),
                         [pending[0].replace(".pending", "")])
        r = hf.convert(m, chip="sm_90a", cache=gpu)
        self.assertEqual(set(r["gemms"].values()), {"mx128"})

    def test_filter_and_unknown_experts(self):
        odd = cls("WeirdExperts")(w=P(4, 4))
        r = self.convert(model(qwen3_layer(), qwen3_layer(), odd=odd),
                         filter_fqns=["layers.1."])
        self.assertEqual(list(r["converted"]), ["model.layers.0.mlp.experts"])
        self.assertEqual(r["skipped"]["model.layers.1.mlp.experts"], "filter_fqns")
        self.assertIn("not a routed-experts layout", r["skipped"]["model.odd"])
        self.assertNotIn("model.layers.1.mlp.experts.gate_up_proj", r["gemms"])

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "recipe must be one of"):
            self.convert(model(qwen3_layer()), recipe="mx64")
        with self.assertRaisesRegex(ValueError, "no routed-experts module found"):
            self.convert(model(cls("DenseMLP")(w=P(4, 4))))

    def test_fill_from_stand_in(self):
        # What a machine with the compiler fills for GPU machines: the
        # report and both expert GEMMs' kernels with the policy's recipe.
        m = hf.stand_in({
            "model.layers.0.mlp.gate": ("TopKRouter", {"weight": P(8, 256)}),
            "model.layers.0.mlp.experts": ("Experts", {"gate_up_proj": P(8, 256, 256),
                                                       "down_proj": P(8, 256, 128),
                                                       "act_fn": None})})
        report = hf.fill_kernel_cache(m, 512, "sm_90a", self.cache, options={"toolkit": None})
        self.assertEqual(self.cache.stats["policies"], 1)
        self.assertEqual(self.cache.stats["kernels"], 2)
        self.assertEqual([d["precision"] for d in report["decisions"]], ["bf16", "mxfp8", "mxfp8"])
        d = self.cache.grouped_mm(m=512, k=128, n=256, experts=8, chip="sm_90a",
                                  options={"toolkit": None, "recipe": "mx128"})
        self.assertTrue(os.path.isfile(os.path.join(d, "manifest.json")))
        self.assertEqual(self.cache.stats["kernels"], 2)  # a hit

    def test_policy_ir_shapes(self):
        m = model(qwen3_layer(e=8, h=256, i=128))
        cands, _ = hf._candidates(m, [])
        ir = hf.policy_ir(cands, dict(m.named_modules()), rows=64)
        self.assertIn('mxmoe.linear %a0, %a1 {fqn = "model.layers.0.mlp.gate"} : '
                      '(tensor<64x256xbf16>, tensor<8x256xbf16>) -> tensor<64x8xbf16>', ir)
        self.assertIn('{fqn = "model.layers.0.mlp.experts.gate_up_proj"} : (tensor<64x256xbf16>, '
                      'tensor<8x256x256xbf16>, tensor<8xi32>) -> tensor<64x256xbf16>', ir)
        self.assertIn('{fqn = "model.layers.0.mlp.experts.down_proj"} : (tensor<64x128xbf16>, '
                      'tensor<8x256x128xbf16>, tensor<8xi32>) -> tensor<64x256xbf16>', ir)


if __name__ == "__main__":
    unittest.main(verbosity=2)
