//===- Program.cpp - C executor of mxmoe-compile's launch programs --------===//
//
// mxmoeRtProgram* of mxmoe-c/Runtime.h: reads a compile output's
// manifest.json (nlohmann-json), binds one program's steps to its kernels
// once, and runs it on caller buffers: zero-fills, status words reset,
// tensor maps encoded and cached by the addresses they describe, one
// launch per step. The manifest's format: docs/mxmoe-compile.md.
//
//===----------------------------------------------------------------------===//

#include "Program.h"
#include "Driver.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

using namespace mxmoe::rt;
using nlohmann::json;

namespace {

/// The manifest is not what the runtime expects (INVALID_ARGUMENT), or
/// lacks the program or its kernels (NOT_FOUND).
struct ManifestError {
  std::string what;
  MxmoeRtStatus status = MXMOE_RT_ERROR_INVALID_ARGUMENT;
};

const json &field(const json &j, const char *key, const std::string &where) {
  auto it = j.find(key);
  if (it == j.end())
    throw ManifestError{where + " has no \"" + key + "\""};
  return *it;
}

uint64_t dtypeBytes(const std::string &dtype) {
  if (dtype == "i64" || dtype == "f64")
    return 8;
  if (dtype == "i32" || dtype == "f32")
    return 4;
  if (dtype == "bf16" || dtype == "f16" || dtype == "i16")
    return 2;
  if (dtype == "i8" || dtype.rfind("f8", 0) == 0)
    return 1;
  throw ManifestError{"unsupported constant dtype '" + dtype + "'"};
}

Tensor readTensor(const json &j, const std::string &where) {
  Tensor t;
  t.dtype = field(j, "dtype", where).get<std::string>();
  t.shape = field(j, "shape", where).get<std::vector<int64_t>>();
  t.bytes = field(j, "bytes", where).get<uint64_t>();
  t.zero = j.value("zero", false);
  return t;
}

/// A constant's values as little-endian bytes of its dtype.
std::vector<uint8_t> constantBytes(const json &c, const Tensor &t,
                                   const std::string &where) {
  uint64_t size = dtypeBytes(t.dtype);
  std::vector<uint8_t> out;
  for (const json &v : field(c, "values", where)) {
    uint8_t b[8];
    if (t.dtype == "f32") {
      float f = v.get<float>();
      std::memcpy(b, &f, 4);
    } else if (t.dtype == "f64") {
      double f = v.get<double>();
      std::memcpy(b, &f, 8);
    } else if (t.dtype[0] == 'i') {
      int64_t i = v.get<int64_t>();
      std::memcpy(b, &i, 8); // little endian: the low `size` bytes
    } else {
      throw ManifestError{where + ": constants of dtype " + t.dtype +
                          " are not supported"};
    }
    out.insert(out.end(), b, b + size);
  }
  if (out.size() != t.bytes)
    throw ManifestError{where + ": " + std::to_string(out.size()) +
                        " bytes of values for " + std::to_string(t.bytes)};
  return out;
}

uint32_t swizzleBytes(const std::string &s) {
  if (s == "none")
    return 0;
  if (s == "32B" || s == "64B" || s == "128B")
    return static_cast<uint32_t>(std::stoul(s));
  throw ManifestError{"unknown tensor-map swizzle '" + s + "'"};
}

MxmoeRtTensorMapDataType mapDataType(const std::string &s) {
  if (s == "uint8")
    return MXMOE_RT_TENSOR_MAP_UINT8;
  if (s == "16U4_ALIGN16B")
    return MXMOE_RT_TENSOR_MAP_16U4_ALIGN16B;
  throw ManifestError{"unknown tensor-map data type '" + s + "'"};
}

/// Bytes of the arg, constant or buffer `s` from its view offset on.
uint64_t sourceBytes(const MxmoeRtProgram_ &p, const Source &s) {
  const std::vector<Tensor> &t = s.kind == Source::Arg        ? p.args
                                 : s.kind == Source::Constant ? p.constants
                                                              : p.buffers;
  return t[s.index].bytes - s.offset;
}

/// Source of an operand binding (arg, constant or buffer), range-checked;
/// a row view ("offset_bytes", and "iteration_bytes" per iteration of the
/// enclosing loop step: `iteration`, -1 outside loops) starts that many
/// bytes in.
Source operandSource(const MxmoeRtProgram_ &p, const json &b,
                     const std::string &where, int64_t iteration) {
  auto pick = [&](const char *key, Source::Kind kind, size_t count) {
    size_t i = b[key].get<size_t>();
    if (i >= count)
      throw ManifestError{where + ": " + key + " " + std::to_string(i) +
                          " out of range (" + std::to_string(count) + ")"};
    return Source{kind, i};
  };
  Source s;
  if (b.contains("arg"))
    s = pick("arg", Source::Arg, p.args.size());
  else if (b.contains("constant"))
    s = pick("constant", Source::Constant, p.constants.size());
  else if (b.contains("buffer"))
    s = pick("buffer", Source::Buffer, p.buffers.size());
  else
    throw ManifestError{where + ": a binding with no source"};
  int64_t first = b.value("offset_bytes", int64_t(0));
  int64_t step = b.value("iteration_bytes", int64_t(0));
  if (step != 0 && iteration < 0)
    throw ManifestError{where + ": iteration_bytes outside a loop step"};
  uint64_t bytes = sourceBytes(p, s);
  // (Each term at most the operand's bytes and iteration < 2^20: no
  // overflow.)
  if (first < 0 || step < 0 || static_cast<uint64_t>(first) > bytes ||
      static_cast<uint64_t>(step) > bytes)
    throw ManifestError{where + ": a view offset outside its " +
                        std::to_string(bytes) + "-byte operand"};
  uint64_t offset = static_cast<uint64_t>(first) +
                    static_cast<uint64_t>(step) *
                        static_cast<uint64_t>(std::max<int64_t>(iteration, 0));
  uint64_t len = b.value("view_bytes", uint64_t(0));
  if (offset > bytes || len > bytes - offset || offset % 16 != 0)
    throw ManifestError{where + ": a view of " + std::to_string(len) +
                        " bytes at byte " + std::to_string(offset) + " of a " +
                        std::to_string(bytes) +
                        "-byte operand (views lie inside it, 16-byte "
                        "aligned)"};
  s.offset = offset;
  return s;
}

/// The operand of a tensor map holds every byte the map can address: rows
/// of `rowStrideBytes`, the last one `inner` elements long.
void checkMapExtent(const MxmoeRtProgram_ &p, const MapSpec &m,
                    const std::string &where) {
  uint64_t bits = m.dataType == MXMOE_RT_TENSOR_MAP_UINT8 ? 8 : 4;
  uint64_t innerBytes = (m.inner * bits + 7) / 8;
  uint64_t have = sourceBytes(p, m.operand);
  if (m.inner == 0 || m.rows == 0 || m.rowStrideBytes < innerBytes ||
      m.rows - 1 > (have - innerBytes) / m.rowStrideBytes || have < innerBytes)
    throw ManifestError{
        where + ": tensor map of " + std::to_string(m.rows) + " rows x " +
        std::to_string(m.inner) + " elements, row stride " +
        std::to_string(m.rowStrideBytes) + " bytes, does not fit its " +
        std::to_string(have) + "-byte operand"};
}

/// The tensor map of parameter `param` bound by `b` (extent from the
/// binding's "tensor_map", else from the parameter).
MapSpec mapSpec(const MxmoeRtProgram_ &p, const json &param, const json &b,
                const std::string &where, int64_t iteration) {
  const json &tm = b["tensor_map"];
  const json &extent = tm.is_object() ? tm : param;
  auto dims = field(extent, "dims", where).get<std::vector<uint64_t>>();
  auto box = field(param, "box", where).get<std::vector<uint32_t>>();
  if (dims.size() != 2 || box.size() != 2)
    throw ManifestError{where + ": tensor maps are 2-D"};
  MapSpec m{operandSource(p, b, where, iteration),
            mapDataType(param.value("data_type", "uint8")),
            dims[0],
            dims[1],
            field(extent, "row_stride_bytes", where).get<uint64_t>(),
            box[0],
            box[1],
            swizzleBytes(field(param, "swizzle", where))};
  checkMapExtent(p, m, where);
  return m;
}

/// What a kernel parameter or a step binding passes.
enum class Kind { Pointer, Scalar, TensorMap };

const char *kindName(Kind k) {
  return k == Kind::Pointer  ? "a pointer"
         : k == Kind::Scalar ? "a scalar"
                             : "a tensor map";
}

Kind paramKind(const json &param, const std::string &where) {
  std::string kind = field(param, "kind", where).get<std::string>();
  if (kind == "tensor_map")
    return Kind::TensorMap;
  if (kind.rfind("device pointer", 0) == 0)
    return Kind::Pointer;
  if (kind != "scalar")
    throw ManifestError{where + ": unknown parameter kind '" + kind + "'"};
  std::string type = param.value("type", "");
  if (type != "i64") // mxmoeRtLaunchWithScalars passes int64 values
    throw ManifestError{where + ": scalar parameters are i64, not '" + type +
                        "'"};
  return Kind::Scalar;
}

Kind bindingKind(const json &b) {
  if (b.contains("value"))
    return Kind::Scalar;
  return b.contains("tensor_map") ? Kind::TensorMap : Kind::Pointer;
}

/// Binding `b` of parameter `param` into `step`.
void bindParam(MxmoeRtProgram_ &p, Step &step, const json &param, const json &b,
               const std::string &at, int64_t iteration) {
  if (b.contains("value")) {
    step.scalars.push_back(b["value"].get<int64_t>());
  } else if (b.value("status", false)) {
    step.pointers.push_back({Source::Status, p.statusKernels.size()});
    p.statusKernels.push_back(step.kernel);
  } else if (b.contains("tensor_map")) {
    step.pointers.push_back({Source::Map, p.maps.size()});
    p.maps.push_back(mapSpec(p, param, b, at, iteration));
  } else {
    Source s = operandSource(p, b, at, iteration);
    uint64_t need = param.value("bytes", uint64_t(0));
    if (sourceBytes(p, s) < need)
      throw ManifestError{at + ": a " + std::to_string(sourceBytes(p, s)) +
                          "-byte operand for a " + std::to_string(need) +
                          "-byte parameter"};
    step.pointers.push_back(s);
  }
}

/// Step `s`'s bindings, one per parameter of kernel `k` and of its kind;
/// pointers and tensor maps before scalars (the order in which
/// mxmoeRtLaunchWithScalars passes them).
void bindParams(MxmoeRtProgram_ &p, Step &step, const json &s, const json &k,
                const std::string &where, int64_t iteration) {
  const json &params = field(k, "params", where);
  const json &bindings = field(s, "bindings", where);
  if (!params.is_array() || !bindings.is_array() ||
      bindings.size() != params.size() || params.size() > 64)
    throw ManifestError{where + ": " + std::to_string(bindings.size()) +
                        " bindings for the " + std::to_string(params.size()) +
                        " parameters (at most 64) of kernel " + step.kernel};
  bool scalars = false;
  for (size_t j = 0; j < bindings.size(); ++j) {
    std::string at = where + " binding " + std::to_string(j);
    Kind want = paramKind(params[j], at), have = bindingKind(bindings[j]);
    if (want != have)
      throw ManifestError{at + ": binds " + kindName(have) + " to " +
                          kindName(want) + " parameter"};
    if (scalars && want != Kind::Scalar)
      throw ManifestError{at + ": a pointer parameter after a scalar one"};
    scalars = want == Kind::Scalar;
    bindParam(p, step, params[j], bindings[j], at, iteration);
  }
}

std::array<uint32_t, 3> dims3(const json &j, const std::string &what,
                              const std::string &where) {
  if (!j.is_array())
    throw ManifestError{where + ": no " + what};
  auto d = j.get<std::array<uint32_t, 3>>();
  if (!d[0] || !d[1] || !d[2])
    throw ManifestError{where + ": a zero extent in the " + what};
  return d;
}

/// Step `s` of the program, bound to kernel `k`.
Step readStep(MxmoeRtProgram_ &p, const json &s, const json &k,
              const std::string &where, int64_t iteration) {
  Step step;
  step.kernel = field(k, "name", where).get<std::string>();
  step.grid = dims3(s.contains("grid") ? s["grid"] : field(k, "grid", where),
                    "grid of kernel " + step.kernel, where);
  step.block = dims3(field(k, "block", where), "block", where);
  step.sharedBytes = k.value("dynamic_shared_memory", 0u);
  bindParams(p, step, s, k, where, iteration);
  return step;
}

std::vector<char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ManifestError{"cannot read " + path};
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return std::vector<char>(s.begin(), s.end());
}

