/*===- mxmoe-run.c - run a launch program from a C host -------------------===*\
|*                                                                            *|
|* A C host of the runtime's program executor (mxmoe-c/Runtime.h):           *|
|*                                                                            *|
|*   mxmoe-run OUT_DIR FUNCTION [--chip CHIP] --describe                     *|
|*   mxmoe-run OUT_DIR FUNCTION [--chip CHIP] --inputs IN_DIR --outputs DIR  *|
|*             [--repeat N]                                                 *|
|*                                                                            *|
|* --describe prints the program's arguments, buffers and results (no GPU   *|
|* needed). Otherwise IN_DIR/arg<i>.bin holds argument i's bytes (exactly   *|
|* its size); the program runs once on device copies of them, with device   *|
|* buffers of its sizes, on the default stream, and result i's bytes are   *|
|* written to DIR/ret<i>.bin. --repeat N then runs it N more times (status *|
|* checked once at the end) and prints the host time per run (enqueueing   *|
|* only) and the wall time per run (until the stream is done).             *|
|* Exit status: 0 success, 1 a runtime error                               *|
|* (message on stderr, e.g. a kernel that rejected its offsets), 2 usage.   *|
\*===----------------------------------------------------------------------===*/

#include "mxmoe-c/Runtime.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failed(const char *what) {
  fprintf(stderr, "mxmoe-run: %s: %s\n", what, mxmoeRtLastError());
  return 1;
}

static void printTensor(const char *kind, size_t i, MxmoeRtTensorInfo t) {
  printf("%s %zu: %s [", kind, i, t.dtype);
  for (size_t d = 0; d < t.rank; ++d)
    printf(d ? ", %" PRId64 : "%" PRId64, t.shape[d]);
  printf("] %" PRIu64 " bytes%s\n", t.bytes,
         t.zeroFilled ? " zero-filled" : "");
}

static int describe(MxmoeRtProgram p, const char *function) {
  printf("program %s: %zu args, %zu buffers, %zu steps, %zu returns\n",
         function, mxmoeRtProgramGetNumArgs(p), mxmoeRtProgramGetNumBuffers(p),
         mxmoeRtProgramGetNumSteps(p), mxmoeRtProgramGetNumReturns(p));
  MxmoeRtTensorInfo t;
  for (size_t i = 0; mxmoeRtProgramGetArg(p, i, &t) == MXMOE_RT_SUCCESS; ++i)
    printTensor("arg", i, t);
  for (size_t i = 0; mxmoeRtProgramGetBuffer(p, i, &t) == MXMOE_RT_SUCCESS; ++i)
    printTensor("buffer", i, t);
  MxmoeRtProgramSource src;
  size_t at;
  for (size_t i = 0; mxmoeRtProgramGetReturn(p, i, &src, &at) == 0; ++i)
    printf("return %zu: %s %zu\n", i,
           src == MXMOE_RT_SOURCE_ARG ? "arg" : "buffer", at);
  return 0;
}

/* Reads `path` into a fresh buffer of exactly `bytes`; NULL on error. */
static void *readExactly(const char *path, uint64_t bytes) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "mxmoe-run: cannot open %s\n", path);
    return NULL;
  }
  void *data = malloc(bytes ? bytes : 1);
  size_t got = data ? fread(data, 1, bytes, f) : 0;
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != bytes || extra) {
    fprintf(stderr, "mxmoe-run: %s must hold exactly %" PRIu64 " bytes\n", path,
            bytes);
    free(data);
    return NULL;
  }
  return data;
}

/* Device copy of IN_DIR/arg<i>.bin; 0 on success. */
static int loadArg(MxmoeRtProgram p, size_t i, const char *in, void **dev) {
  MxmoeRtTensorInfo t;
  char path[4096];
  mxmoeRtProgramGetArg(p, i, &t);
  snprintf(path, sizeof(path), "%s/arg%zu.bin", in, i);
  void *host = readExactly(path, t.bytes);
  if (!host)
    return 1;
  int rc = 0;
  *dev = NULL;
  if (t.bytes && (mxmoeRtMemAllocAsync(dev, t.bytes, NULL) ||
                  mxmoeRtMemcpyAsync(*dev, host, t.bytes, NULL) ||
                  mxmoeRtSynchronize(NULL)))
    rc = failed(path);
  free(host);
  return rc;
}

