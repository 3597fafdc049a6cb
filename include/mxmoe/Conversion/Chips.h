//===- Chips.h - target chips of the mxmoe kernels --------------*- C++ -*-===//
//
// The one list of chips mxmoe generates kernels for, used by the lowering
// pass, the mxmoe-to-nvvm pipeline, compileModule and mxmoe-compile.
//
//  - sm_90a  (Hopper H100/H200): grouped GEMM on fp8 `wgmma`; PTX ISA 8.3
//    (the kernels fence their tensor maps: fence.proxy.tensormap is 8.3).
//  - sm_100a (Blackwell B200/GB200) and sm_103a (B300/GB300): grouped GEMM
//    on block-scaled `tcgen05.mma ... kind::mxf8f6f4`; PTX ISA 8.8 (the
//    first version with `.block32`, PTX ISA §9.7.16.10.7, and with sm_103a).
//
// The arch-specific ("a") targets are required: wgmma, setmaxnreg and all
// tcgen05 instructions exist only there (PTX ISA §9.7.15, §9.7.16).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_CONVERSION_CHIPS_H
#define MXMOE_CONVERSION_CHIPS_H

#include "mxmoe/Dialect/MXMoE/Utils/EnumPassOptions.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::mxmoe {

/// The chips as a typed pass option (`chip=sm_90a|sm_100a|sm_103a`,
/// parsed by llvm::cl: a bad value is rejected before any IR is read, with
/// the valid ones: MXMOE_ENUM_OPTION_LISTS_VALUES below).
enum class Chip { sm_90a, sm_100a, sm_103a };

/// The option value's name ("sm_90a", ...).
inline llvm::StringRef stringifyChip(Chip chip) {
  switch (chip) {
  case Chip::sm_90a:
    return "sm_90a";
  case Chip::sm_100a:
    return "sm_100a";
  case Chip::sm_103a:
    return "sm_103a";
  }
  return "";
}

/// The chip named `name`, if mxmoe targets it.
inline std::optional<Chip> symbolizeChip(llvm::StringRef name) {
  if (name == "sm_90a")
    return Chip::sm_90a;
  if (name == "sm_100a")
    return Chip::sm_100a;
  if (name == "sm_103a")
    return Chip::sm_103a;
  return std::nullopt;
}

/// `llvm::cl::values` of a Chip option.
#define MXMOE_CHIP_OPTION_VALUES                                               \
  ::llvm::cl::values(clEnumValN(::mlir::mxmoe::Chip::sm_90a, "sm_90a",         \
                                "Hopper H100/H200: wgmma"),                    \
                     clEnumValN(::mlir::mxmoe::Chip::sm_100a, "sm_100a",       \
                                "Blackwell B200/GB200: tcgen05"),              \
                     clEnumValN(::mlir::mxmoe::Chip::sm_103a, "sm_103a",       \
                                "Blackwell B300/GB300: tcgen05"))

/// Human-readable list for diagnostics ("supported: ...").
inline constexpr llvm::StringLiteral kSupportedChips =
    "sm_90a, sm_100a, sm_103a";

/// Every supported chip, in the order of kSupportedChips.
inline constexpr llvm::StringLiteral kSupportedChipList[] = {
    "sm_90a", "sm_100a", "sm_103a"};

/// True for the chips whose grouped GEMM is the tcgen05 kernel.
inline bool isTcgen05Chip(llvm::StringRef chip) {
  return chip == "sm_100a" || chip == "sm_103a";
}

/// True for every chip mxmoe can target.
inline bool isSupportedChip(llvm::StringRef chip) {
  return chip == "sm_90a" || isTcgen05Chip(chip);
}

/// NVPTX feature string (PTX ISA version) used for `chip`.
inline llvm::StringRef ptxFeaturesFor(llvm::StringRef chip) {
  return isTcgen05Chip(chip) ? "+ptx88" : "+ptx83";
}

/// The chip of the `#nvvm.target` the kernels are lowered with. sm_103a is
/// lowered as sm_100a: MLIR 22's NVVM dialect marks tcgen05.alloc, cp, ld,
/// commit, fence and wait `NVVMRequiresSMa<[100, 101]>` and tcgen05.mma
/// `<[100, 110]>`, so its verifier rejects them on sm_103a, although PTX ISA
/// 8.8 defines every instruction the kernels use for sm_103a with the same
/// encoding (PTX ISA §9.7.16, target notes). The PTX is then retargeted
/// with retargetPtx and assembled by ptxas for sm_103a.
inline llvm::StringRef nvvmTargetChipFor(llvm::StringRef chip) {
  return chip == "sm_103a" ? "sm_100a" : chip;
}

/// Rewrites the `.target` directive of PTX generated for
/// nvvmTargetChipFor(chip) to `chip`. Returns false when the directive is
/// missing (the PTX is left unchanged).
inline bool retargetPtx(std::string &ptx, llvm::StringRef chip) {
  llvm::StringRef from = nvvmTargetChipFor(chip);
  if (from == chip)
    return true;
  std::string directive = ".target " + from.str();
  size_t pos = ptx.find(directive + "\n");
  if (pos == std::string::npos)
    return false;
  ptx.replace(pos, directive.size(), ".target " + chip.str());
  return true;
}

} // namespace mlir::mxmoe

// chip=sm_80 in any pass or pipeline option: "'sm_80' is not one of:
// sm_90a, sm_100a, sm_103a".
MXMOE_ENUM_OPTION_LISTS_VALUES(::mlir::mxmoe::Chip);

#endif // MXMOE_CONVERSION_CHIPS_H
