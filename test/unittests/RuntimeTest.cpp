//===- RuntimeTest.cpp - the C runtime's error paths (no GPU needed) ------===//
//
// On a machine without an NVIDIA driver every entry point must fail with a
// status and a message, never crash. With a driver (the device), loading a
// garbage image must report a CUDA error by name.
//
//===----------------------------------------------------------------------===//

#include "mxmoe-c/Runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <string>

namespace {
bool haveDriver() {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h)
    dlclose(h);
  return h != nullptr;
}
} // namespace

TEST(Runtime, InvalidArguments) {
  MxmoeRtModule m = nullptr;
  EXPECT_EQ(mxmoeRtModuleLoad(nullptr, 10, &m),
            MXMOE_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxmoeRtLastError()).find("must be non-null"),
            std::string::npos);
  const uint32_t grid[3] = {1, 1, 1};
  EXPECT_EQ(mxmoeRtLaunch(nullptr, "k", grid, grid, 0, nullptr, nullptr, 0),
            MXMOE_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mxmoeRtCheckStatus(nullptr, "k"), MXMOE_RT_ERROR_INVALID_ARGUMENT);
  // A copy with a null side is refused before any driver call; 0 bytes are
  // nothing to do, whatever the pointers.
  int word = 0;
  EXPECT_EQ(mxmoeRtMemcpyAsync(nullptr, &word, 4, nullptr),
            MXMOE_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxmoeRtLastError()).find("null source or destination"),
            std::string::npos);
  EXPECT_EQ(mxmoeRtMemcpyAsync(&word, nullptr, 4, nullptr),
            MXMOE_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mxmoeRtMemcpyAsync(nullptr, nullptr, 0, nullptr), MXMOE_RT_SUCCESS);
  void *dev = &word;
  EXPECT_EQ(mxmoeRtMemAllocAsync(nullptr, 128, nullptr),
            MXMOE_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mxmoeRtMemAllocAsync(&dev, 0, nullptr),
            MXMOE_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dev, nullptr); // cleared on failure
  EXPECT_EQ(mxmoeRtMemFreeAsync(nullptr, nullptr), MXMOE_RT_SUCCESS);
  // Scalars (a grouped GEMM's sizes): a null array with a count, or more
  // than 64 parameters in all, is refused before any driver call.
  auto fake = reinterpret_cast<MxmoeRtModule>(uintptr_t{16});
  void *ptrs[64] = {};
  int64_t sizes[8] = {1000, 320, 2880, 4, 1536, 92, 384, 92};
  EXPECT_EQ(mxmoeRtLaunchWithScalars(fake, "k", grid, grid, 0, nullptr, ptrs, 7,
                                     nullptr, 8),
            MXMOE_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxmoeRtLastError()).find("scalar array"),
            std::string::npos);
  EXPECT_EQ(mxmoeRtLaunchWithScalars(fake, "k", grid, grid, 0, nullptr, ptrs,
                                     60, sizes, 8),
            MXMOE_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxmoeRtLastError()).find("more than 64 parameters"),
            std::string::npos);
  mxmoeRtModuleUnload(nullptr); // no-op
}

TEST(Runtime, StatusMeaning) {
  EXPECT_EQ(mxmoeRtStatusMeaning(0), nullptr);
  ASSERT_NE(mxmoeRtStatusMeaning(1), nullptr);
  EXPECT_NE(
      std::string(mxmoeRtStatusMeaning(1)).find("rejected its group offsets"),
      std::string::npos);
  EXPECT_NE(std::string(mxmoeRtStatusMeaning(1)).find("status 1"),
            std::string::npos);
  ASSERT_NE(mxmoeRtStatusMeaning(2), nullptr);
  EXPECT_NE(std::string(mxmoeRtStatusMeaning(2)).find("rejected its sizes"),
            std::string::npos);
  EXPECT_EQ(std::string(mxmoeRtStatusMeaning(7)), "wrote unknown status 7");
  EXPECT_EQ(std::string(mxmoeRtStatusMeaning(-3)), "wrote unknown status -3");
}