/* Writes result i to OUT_DIR/ret<i>.bin; 0 on success. */
static int saveReturn(MxmoeRtProgram p, size_t i, void **args, void **bufs,
                      const char *out) {
  MxmoeRtProgramSource src;
  size_t at;
  MxmoeRtTensorInfo t;
  mxmoeRtProgramGetReturn(p, i, &src, &at);
  if (src == MXMOE_RT_SOURCE_ARG)
    mxmoeRtProgramGetArg(p, at, &t);
  else
    mxmoeRtProgramGetBuffer(p, at, &t);
  void *dev = src == MXMOE_RT_SOURCE_ARG ? args[at] : bufs[at];
  void *host = malloc(t.bytes ? t.bytes : 1);
  if (t.bytes && (mxmoeRtMemcpyAsync(host, dev, t.bytes, NULL) ||
                  mxmoeRtSynchronize(NULL))) {
    free(host);
    return failed("reading a result");
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/ret%zu.bin", out, i);
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(host, 1, t.bytes, f) == t.bytes;
  if (f)
    fclose(f);
  free(host);
  if (!ok)
    fprintf(stderr, "mxmoe-run: cannot write %s\n", path);
  return ok ? 0 : 1;
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* `repeat` runs after the first: host and wall microseconds per run. */
static int timeRuns(MxmoeRtProgram p, void **args, size_t na, void **bufs,
                    size_t nb, long repeat) {
  double t0 = seconds();
  for (long r = 0; r < repeat; ++r)
    if (mxmoeRtProgramRun(p, args, na, bufs, nb, NULL,
                          MXMOE_RT_CHECK_DEFERRED) != MXMOE_RT_SUCCESS)
      return failed("run");
  double t1 = seconds();
  if (mxmoeRtProgramCheck(p) != MXMOE_RT_SUCCESS)
    return failed("check");
  double t2 = seconds();
  printf("%ld runs: host %.2f us/run (enqueue), wall %.2f us/run\n", repeat,
         1e6 * (t1 - t0) / (double)repeat, 1e6 * (t2 - t0) / (double)repeat);
  return 0;
}

static int run(MxmoeRtProgram p, const char *in, const char *out, long repeat) {
  size_t na = mxmoeRtProgramGetNumArgs(p), nb = mxmoeRtProgramGetNumBuffers(p);
  void **args = calloc(na + 1, sizeof(void *));
  void **bufs = calloc(nb + 1, sizeof(void *));
  int rc = 0;
  for (size_t i = 0; i < na && !rc; ++i)
    rc = loadArg(p, i, in, &args[i]);
  for (size_t i = 0; i < nb && !rc; ++i) {
    MxmoeRtTensorInfo t;
    mxmoeRtProgramGetBuffer(p, i, &t);
    if (t.bytes && mxmoeRtMemAllocAsync(&bufs[i], t.bytes, NULL))
      rc = failed("allocating a buffer");
  }
  if (!rc && mxmoeRtProgramRun(p, args, na, bufs, nb, NULL,
                               MXMOE_RT_CHECK_SYNC) != MXMOE_RT_SUCCESS)
    rc = failed("run");
  for (size_t i = 0; i < mxmoeRtProgramGetNumReturns(p) && !rc; ++i)
    rc = saveReturn(p, i, args, bufs, out);
  if (!rc && repeat > 0)
    rc = timeRuns(p, args, na, bufs, nb, repeat);
  for (size_t i = 0; i < na; ++i)
    mxmoeRtMemFreeAsync(args[i], NULL);
  for (size_t i = 0; i < nb; ++i)
    mxmoeRtMemFreeAsync(bufs[i], NULL);
  mxmoeRtSynchronize(NULL);
  free(args);
  free(bufs);
  return rc;
}

int main(int argc, char **argv) {
  const char *chip = "sm_90a", *in = NULL, *out = NULL;
  int describeOnly = 0;
  long repeat = 0;
  for (int i = 3; i < argc; ++i) {
    if (!strcmp(argv[i], "--describe"))
      describeOnly = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "--chip"))
      chip = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--inputs"))
      in = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--outputs"))
      out = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--repeat"))
      repeat = strtol(argv[++i], NULL, 10);
    else
      argc = 0; /* usage */
  }
  if (argc < 3 || (!describeOnly && (!in || !out))) {
    fprintf(stderr, "usage: mxmoe-run OUT_DIR FUNCTION [--chip CHIP] "
                    "(--describe | --inputs IN_DIR --outputs DIR "
                    "[--repeat N])\n");
    return 2;
  }
  MxmoeRtProgram p = NULL;
  if (mxmoeRtProgramLoad(argv[1], argv[2], chip, &p) != MXMOE_RT_SUCCESS)
    return failed("load");
  int rc = describeOnly ? describe(p, argv[2]) : run(p, in, out, repeat);
  mxmoeRtProgramDestroy(p);
  return rc;
}
