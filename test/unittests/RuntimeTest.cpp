//===- RuntimeTest.cpp - the C runtime's error paths (no GPU needed) ------===//
//
// On a machine without an NVIDIA driver every entry point must fail with a
// status and a message, never crash. With a driver (the device), loading a
// garbage image must report a CUDA error by name.
//
//===----------------------------------------------------------------------===//

#include "mxmoe-c/Runtime.h"

#include <gtest/gtest.h>

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