const json &findProgram(const json &m, const std::string &function) {
  std::string have;
  for (const json &p : field(m, "programs", "manifest")) {
    std::string name = field(p, "function", "program").get<std::string>();
    if (name == function)
      return p;
    have += (have.empty() ? "" : ", ") + name;
  }
  throw ManifestError{"no program '" + function + "' (have: " + have + ")",
                      MXMOE_RT_ERROR_NOT_FOUND};
}

/// The launches of `steps` appended to p.steps: a loop step's body once
/// per iteration (its row views advanced by their iteration_bytes), in
/// order; `image` is the last kernel's manifest row.
void readSteps(MxmoeRtProgram_ &p, const json &steps,
               const std::map<std::string, const json *> &kernels,
               const std::string &chip, const std::string &where,
               int64_t iteration, const json *&image) {
  for (size_t i = 0; i < steps.size(); ++i) {
    std::string at = where + std::to_string(i);
    if (steps[i].contains("loop")) {
      const json &loop = steps[i]["loop"];
      int64_t count = field(loop, "count", at).get<int64_t>();
      if (iteration >= 0 || count < 0 || count > (1 << 20))
        throw ManifestError{at + ": a loop inside a loop, or a count of " +
                            std::to_string(count)};
      if (p.steps.size() + count * field(loop, "steps", at).size() > (1u << 20))
        throw ManifestError{at + ": more than 2^20 launches in all"};
      for (int64_t k = 0; k < count; ++k)
        readSteps(p, field(loop, "steps", at), kernels, chip,
                  at + " iteration " + std::to_string(k) + " step ", k, image);
      continue;
    }
    std::string name = field(steps[i], "kernel", at).get<std::string>();
    auto k = kernels.find(name);
    if (k == kernels.end())
      throw ManifestError{"kernel " + name + " not built for " + chip,
                          MXMOE_RT_ERROR_NOT_FOUND};
    image = k->second;
    p.steps.push_back(readStep(p, steps[i], *k->second, at, iteration));
  }
}

