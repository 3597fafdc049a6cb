//===- MXMoEAttrs.cpp - mxmoe attributes ----------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEAttrs.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mxmoe;

#include "mxmoe/Dialect/MXMoE/IR/MXMoEEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mxmoe/Dialect/MXMoE/IR/MXMoEAttrs.cpp.inc"

void MXMoEDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mxmoe/Dialect/MXMoE/IR/MXMoEAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ScaleLayoutAttr
//===----------------------------------------------------------------------===//

// #mxmoe.scale_layout<row_major>
// #mxmoe.scale_layout<blocked_128x4>
// #mxmoe.scale_layout<blocked_128x4, per_k_group>
// #mxmoe.scale_layout<compact, tile = [r, c]>
// #mxmoe.scale_layout<compact, tile = [1, c], per_k_group>
Attribute ScaleLayoutAttr::parse(AsmParser &parser, Type) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  std::optional<ScaleLayoutKind> kind = symbolizeScaleLayoutKind(kindName);
  if (!kind) {
    parser.emitError(loc) << "unknown scale layout '" << kindName
                          << "'; expected row_major, blocked_128x4 or compact";
    return {};
  }
  bool perKGroup = false;
  SmallVector<int64_t> tile;
  while (succeeded(parser.parseOptionalComma())) {
    llvm::SMLoc flagLoc = parser.getCurrentLocation();
    StringRef flag;
    if (parser.parseKeyword(&flag))
      return {};
    bool repeated = flag == "per_k_group" ? perKGroup
                    : flag == "tile"      ? !tile.empty()
                                          : false;
    if (repeated) {
      parser.emitError(flagLoc)
          << "scale layout modifier '" << flag << "' given twice";
      return {};
    }
    if (flag == "per_k_group") {
      perKGroup = true;
    } else if (flag == "tile") {
      if (parser.parseEqual() || parser.parseLSquare())
        return {};
      if (parser.parseCommaSeparatedList(
              [&] { return parser.parseInteger(tile.emplace_back()); }) ||
          parser.parseRSquare())
        return {};
    } else {
      parser.emitError(flagLoc) << "unknown scale layout modifier '" << flag
                                << "'; expected per_k_group or tile = [r, c]";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ScaleLayoutAttr>(loc, parser.getContext(), *kind,
                                            perKGroup, tile);
}

void ScaleLayoutAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyScaleLayoutKind(getKind());
  if (!getTile().empty()) {
    printer << ", tile = [";
    llvm::interleaveComma(getTile(), printer);
    printer << "]";
  }
  if (getPerKGroup())
    printer << ", per_k_group";
  printer << ">";
}

LogicalResult
ScaleLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        ScaleLayoutKind kind, bool perKGroup,
                        ArrayRef<int64_t> tile) {
  if (perKGroup && kind == ScaleLayoutKind::row_major)
    return emitError() << "per_k_group applies only to the blocked_128x4 "
                          "and compact scale layouts";
  if (tile.empty()) {
    if (kind == ScaleLayoutKind::compact)
      return emitError() << "the compact scale layout needs tile = [r, c] "
                            "(one E8M0 scale per r x c tile of the data)";
    return success();
  }
  if (tile.size() != 2 || tile[0] < 1 || tile[1] < ::mxmoe::kMXBlockSize ||
      tile[1] % ::mxmoe::kMXBlockSize != 0)
    return emitError() << "tile = [r, c] needs r >= 1 rows and c a multiple "
                          "of 32 along the contraction axis (one E8M0 scale "
                          "per r x c tile of the data), got ["
                       << tile << "]";
  if (perKGroup && tile[0] != 1)
    return emitError() << "a per_k_group layout with a tile (windows along a "
                          "jagged token axis) needs tile rows 1, got ["
                       << tile << "]";
  return success();
}

//===----------------------------------------------------------------------===//
// MXRecipeAttr
//===----------------------------------------------------------------------===//

LogicalResult MXRecipeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   Type element, int64_t blockSize,
                                   RoundingMode, ScaleGranularity granularity) {
  if (!isMXElementType(element))
    return emitError() << "MX recipe element type must be an MX element type "
                          "(f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN), "
                          "got "
                       << element;
  if (blockSize != ::mxmoe::kMXBlockSize)
    return emitError() << "MX recipe block_size must be 32 (OCP MX v1.0 "
                          "shares one E8M0 scale per 32 elements), got "
                       << blockSize;
  if (granularity == ScaleGranularity::mx128 &&
      !isa<Float8E4M3FNType, Float8E5M2Type>(element))
    return emitError() << "MX recipe granularity mx128 (1x128 / 128x128 "
                          "scale tiles) needs an 8-bit element type "
                          "(f8E4M3FN or f8E5M2), got "
                       << element;
  return success();
}

//===----------------------------------------------------------------------===//
// KernelArgAttr
//===----------------------------------------------------------------------===//

Attribute KernelArgAttr::parse(AsmParser &parser, Type) {
  StringRef word;
  if (parser.parseLess() || parser.parseKeyword(&word))
    return {};
  std::optional<KernelArgKind> kind = symbolizeKernelArgKind(word);
  if (!kind) {
    parser.emitError(parser.getNameLoc(), "expected operand, result, "
                                          "tensor_map, status or value, got ")
        << word;
    return {};
  }
  int64_t index = 0;
  if (*kind != KernelArgKind::status && parser.parseInteger(index))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<KernelArgAttr>(parser.getContext(), *kind, index);
}

void KernelArgAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyKernelArgKind(getKind());
  if (getKind() != KernelArgKind::status)
    printer << " " << getIndex();
  printer << ">";
}