TEST(Runtime, LoadReportsDriverOrPTXError) {
  const char junk[] = "this is not PTX";
  MxmoeRtModule m = nullptr;
  MxmoeRtStatus s = mxmoeRtModuleLoad(junk, sizeof(junk), &m);
  EXPECT_EQ(m, nullptr);
  std::string msg = mxmoeRtLastError();
  if (!haveDriver()) {
    EXPECT_EQ(s, MXMOE_RT_ERROR_NO_DRIVER);
    EXPECT_NE(msg.find("libcuda.so.1"), std::string::npos) << msg;
  } else {
    EXPECT_TRUE(s == MXMOE_RT_ERROR_CUDA || s == MXMOE_RT_ERROR_NO_DRIVER)
        << msg;
    EXPECT_FALSE(msg.empty());
  }
}

namespace {
/// A compile output with one kernel `k` (pointer, status word, scalar) and
/// one program `f` whose steps are `steps` (JSON), written to a fresh
/// directory; mxmoeRtProgramLoad's status on it.
MxmoeRtStatus loadProgram(const std::string &steps, MxmoeRtProgram &p) {
  char dir[] = "/tmp/mxmoe-program-XXXXXX";
  if (!mkdtemp(dir))
    return MXMOE_RT_ERROR_INTERNAL;
  std::string d = dir;
  std::FILE *ptx = std::fopen((d + "/k.ptx").c_str(), "w");
  std::fputs("// not loaded: mxmoeRtProgramLoad only binds", ptx);
  std::fclose(ptx);
  std::string manifest = R"json({"kernels": [{"name": "k", "chip": "sm_90a",
    "ptx": "k.ptx", "block": [128, 1, 1], "grid": "per program step",
    "params": [{"index": 0, "kind": "device pointer", "bytes": 16},
               {"index": 1, "kind": "device pointer (noalias)"},
               {"index": 2, "kind": "scalar", "type": "i64", "name": "n"}]}],
    "programs": [{"function": "f",
      "args": [{"shape": [3, 8], "dtype": "f16", "bytes": 48}],
      "buffers": [{"shape": [4], "dtype": "f32", "bytes": 16, "id": 0}],
      "returns": [{"buffer": 0}], "steps": )json" +
                         steps + "}]}";
  std::FILE *m = std::fopen((d + "/manifest.json").c_str(), "w");
  std::fputs(manifest.c_str(), m);
  std::fclose(m);
  return mxmoeRtProgramLoad(dir, "f", "sm_90a", &p);
}

std::string step(const std::string &arg) {
  return R"({"kernel": "k", "grid": [1, 1, 1], "bindings": [)" + arg +
         R"(, {"status": true}, {"value": 8}]})";
}
} // namespace

// Loop steps (lib/Target/ManifestPrograms.cpp): the body runs once per
// iteration, its row views advanced by iteration_bytes; views must stay
// inside their operand, 16-byte aligned, and exist only inside loops.
TEST(Runtime, ProgramLoopSteps) {
  MxmoeRtProgram p = nullptr;
  std::string body = step(R"({"arg": 0, "iteration_bytes": 16})");
  ASSERT_EQ(loadProgram(R"([{"loop": {"first": 0, "count": 3, "steps": [)" +
                            body + "]}}, " + step(R"({"buffer": 0})") + "]",
                        p),
            MXMOE_RT_SUCCESS)
      << mxmoeRtLastError();
  EXPECT_EQ(mxmoeRtProgramGetNumSteps(p), 4u);
  EXPECT_EQ(mxmoeRtProgramGetNumStatusWords(p), 4u);
  mxmoeRtProgramDestroy(p);
  auto refused = [&](const std::string &steps, const char *why) {
    MxmoeRtProgram q = nullptr;
    EXPECT_EQ(loadProgram(steps, q), MXMOE_RT_ERROR_INVALID_ARGUMENT) << why;
    EXPECT_EQ(q, nullptr);
    EXPECT_NE(std::string(mxmoeRtLastError()).find(why), std::string::npos)
        << mxmoeRtLastError();
  };
  // A fourth iteration would start at byte 48 of the 48-byte argument.
  refused(R"([{"loop": {"count": 4, "steps": [)" + body + "]}}]",
          "-byte operand for a 16-byte parameter");
  refused(R"([{"loop": {"count": 2, "steps": [)" +
              step(R"({"arg": 0, "iteration_bytes": 8})") + "]}}]",
          "16-byte aligned");
  refused("[" + body + "]", "iteration_bytes outside a loop step");
  refused(
      R"([{"loop": {"count": 2, "steps": [{"loop": {"count": 1, "steps": []}}]}}])",
      "a loop inside a loop");
}