/// Everything of `function` for `chip` from the manifest in `outDir`.
void bind(MxmoeRtProgram_ &p, const std::string &outDir,
          const std::string &chip) {
  std::vector<char> text = readFile(outDir + "/manifest.json");
  json m = json::parse(text.begin(), text.end());
  if (m.value("programs_only", false))
    throw ManifestError{"manifest.json is a programs-only compile "
                        "(mxmoe-compile --programs-only): no kernel images "
                        "to load; bind it to compiled kernels "
                        "(python/mxmoe/kernel_cache.py) or compile without "
                        "--programs-only"};
  const json &prog = findProgram(m, p.function);
  std::map<std::string, const json *> kernels;
  for (const json &k : field(m, "kernels", "manifest"))
    if (k.value("chip", "") == chip)
      kernels[field(k, "name", "kernel").get<std::string>()] = &k;
  for (const json &a : field(prog, "args", p.function))
    p.args.push_back(readTensor(a, p.function + " arg"));
  for (const json &b : field(prog, "buffers", p.function))
    p.buffers.push_back(readTensor(b, p.function + " buffer"));
  for (const json &c : prog.value("constants", json::array())) {
    p.constants.push_back(readTensor(c, p.function + " constant"));
    p.constantBytes.push_back(
        constantBytes(c, p.constants.back(), p.function + " constant"));
  }
  const json *image = nullptr;
  readSteps(p, field(prog, "steps", p.function), kernels, chip,
            p.function + " step ", -1, image);
  for (const json &r : field(prog, "returns", p.function)) {
    Source s = operandSource(p, r, p.function + " return", -1);
    if (s.offset != 0)
      throw ManifestError{p.function + ": a view as a result"};
    if (s.kind == Source::Constant)
      throw ManifestError{p.function + ": a constant as a result"};
    p.returns.push_back(
        {s.kind == Source::Arg ? MXMOE_RT_SOURCE_ARG : MXMOE_RT_SOURCE_BUFFER,
         s.index});
  }
  if (image) { // the cubin ptxas built, else the PTX
    std::string cubin = image->value("cubin", "");
    bool isCubin =
        cubin.size() > 6 && cubin.substr(cubin.size() - 6) == ".cubin";
    p.image = readFile(
        outDir + "/" +
        (isCubin ? cubin : field(*image, "ptx", "kernel").get<std::string>()));
    if (!isCubin)
      p.image.push_back('\0');
  }
}

} // namespace

extern "C" {

MxmoeRtStatus mxmoeRtProgramLoad(const char *outDir, const char *function,
                                 const char *chip, MxmoeRtProgram *program) {
  if (!outDir || !function || !chip || !program)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtProgramLoad: null directory, function, chip or result");
  *program = nullptr;
  std::string where =
      std::string("mxmoeRtProgramLoad(") + outDir + ", " + function + "): ";
  try {
    auto p = std::make_unique<MxmoeRtProgram_>();
    p->function = function;
    bind(*p, outDir, chip);
    *program = p.release();
    return MXMOE_RT_SUCCESS;
  } catch (const ManifestError &e) {
    return fail(e.status, where + e.what);
  } catch (const json::exception &e) {
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                where + "malformed manifest.json: " + e.what());
  } catch (const std::exception &e) {
    return fail(MXMOE_RT_ERROR_INTERNAL, where + e.what());
  }
}

} // extern "C"