LogicalResult
KernelArgAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      KernelArgKind kind, int64_t index) {
  if (kind == KernelArgKind::status && index != 0)
    return emitError() << "kernel_arg status takes no index, got " << index;
  if (kind != KernelArgKind::value && index < 0)
    return emitError() << "kernel_arg " << stringifyKernelArgKind(kind)
                       << " index must be >= 0, got " << index;
  return success();
}

//===----------------------------------------------------------------------===//
// GemmConfigAttr
//===----------------------------------------------------------------------===//

LogicalResult
GemmConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       GemmStrategy strategy, int64_t tileM, int64_t tileN,
                       int64_t stages, int64_t ctas, int64_t cluster) {
  bool tcgen05 = strategy == GemmStrategy::tcgen05_mxf8f6f4;
  if (tileM != 128)
    return emitError() << "gemm_config tile_m must be 128 (the kernels' "
                          "output tile has 128 rows), got "
                       << tileM;
  bool k128 = strategy == GemmStrategy::wgmma_fp8_promote_k128;
  if (tileN != 64 && tileN != 128 && !(tcgen05 && tileN == 256) &&
      !(k128 && tileN == 192))
    return emitError() << "gemm_config tile_n must be "
                       << (tcgen05 ? "64, 128 or 256"
                           : k128  ? "64, 128 or 192"
                                   : "64 or 128")
                       << " for strategy " << stringifyGemmStrategy(strategy)
                       << " (" << (tcgen05 ? "sm_100a, sm_103a" : "sm_90a")
                       << "), got " << tileN;
  if (stages < 2 || stages > 8)
    return emitError() << "gemm_config stages must be in [2, 8] (pipeline "
                          "stages of 128 K each), got "
                       << stages;
  // A 1-D grid has at most 2^31 - 1 CTAs (CUDA gridDim.x).
  if (ctas < 1 || ctas > 2147483647)
    return emitError() << "gemm_config ctas must be in [1, 2147483647] (the "
                          "persistent grid: the GPU's SM count, e.g. 132), "
                          "got "
                       << ctas;
  if (cluster != 1 && cluster != 2)
    return emitError() << "gemm_config cluster must be 1 or 2 (CTAs per "
                          "thread-block cluster along M), got "
                       << cluster;
  if (cluster == 2 && strategy != GemmStrategy::wgmma_fp8_promote_k128)
    return emitError() << "gemm_config cluster 2 (weight tiles multicast to "
                          "two CTAs) needs strategy wgmma_fp8_promote_k128, "
                          "got "
                       << stringifyGemmStrategy(strategy);
  if (cluster == 2 && ctas % 2 != 0)
    return emitError() << "gemm_config cluster 2 needs an even number of "
                          "ctas (whole clusters), got "
                       << ctas;
  return success();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

ScaleLayoutAttr mlir::mxmoe::getScaleLayout(RankedTensorType type) {
  return dyn_cast_or_null<ScaleLayoutAttr>(type.getEncoding());
}

bool mlir::mxmoe::isScaleLayoutEncoding(RankedTensorType type) {
  return !type.getEncoding() || isa<ScaleLayoutAttr>(type.getEncoding());
}

bool mlir::mxmoe::isBlockedScales(RankedTensorType type) {
  ScaleLayoutAttr layout = getScaleLayout(type);
  return layout && layout.isBlocked();
}

bool mlir::mxmoe::isCompactScales(RankedTensorType type) {
  ScaleLayoutAttr layout = getScaleLayout(type);
  return layout && layout.isCompact();
}

bool mlir::mxmoe::isPerKGroupScales(RankedTensorType type) {
  ScaleLayoutAttr layout = getScaleLayout(type);
  return layout && layout.getPerKGroup();
}

std::optional<::mxmoe::MXElementKind> mlir::mxmoe::getMXElementKind(Type type) {
  using ::mxmoe::MXElementKind;
  return llvm::TypeSwitch<Type, std::optional<MXElementKind>>(type)
      .Case<Float8E4M3FNType>([](auto) { return MXElementKind::E4M3; })
      .Case<Float8E5M2Type>([](auto) { return MXElementKind::E5M2; })
      .Case<Float6E2M3FNType>([](auto) { return MXElementKind::E2M3; })
      .Case<Float6E3M2FNType>([](auto) { return MXElementKind::E3M2; })
      .Case<Float4E2M1FNType>([](auto) { return MXElementKind::E2M1; })
      .Default([](Type) { return std::nullopt; });
}

Type mlir::mxmoe::getMXElementType(MLIRContext *ctx,
                                   ::mxmoe::MXElementKind kind) {
  using ::mxmoe::MXElementKind;
  switch (kind) {
  case MXElementKind::E4M3:
    return Float8E4M3FNType::get(ctx);
  case MXElementKind::E5M2:
    return Float8E5M2Type::get(ctx);
  case MXElementKind::E2M3:
    return Float6E2M3FNType::get(ctx);
  case MXElementKind::E3M2:
    return Float6E3M2FNType::get(ctx);
  case MXElementKind::E2M1:
    return Float4E2M1FNType::get(ctx);
  }
  llvm_unreachable("unknown MX element kind");
}

bool mlir::mxmoe::isMXElementType(Type type) {
  return getMXElementKind(type).has_value();
}

::mxmoe::ScaleRounding mlir::mxmoe::toScaleRounding(RoundingMode mode) {
  switch (mode) {
  case RoundingMode::floor:
    return ::mxmoe::ScaleRounding::Floor;
  case RoundingMode::rceil:
    return ::mxmoe::ScaleRounding::RCeil;
  case RoundingMode::ceil:
    return ::mxmoe::ScaleRounding::Ceil;
  case RoundingMode::even:
    return ::mxmoe::ScaleRounding::Even;
  }
  llvm_unreachable("unknown rounding mode");
}
