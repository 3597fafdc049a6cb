# The C API library is loaded into python3 with ctypes: not in sanitized
# builds (the instrumented library needs the ASan runtime preloaded).
# UNSUPPORTED: sanitized
# RUN: env MXMOE_COMPILER_LIB=%mxmoe_obj_root/lib/libmxmoe_compiler.so %python %s %mxmoe_src_root
"""mxmoe.compile() over the C API (libmxmoe_compiler.so): the same kernels
and programs as the mxmoe-compile driver, PTX for both chips, diagnostics
with locations for bad IR and options."""
import os
import sys
import unittest

ROOT = sys.argv.pop(1)
sys.path.insert(0, os.path.join(ROOT, "python"))
import mxmoe.compiler as mc  # noqa: E402
from mxmoe import builders  # noqa: E402

IR = builders.moe_layer_ir(builders.CONFIGS["qwen3_30b_a3b"], tokens=512)


class CompileTest(unittest.TestCase):
    def test_package_entry_point(self):
        # `mxmoe.compile` as compiler.py documents it, and submodules as
        # attributes of the package (import mxmoe; mxmoe.builders...).
        import mxmoe
        out = mxmoe.compile(IR, chips=("sm_90a",), toolkit=None)
        self.assertEqual(out.manifest["chips"], ["sm_90a"])
        self.assertIs(mxmoe.builders, builders)
        with self.assertRaises(AttributeError):
            mxmoe.no_such_module  # noqa: B018

    def test_both_chips(self):
        out = mc.compile(IR, source_name="qwen3.mlir", toolkit=None)
        m = out.manifest
        self.assertEqual(m["chips"], ["sm_90a", "sm_100a"])
        self.assertEqual(m["input"], "qwen3.mlir")
        names = {(k["chip"], k["name"]) for k in m["kernels"]}
        for chip in ("sm_90a", "sm_100a"):
            self.assertIn((chip, "layers_0_moe_experts_w13_forward__grouped_matmul_2"), names)
            self.assertIn(f".target {chip}", out.ptx[chip])
            self.assertEqual(out.cubin[chip], b"")  # no toolkit given
        gemm = next(k for k in m["kernels"] if k["chip"] == "sm_90a"
                    and k["name"].endswith("w13_forward__grouped_matmul_2"))
        self.assertEqual(gemm["block"], [384, 1, 1])
        self.assertEqual(gemm["params"][0]["kind"], "tensor_map")
        fns = {p["function"] for p in m["programs"]}
        self.assertIn("layers.0.moe.experts.w2.weight_grad", fns)
        self.assertIn('"precision": "mxfp8"', out.policy_report)
        self.assertIn("mxmoe_ptx_sm_100a", out.header)

    def test_options(self):
        out = mc.compile(IR, chips=["sm_100a"], gemm_tile_n=256, excludes=["experts.w2"])
        gemm = next(k for k in out.manifest["kernels"] if k["op"] == "mxmoe.grouped_matmul")
        self.assertEqual(gemm["params"][2]["box"], [128, 256])
        self.assertEqual(gemm["block"], [192, 1, 1])  # the tcgen05 kernel
        fns = {p["function"] for p in out.manifest["programs"]}
        self.assertIn("layers.0.moe.experts.w13.forward", fns)
        self.assertNotIn("layers.0.moe.experts.w2.forward", fns)  # kept bf16

    def test_quantize_weights_once(self):
        # MX128 with the weight quantized once: the forward program returns
        # y and the transposed weight with its blocked scales, input_grad
        # takes them (and no bf16 weight).
        out = mc.compile(IR, chips=("sm_90a",), toolkit=None, recipe="mx128",
                         quantize_weights_once=True)
        progs = {p["function"]: p for p in out.manifest["programs"]}
        fwd = progs["layers.0.moe.experts.w13.forward"]
        dgrad = progs["layers.0.moe.experts.w13.input_grad"]
        self.assertEqual([r["dtype"] for r in fwd["returns"]], ["bf16", "f8E4M3FN", "f8E8M0FNU"])
        self.assertEqual([a["dtype"] for a in dgrad["args"]], ["bf16", "f8E4M3FN", "f8E8M0FNU", "i32"])
        self.assertEqual(fwd["steps"][0]["op"], "mxmoe.quantize_weight")
        plain = mc.compile(IR, chips=("sm_90a",), toolkit=None, recipe="mx128")
        fwd = {p["function"]: p for p in plain.manifest["programs"]}["layers.0.moe.experts.w13.forward"]
        self.assertEqual(len(fwd["returns"]), 1)

    def test_gemm_cluster(self):
        # gemm_cluster=2 fits only the MX128 2D x 3D bf16 kernels (forward,
        # input gradient): a layer with a weight gradient is rejected with
        # the op's diagnostic, as an odd CTA count is at option checking.
        with self.assertRaises(mc.CompileError) as e:
            mc.compile(IR, chips=("sm_90a",), toolkit=None, recipe="mx128", gemm_cluster=2)
        self.assertIn("gemm-cluster=2 is for the sm_90a MX128 2D x 3D kernels with bf16 output", str(e.exception))
        with self.assertRaises(mc.CompileError) as e:
            mc.compile(IR, chips=("sm_90a",), toolkit=None, gemm_cluster=2, gemm_ctas=131)
        self.assertIn("gemm-cluster=2 needs an even gemm-ctas (whole clusters), got 131", str(e.exception))

    def test_builders_recipe(self):
        # No recipe on the expert ops unless asked: the pipeline's recipe
        # option applies to builder IR (a recipe on an op would win).
        cfg = builders.CONFIGS["qwen3_30b_a3b"]
        self.assertNotIn("mx_recipe", builders.moe_layer_ir(cfg, tokens=64))
        ir = builders.moe_layer_ir(cfg, tokens=64, granularity="mx128")
        self.assertEqual(ir.count("granularity = mx128"), 2)
        self.assertIn("rounding = floor", builders.moe_layer_ir(cfg, tokens=64, rounding="floor"))
        with self.assertRaises(ValueError):
            builders.moe_layer_ir(cfg, tokens=64, granularity="mx64")

    def test_warnings_and_opt_level(self):
        # An MX linear in a tiled MLP with a run-time token count stays
        # uncompiled: a warning in out.warnings and a CompileWarning.
        ir = """
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x64xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "mlp"} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %a: tensor<64x64xbf16>):
    %h = mxmoe.linear %xs, %a {fqn = "mlp.w", precision = #mxmoe.precision<mxfp8>} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
    mxmoe.yield %h : tensor<?x64xbf16>
  }
  return %y : tensor<?x64xbf16>
}
"""
        with self.assertWarns(mc.CompileWarning) as w:
            out = mc.compile(ir, chips=["sm_90a"], source_name="tiled.mlp", llvm_opt_level=0)
        self.assertIn("tiled.mlp:5:10: warning:", str(w.warning))
        self.assertIn("warning: mxmoe: not compiled to kernels", out.warnings)
        self.assertEqual([u["fqn"] for u in out.manifest["uncompiled"]][:1], ["mlp.w"])
        self.assertEqual(mc.compile(IR, chips=["sm_90a"]).warnings, "")
        with self.assertRaises(mc.CompileError) as e:
            mc.compile(IR, chips=["sm_90a"], llvm_opt_level=4)
        self.assertIn("llvm-opt-level must be 0, 1, 2 or 3, got 4", str(e.exception))
        # The tiled MLP's auto rule: square = ceil(T / H) shards.
        static = (ir.replace("%x: tensor<?x64xbf16>", "%x: tensor<256x64xbf16>")
                    .replace("shards = 2 (%x, %w) {fqn = \"mlp\"} : (tensor<?x64xbf16>",
                             "shards = auto (%x, %w) {fqn = \"mlp\"} : (tensor<256x64xbf16>")
                    .replace("-> tensor<?x64xbf16> {\n  ^", "-> tensor<256x64xbf16> {\n  ^")
                    .replace("return %y : tensor<?x64xbf16>", "return %y : tensor<256x64xbf16>")
                    .replace(") -> tensor<?x64xbf16> {\n  %y", ") -> tensor<256x64xbf16> {\n  %y"))
        out = mc.compile(static, chips=["sm_90a"], toolkit=None, tile_rule="square")
        self.assertEqual(out.manifest["tiled_mlps"][0]["shards"], 4)
        with self.assertRaises(mc.CompileError) as e:
            mc.compile(static, chips=["sm_90a"], tile_rule="cube")
        self.assertIn("tile-rule must be tokens or square, got 'cube'", str(e.exception))

    def test_missing_ptxas(self):
        # A toolkit without bin/ptxas: PTX only, with a warning naming it.
        with self.assertWarns(mc.CompileWarning) as w:
            out = mc.compile(IR, chips=["sm_90a"], toolkit="/nonexistent-cuda")
        self.assertIn("ptxas not found at /nonexistent-cuda/bin/ptxas", str(w.warning))
        self.assertEqual(out.cubin["sm_90a"], b"")
        self.assertIn(".target sm_90a", out.ptx["sm_90a"])

    def test_bad_ir(self):
        with self.assertRaises(mc.CompileError) as e:
            mc.compile("func.func @f(%x: tensor<4xbf16>) {\n  mxmoe.bogus\n}\n",
                       source_name="bad.mlir")
        self.assertIn("bad.mlir:2:", str(e.exception))

    def test_bad_chip(self):
        with self.assertRaises(mc.CompileError) as e:
            mc.compile(IR, chips=["sm_80"])
        self.assertIn("unsupported chip 'sm_80'; supported: sm_90a, sm_100a, sm_103a", str(e.exception))

    def test_bad_tile(self):
        with self.assertRaises(mc.CompileError) as e:
            mc.compile(IR, chips=["sm_90a"], gemm_tile_n=256)
        self.assertIn("gemm-tile-n must be 0 (auto), 64 or 128 (192 only when every chip is sm_90a, 256 only when every chip is sm_100a or sm_103a), got 256", str(e.exception))


if __name__ == "__main__":
    unittest.main(verbosity=1)
