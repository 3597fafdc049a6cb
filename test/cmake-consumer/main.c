/* Embeds the mxmoe compiler through the installed C API: compiles a routed
 * expert GEMM for sm_90a and sm_100a, checks the artifacts, then checks that
 * bad IR fails with a located diagnostic. Exit status 0 = all good. */
#include "mxmoe-c/Compiler.h"
#include "mxmoe-c/Runtime.h"

#include <stdio.h>
#include <string.h>

static const char *kIR =
    "func.func @moe(%x: tensor<256x512xbf16>, %w: tensor<4x1024x512xbf16>,\n"
    "               %o: tensor<4xi32>) -> tensor<256x1024xbf16> {\n"
    "  %y = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = \"experts.w13\"}\n"
    "      : (tensor<256x512xbf16>, tensor<4x1024x512xbf16>, tensor<4xi32>)\n"
    "      -> tensor<256x1024xbf16>\n"
    "  return %y : tensor<256x1024xbf16>\n"
    "}\n";

static int contains(MxmoeStringRef s, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= s.length; ++i)
    if (memcmp(s.data + i, needle, n) == 0)
      return 1;
  return 0;
}

int main(void) {
  MxmoeCompiler c = mxmoeCompilerCreate();
  MxmoeCompileOptions o = mxmoeCompileOptionsDefault();
  MxmoeArtifacts a = NULL;
  MxmoeStringRef ir = {kIR, strlen(kIR)}, name = {"consumer.mlir", 13};
  if (!mxmoeCompile(c, ir, name, &o, &a).value) {
    MxmoeStringRef e = mxmoeCompilerLastError(c);
    fprintf(stderr, "compile failed: %.*s\n", (int)e.length, e.data);
    return 1;
  }
  MxmoeStringRef m = mxmoeArtifactsGetManifest(a);
  int ok = mxmoeArtifactsGetNumChips(a) == 2 &&
           contains(m, "experts_w13_forward__grouped_matmul_2") &&
           contains(m, "\"programs\"") &&
           contains(mxmoeArtifactsGetPTX(a, 0), ".target sm_90a") &&
           contains(mxmoeArtifactsGetPTX(a, 1), "tcgen05.mma") &&
           mxmoeArtifactsGetWarnings(a).length == 0;
  printf("chips %zu, manifest %zu bytes, sm_90a PTX %zu bytes: %s\n",
         mxmoeArtifactsGetNumChips(a), m.length,
         mxmoeArtifactsGetPTX(a, 0).length, ok ? "ok" : "MISMATCH");
  mxmoeArtifactsDestroy(a);

  MxmoeStringRef bad = {"func.func @f() {\n  mxmoe.nope\n}\n", 31};
  MxmoeArtifacts b = NULL;
  int rejected = !mxmoeCompile(c, bad, name, &o, &b).value && b == NULL &&
                 contains(mxmoeCompilerLastError(c), "consumer.mlir:2:");
  printf("bad IR rejected with a located diagnostic: %s\n",
         rejected ? "yes" : "no");
  mxmoeCompilerDestroy(c);
  /* The runtime is linkable too (no GPU needed to call into it). */
  printf("runtime last error: '%s'\n", mxmoeRtLastError());
  return ok && rejected ? 0 : 1;
}
