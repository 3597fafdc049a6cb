//===- MMADescriptors.h - tcgen05 / wgmma descriptor encoders ---*- C++ -*-===//
//
// Bit-level encoders (and decoders) of the descriptors consumed by the
// Blackwell tcgen05 MMA (sm_100a) and the Hopper wgmma (sm_90a):
//   - the 32-bit tcgen05 instruction descriptor of
//     tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale (and, for contrast,
//     of the non-scaled kind::f8f6f4),
//   - the 64-bit tcgen05 shared-memory matrix descriptor (including the
//     constant source descriptor of the scale-factor tcgen05.cp),
//   - the 64-bit wgmma shared-memory matrix descriptor.
// Header-only pure C++ (no MLIR dependency): the kernel generators, the host
// runtime and the unit tests share it.
//
// Sources: PTX ISA (https://docs.nvidia.com/cuda/parallel-thread-execution/)
// section 9.7.16.4.1 (tcgen05 shared memory descriptor), 9.7.16.4.2 (tcgen05
// instruction descriptor: the kind::tf32/f16/f8f6f4/i8 table and the
// kind::mxf8f6f4 block-scaled table), 9.7.15.5.1 (wgmma matrix descriptor
// format); cross-checked against CUTLASS cute/arch/mma_sm100_desc.hpp and
// mma_sm90_desc.hpp; Triton (DotOpToLLVM/MMAv5.cpp) and DeepGEMM
// (deep_gemm/include/deep_gemm/mma/sm100.cuh) encode the same fields.
//
// Error style (one for the whole header): every encoder `encodeX(...)` is a
// constexpr bit packer that never fails and never writes outside its fields
// (each input is masked to its field width); its result is meaningful only
// when the matching `checkX(...)` returns an empty string. `checkX` returns
// "" for a valid input, otherwise a message naming the first violated rule,
// e.g. "N = 200 is not a multiple of 16 (tcgen05 block-scaled MMA needs N %
// 16 == 0, 16 <= N <= 256)". No function asserts or throws. Decoders return
// std::nullopt for words the matching encoder cannot produce (reserved bits
// set, wrong fixed bits, unknown codes), so decode(x) has a value iff
// encode(*decode(x)) == x.
//
// Units: every address, leading/stride byte offset (LBO/SBO) argument is in
// bytes; the encoders do the ">> 4" (16-byte units) themselves. Start
// addresses are shared::cta byte addresses (the value of a cvta.to.shared /
// __cvta_generic_to_shared address), which lie in an 18-bit window.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_CONVERSION_MMADESCRIPTORS_H
#define MXMOE_CONVERSION_MMADESCRIPTORS_H

#include "mxmoe/Dialect/MXMoE/Utils/MXFormats.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

namespace mxmoe {

//===----------------------------------------------------------------------===//
// Common types
//===----------------------------------------------------------------------===//

/// The PTX type code of an A or B operand of tcgen05 kind::mxf8f6f4 (and of
/// the non-scaled kind::f8f6f4): the enumerator values ARE the 3-bit codes
/// of the atype (bits 7-9) / btype (bits 10-12) instruction-descriptor
/// fields (PTX ISA 9.7.16.4.2): E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5;
/// codes 2, 6 and 7 are not element types of these kinds. Not to be
/// confused with mxmoe::MXElementKind (MXFormats.h), the element-format
/// enum with different (dense) values; convert with toTcgen05TypeCode.
enum class Tcgen05TypeCode : uint32_t {
  E4M3 = 0,
  E5M2 = 1,
  E2M3 = 3,
  E3M2 = 4,
  E2M1 = 5,
};

/// True when `code` is one of the five kind::mxf8f6f4 type codes.
inline constexpr bool isValidTcgen05TypeCode(uint32_t code) {
  return code == 0 || code == 1 || code == 3 || code == 4 || code == 5;
}

/// True for the 8-bit element types (E4M3, E5M2), the only ones that may be
/// MN-major in a tcgen05 MMA (PTX ISA 9.7.16.4.2; CUTLASS
/// mma_sm100_desc.hpp).
inline constexpr bool isTcgen05TypeCode8Bit(Tcgen05TypeCode k) {
  return k == Tcgen05TypeCode::E4M3 || k == Tcgen05TypeCode::E5M2;
}

/// The PTX type code of an MXFormats.h element kind.
inline constexpr Tcgen05TypeCode toTcgen05TypeCode(MXElementKind k) {
  switch (k) {
  case MXElementKind::E4M3:
    return Tcgen05TypeCode::E4M3;
  case MXElementKind::E5M2:
    return Tcgen05TypeCode::E5M2;
  case MXElementKind::E2M3:
    return Tcgen05TypeCode::E2M3;
  case MXElementKind::E3M2:
    return Tcgen05TypeCode::E3M2;
  case MXElementKind::E2M1:
    return Tcgen05TypeCode::E2M1;
  }
  return Tcgen05TypeCode::E4M3; // unreachable for valid enumerators
}

/// Name of a type code ("E4M3", ...), or "code N" for an invalid value.
inline std::string tcgen05TypeCodeName(Tcgen05TypeCode k) {
  switch (static_cast<uint32_t>(k)) {
  case 0:
    return "E4M3";
  case 1:
    return "E5M2";
  case 3:
    return "E2M3";
  case 4:
    return "E3M2";
  case 5:
    return "E2M1";
  default:
    return "code " + std::to_string(static_cast<uint32_t>(k));
  }
}

/// Operand major-ness: the "transpose A/B" bits 15/16 of the tcgen05
/// instruction descriptor (PTX ISA 9.7.16.4.2). K = contraction-contiguous
/// (no transpose, value 0), MN = M- (for A) or N- (for B) contiguous
/// (transpose, value 1).
enum class MMAMajor : uint32_t { K = 0, MN = 1 };

namespace detail {
inline std::string hex(uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xF]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}
} // namespace detail

//===----------------------------------------------------------------------===//
// tcgen05 instruction descriptor, kind::mxf8f6f4 + block_scale (32 bit)
//===----------------------------------------------------------------------===//

/// Fields of the instruction descriptor of
/// `tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale[.block32]`
/// (PTX ISA 9.7.16.4.2, the kind::mxf8f6f4 table). Layout:
///   bits 0-3  : 0 (sparsity selector / sparsity / reserved: dense)
///   bits 4-5  : sfbId, byte of the TMEM scale cell used for B (0..3)
///   bit  6    : 0 (reserved)
///   bits 7-9  : aType code;  bits 10-12: bType code (Tcgen05TypeCode)
///   bit  13/14: negate A / negate B
///   bit  15/16: A / B major (MMAMajor: 0 K-major, 1 MN-major)
///   bits 17-22: N >> 3
///   bit  23   : scale type, 1 = UE8M0 (always set: mxf8f6f4 scales are E8M0)
///   bits 24-28: M >> 4
///   bits 29-30: sfaId, byte of the TMEM scale cell used for A (0..3)
///   bit  31   : 0 (reserved)
/// There is no D-type field (D is always f32). Do not confuse with the
/// non-scaled descriptor (Tcgen05F8F6F4Config), whose bits 4-5 are the D type.
struct Tcgen05BlockScaledConfig {
  Tcgen05TypeCode aType = Tcgen05TypeCode::E4M3;
  Tcgen05TypeCode bType = Tcgen05TypeCode::E4M3;
  unsigned m = 128;   ///< rows of A / D; must be 128 for cta_group::1
  unsigned n = 128;   ///< columns of B / D; N % 16 == 0, 16 <= N <= 256
  unsigned sfaId = 0; ///< 0..3
  unsigned sfbId = 0; ///< 0..3
  bool negateA = false;
  bool negateB = false;
  MMAMajor aMajor = MMAMajor::K; ///< MN only for E4M3 / E5M2
  MMAMajor bMajor = MMAMajor::K; ///< MN only for E4M3 / E5M2
};

/// Bit 23 of the block-scaled descriptor: scale type UE8M0.
inline constexpr uint32_t kTcgen05ScaleTypeUE8M0Bit = 1u << 23;
/// Mask of the SFB id (bits 4-5) and SFA id (bits 29-30) fields.
inline constexpr uint32_t kTcgen05SfbIdMask = 0x3u << 4;
inline constexpr uint32_t kTcgen05SfaIdMask = 0x3u << 29;

/// Validates `c` for tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale
/// (PTX ISA 9.7.16.4.2 and the tcgen05.mma shape rules, 9.7.16.10). Rules,
/// checked in this order: aType/bType are kind::mxf8f6f4 codes; M == 128
/// (cta_group::1; M = 256 needs cta_group::2); N % 16 == 0 and 16 <= N <= 256;
/// sfaId, sfbId in 0..3; aMajor/bMajor are K or MN; MN-major only for 8-bit
/// (E4M3, E5M2) operands.
/// Returns "" when valid, otherwise a message naming the violated rule.
inline std::string
checkTcgen05BlockScaledConfig(const Tcgen05BlockScaledConfig &c) {
  for (auto [name, k] :
       {std::pair<const char *, Tcgen05TypeCode>{"aType", c.aType},
        {"bType", c.bType}}) {
    if (!isValidTcgen05TypeCode(static_cast<uint32_t>(k)))
      return std::string(name) + " = " + tcgen05TypeCodeName(k) +
             " is not a kind::mxf8f6f4 element type (valid codes: E4M3 0, "
             "E5M2 1, E2M3 3, E3M2 4, E2M1 5)";
  }
  if (c.m != 128)
    return "M = " + std::to_string(c.m) +
           " is not supported: tcgen05.mma.cta_group::1 block-scaled MMA "
           "requires M = 128 (M = 256 needs cta_group::2)";
  if (c.n % 16 != 0 || c.n < 16 || c.n > 256)
    return "N = " + std::to_string(c.n) +
           " is invalid: tcgen05 block-scaled MMA needs N % 16 == 0 and "
           "16 <= N <= 256";
  if (c.sfaId > 3)
    return "sfaId = " + std::to_string(c.sfaId) +
           " is out of range: scale-factor ids select a byte of the TMEM "
           "scale cell and must be in 0..3 (2-bit field, bits 29-30)";
  if (c.sfbId > 3)
    return "sfbId = " + std::to_string(c.sfbId) +
           " is out of range: scale-factor ids select a byte of the TMEM "
           "scale cell and must be in 0..3 (2-bit field, bits 4-5)";
  if (static_cast<uint32_t>(c.aMajor) > 1 ||
      static_cast<uint32_t>(c.bMajor) > 1)
    return "aMajor/bMajor must be MMAMajor::K (0) or MMAMajor::MN (1)";
  if (c.aMajor == MMAMajor::MN && !isTcgen05TypeCode8Bit(c.aType))
    return "aMajor = MN with aType " + tcgen05TypeCodeName(c.aType) +
           ": MN-major operands are only supported for 8-bit types (E4M3, "
           "E5M2)";
  if (c.bMajor == MMAMajor::MN && !isTcgen05TypeCode8Bit(c.bType))
    return "bMajor = MN with bType " + tcgen05TypeCodeName(c.bType) +
           ": MN-major operands are only supported for 8-bit types (E4M3, "
           "E5M2)";
  return "";
}

/// Packs `c` into the 32-bit kind::mxf8f6f4 block-scaled instruction
/// descriptor (layout above; PTX ISA 9.7.16.4.2). Precondition:
/// checkTcgen05BlockScaledConfig(c) is empty; otherwise each field is masked
/// to its width and the result is meaningless. Example: E4M3 x E4M3, M 128,
/// N 128, K-major, ids 0 -> 0x08A00000.
inline constexpr uint32_t
encodeTcgen05BlockScaledInstrDesc(const Tcgen05BlockScaledConfig &c) {
  return ((c.sfbId & 0x3u) << 4) |
         ((static_cast<uint32_t>(c.aType) & 0x7u) << 7) |
         ((static_cast<uint32_t>(c.bType) & 0x7u) << 10) |
         ((c.negateA ? 1u : 0u) << 13) | ((c.negateB ? 1u : 0u) << 14) |
         ((static_cast<uint32_t>(c.aMajor) & 0x1u) << 15) |
         ((static_cast<uint32_t>(c.bMajor) & 0x1u) << 16) |
         (((c.n >> 3) & 0x3Fu) << 17) | kTcgen05ScaleTypeUE8M0Bit |
         (((c.m >> 4) & 0x1Fu) << 24) | ((c.sfaId & 0x3u) << 29);
}

/// Inverse of encodeTcgen05BlockScaledInstrDesc. Returns std::nullopt when
/// `desc` cannot come from the encoder: a reserved bit (0-3, 6, 31) is set,
/// the UE8M0 bit 23 is clear, or a type code is not an Tcgen05TypeCode. The
/// decoded config is not re-validated (use checkTcgen05BlockScaledConfig).
inline constexpr std::optional<Tcgen05BlockScaledConfig>
decodeTcgen05BlockScaledInstrDesc(uint32_t desc) {
  constexpr uint32_t reserved = 0xFu | (1u << 6) | (1u << 31);
  if ((desc & reserved) != 0 || (desc & kTcgen05ScaleTypeUE8M0Bit) == 0)
    return std::nullopt;
  uint32_t a = (desc >> 7) & 0x7u, b = (desc >> 10) & 0x7u;
  if (!isValidTcgen05TypeCode(a) || !isValidTcgen05TypeCode(b))
    return std::nullopt;
  Tcgen05BlockScaledConfig c;
  c.sfbId = (desc >> 4) & 0x3u;
  c.aType = static_cast<Tcgen05TypeCode>(a);
  c.bType = static_cast<Tcgen05TypeCode>(b);
  c.negateA = (desc >> 13) & 1u;
  c.negateB = (desc >> 14) & 1u;
  c.aMajor = static_cast<MMAMajor>((desc >> 15) & 1u);
  c.bMajor = static_cast<MMAMajor>((desc >> 16) & 1u);
  c.n = ((desc >> 17) & 0x3Fu) << 3;
  c.m = ((desc >> 24) & 0x1Fu) << 4;
  c.sfaId = (desc >> 29) & 0x3u;
  return c;
}

/// Checks scale-factor ids for tcgen05InstrDescWithScaleIds: both in 0..3.
/// Returns "" when valid, otherwise the violated rule.
inline std::string checkTcgen05ScaleIds(unsigned sfaId, unsigned sfbId) {
  if (sfaId > 3 || sfbId > 3)
    return "scale-factor ids (sfaId = " + std::to_string(sfaId) +
           ", sfbId = " + std::to_string(sfbId) +
           ") must be in 0..3 (2-bit fields, bits 29-30 and 4-5)";
  return "";
}

/// `base` (a block-scaled instruction descriptor) with its SFA id (bits
/// 29-30) and SFB id (bits 4-5) replaced by `sfaId` and `sfbId`; every other
/// bit is kept. Used per K = 32 step k of a 128-wide K block: ids = k % 4
/// (PTX ISA 9.7.16.4.2; DeepGEMM make_runtime_instr_desc_with_sf_id).
/// Precondition: checkTcgen05ScaleIds(sfaId, sfbId) is empty (ids are
/// masked to 2 bits).
inline constexpr uint32_t
tcgen05InstrDescWithScaleIds(uint32_t base, unsigned sfaId, unsigned sfbId) {
  return (base & ~(kTcgen05SfaIdMask | kTcgen05SfbIdMask)) |
         ((sfaId & 0x3u) << 29) | ((sfbId & 0x3u) << 4);
}

//===----------------------------------------------------------------------===//
// tcgen05 instruction descriptor, non-scaled kind::f8f6f4 (32 bit)
//===----------------------------------------------------------------------===//

/// D (accumulator) type of the non-scaled descriptor, bits 4-5.
enum class Tcgen05DType : uint32_t { F16 = 0, F32 = 1 };

/// Fields of the instruction descriptor of the NON-scaled
/// `tcgen05.mma.cta_group::1.kind::f8f6f4` (PTX ISA 9.7.16.4.2, the
/// kind::tf32/f16/f8f6f4/i8 table). Layout:
///   bits 0-3  : 0 (sparsity selector / sparsity / saturate: dense, no sat.)
///   bits 4-5  : D type (F16 0, F32 1)   <-- the SFB id in the scaled table
///   bits 7-9 / 10-12: A / B type codes (Tcgen05TypeCode values)
///   bit  13/14: negate A / B;  bit 15/16: A / B major
///   bits 17-22: N >> 3;  bit 23: 0 (reserved)  <-- UE8M0 in the scaled table
///   bits 24-28: M >> 4;  bit 29: 0 (reserved)
///   bits 30-31: maximum shift (.ws only): 0
struct Tcgen05F8F6F4Config {
  Tcgen05DType dType = Tcgen05DType::F32;
  Tcgen05TypeCode aType = Tcgen05TypeCode::E4M3;
  Tcgen05TypeCode bType = Tcgen05TypeCode::E4M3;
  unsigned m = 128; ///< 64 or 128 for cta_group::1
  unsigned n = 128; ///< M 64: N % 8 == 0, 8..256; M 128: N % 16 == 0, 16..256
  bool negateA = false;
  bool negateB = false;
  MMAMajor aMajor = MMAMajor::K;
  MMAMajor bMajor = MMAMajor::K;
};

/// Validates `c` for the non-scaled cta_group::1 kind::f8f6f4 MMA (PTX ISA
/// 9.7.16.4.2 and the tcgen05.mma shape rules, 9.7.16.10): type codes valid;
/// dType F16 or F32; M 64 (N % 8 == 0, 8 <= N <= 256) or M 128 (N % 16 == 0,
/// 16 <= N <= 256); aMajor/bMajor are K or MN; MN-major only for 8-bit
/// operands. Returns "" or the violated rule.
inline std::string checkTcgen05F8F6F4Config(const Tcgen05F8F6F4Config &c) {
  for (auto [name, k] :
       {std::pair<const char *, Tcgen05TypeCode>{"aType", c.aType},
        {"bType", c.bType}}) {
    if (!isValidTcgen05TypeCode(static_cast<uint32_t>(k)))
      return std::string(name) + " = " + tcgen05TypeCodeName(k) +
             " is not a kind::f8f6f4 element type (valid codes: E4M3 0, "
             "E5M2 1, E2M3 3, E3M2 4, E2M1 5)";
  }
  if (static_cast<uint32_t>(c.dType) > 1)
    return "dType code " + std::to_string(static_cast<uint32_t>(c.dType)) +
           " is invalid: kind::f8f6f4 accumulates in F16 (0) or F32 (1)";
  if (c.m != 64 && c.m != 128)
    return "M = " + std::to_string(c.m) +
           " is not supported: tcgen05.mma.cta_group::1 kind::f8f6f4 "
           "requires M = 64 or M = 128";
  unsigned step = c.m == 64 ? 8 : 16;
  if (c.n % step != 0 || c.n < step || c.n > 256)
    return "N = " + std::to_string(c.n) +
           " is invalid for M = " + std::to_string(c.m) +
           ": N must be a multiple of " + std::to_string(step) + " in [" +
           std::to_string(step) + ", 256]";
  if (static_cast<uint32_t>(c.aMajor) > 1 ||
      static_cast<uint32_t>(c.bMajor) > 1)
    return "aMajor/bMajor must be MMAMajor::K (0) or MMAMajor::MN (1)";
  if (c.aMajor == MMAMajor::MN && !isTcgen05TypeCode8Bit(c.aType))
    return "aMajor = MN with aType " + tcgen05TypeCodeName(c.aType) +
           ": MN-major operands are only supported for 8-bit types (E4M3, "
           "E5M2)";
  if (c.bMajor == MMAMajor::MN && !isTcgen05TypeCode8Bit(c.bType))
    return "bMajor = MN with bType " + tcgen05TypeCodeName(c.bType) +
           ": MN-major operands are only supported for 8-bit types (E4M3, "
           "E5M2)";
  return "";
}

/// Packs `c` into the non-scaled kind::f8f6f4 instruction descriptor (layout
/// above; PTX ISA 9.7.16.4.2). Precondition: checkTcgen05F8F6F4Config(c) is
/// empty (fields are masked otherwise). Example: E4M3 x E4M3 -> F32, M 128,
/// N 128, K-major -> 0x08200010, which differs from the block-scaled
/// 0x08A00000 for the same shape in bit 4 (dtype vs. SFB id) and bit 23.
inline constexpr uint32_t
encodeTcgen05F8F6F4InstrDesc(const Tcgen05F8F6F4Config &c) {
  return ((static_cast<uint32_t>(c.dType) & 0x3u) << 4) |
         ((static_cast<uint32_t>(c.aType) & 0x7u) << 7) |
         ((static_cast<uint32_t>(c.bType) & 0x7u) << 10) |
         ((c.negateA ? 1u : 0u) << 13) | ((c.negateB ? 1u : 0u) << 14) |
         ((static_cast<uint32_t>(c.aMajor) & 0x1u) << 15) |
         ((static_cast<uint32_t>(c.bMajor) & 0x1u) << 16) |
         (((c.n >> 3) & 0x3Fu) << 17) | (((c.m >> 4) & 0x1Fu) << 24);
}

/// Inverse of encodeTcgen05F8F6F4InstrDesc; std::nullopt when a bit the
/// encoder never sets is set (0-3, 6, 23, 29-31), dType is not F16/F32, or a
/// type code is invalid.
inline constexpr std::optional<Tcgen05F8F6F4Config>
decodeTcgen05F8F6F4InstrDesc(uint32_t desc) {
  constexpr uint32_t reserved =
      0xFu | (1u << 6) | (1u << 23) | (1u << 29) | (0x3u << 30);
  if ((desc & reserved) != 0)
    return std::nullopt;
  uint32_t d = (desc >> 4) & 0x3u, a = (desc >> 7) & 0x7u,
           b = (desc >> 10) & 0x7u;
  if (d > 1 || !isValidTcgen05TypeCode(a) || !isValidTcgen05TypeCode(b))
    return std::nullopt;
  Tcgen05F8F6F4Config c;
  c.dType = static_cast<Tcgen05DType>(d);
  c.aType = static_cast<Tcgen05TypeCode>(a);
  c.bType = static_cast<Tcgen05TypeCode>(b);
  c.negateA = (desc >> 13) & 1u;
  c.negateB = (desc >> 14) & 1u;
  c.aMajor = static_cast<MMAMajor>((desc >> 15) & 1u);
  c.bMajor = static_cast<MMAMajor>((desc >> 16) & 1u);
  c.n = ((desc >> 17) & 0x3Fu) << 3;
  c.m = ((desc >> 24) & 0x1Fu) << 4;
  return c;
}

//===----------------------------------------------------------------------===//
// Shared-memory matrix descriptors (64 bit): fields common to both targets
//===----------------------------------------------------------------------===//

/// Largest shared::cta byte address a descriptor can hold: the start address
/// field keeps bits 4-17 of the address ((addr & 0x3FFFF) >> 4).
inline constexpr uint32_t kSmemDescMaxAddress = 0x3FFF0;
/// Largest LBO / SBO in bytes: (value >> 4) must fit in 14 bits.
inline constexpr uint32_t kSmemDescMaxOffset = 0x3FFFu << 4; // 262128

/// The shared::cta window the start-address field encodes (18 bits).
inline constexpr uint32_t kSmemDescAddressMask = 0x3FFFF;

/// The start-address field (bits 0-13) of a tcgen05 or wgmma smem descriptor:
/// (addrBytes & 0x3FFFF) >> 4 (PTX ISA 9.7.16.4.1 / 9.7.15.5.1, "matrix
/// descriptor encode"). This is what a kernel ORs into a constant part at run
/// time; for an in-window, 16-byte aligned address it loses nothing.
inline constexpr uint64_t smemDescStartAddressField(uint32_t addrBytes) {
  return (addrBytes & kSmemDescAddressMask) >> 4;
}

/// First bit of the LBO field (bits 16-29, lboBytes >> 4) of a tcgen05 or
/// wgmma smem descriptor (PTX ISA 9.7.16.4.1 / 9.7.15.5.1). A kernel with a
/// run-time LBO ORs (lbo >> 4) << kSmemDescLboShift into a constant part
/// whose LBO is 0.
inline constexpr unsigned kSmemDescLboShift = 16;

/// Decoded fields of a shared-memory matrix descriptor. All sizes in bytes.
/// `swizzleCode` is the raw swizzle field (3 bits at 61-63 for tcgen05, 2 bits
/// at 62-63 for wgmma); cast it to Tcgen05Swizzle / WgmmaSwizzle.
struct SmemDescFields {
  uint32_t startAddrBytes = 0; ///< field << 4 (the low 4 bits are lost)
  uint32_t lboBytes = 0;       ///< field << 4
  uint32_t sboBytes = 0;       ///< field << 4
  unsigned baseOffset = 0;     ///< bits 49-51
  unsigned swizzleCode = 0;
};

namespace detail {
inline std::string checkSmemCommon(uint32_t addr, uint32_t lbo, uint32_t sbo,
                                   unsigned baseOffset) {
  if (addr % 16 != 0)
    return "start address " + hex(addr) +
           " is not 16-byte aligned (the descriptor stores addr >> 4)";
  if (addr > kSmemDescMaxAddress)
    return "start address " + hex(addr) +
           " is outside the 18-bit shared-memory window (the descriptor "
           "stores (addr & 0x3FFFF) >> 4; max 0x3fff0)";
  if (lbo % 16 != 0)
    return "LBO = " + std::to_string(lbo) +
           " bytes is not a multiple of 16 (the descriptor stores LBO >> 4)";
  if (lbo > kSmemDescMaxOffset)
    return "LBO = " + std::to_string(lbo) +
           " bytes: LBO >> 4 = " + std::to_string(lbo >> 4) +
           " does not fit in 14 bits (max 262128 bytes)";
  if (sbo % 16 != 0)
    return "SBO = " + std::to_string(sbo) +
           " bytes is not a multiple of 16 (the descriptor stores SBO >> 4)";
  if (sbo > kSmemDescMaxOffset)
    return "SBO = " + std::to_string(sbo) +
           " bytes: SBO >> 4 = " + std::to_string(sbo >> 4) +
           " does not fit in 14 bits (max 262128 bytes)";
  if (baseOffset > 7)
    return "base offset " + std::to_string(baseOffset) +
           " is out of range: must be in 0..7 (3-bit field, bits 49-51)";
  return "";
}

inline constexpr uint64_t packSmemCommon(uint32_t addr, uint32_t lbo,
                                         uint32_t sbo, unsigned baseOffset) {
  return smemDescStartAddressField(addr) |
         (static_cast<uint64_t>((lbo >> 4) & 0x3FFFu) << kSmemDescLboShift) |
         (static_cast<uint64_t>((sbo >> 4) & 0x3FFFu) << 32) |
         (static_cast<uint64_t>(baseOffset & 0x7u) << 49);
}

inline constexpr SmemDescFields unpackSmemCommon(uint64_t d) {
  SmemDescFields f;
  f.startAddrBytes = static_cast<uint32_t>(d & 0x3FFFu) << 4;
  f.lboBytes = static_cast<uint32_t>((d >> 16) & 0x3FFFu) << 4;
  f.sboBytes = static_cast<uint32_t>((d >> 32) & 0x3FFFu) << 4;
  f.baseOffset = static_cast<unsigned>((d >> 49) & 0x7u);
  return f;
}
} // namespace detail

//===----------------------------------------------------------------------===//
// tcgen05 shared-memory matrix descriptor (sm_100)
//===----------------------------------------------------------------------===//

/// Swizzle field (bits 61-63) of the tcgen05 smem descriptor (PTX ISA
/// 9.7.16.4.1). Values are the PTX codes.
enum class Tcgen05Swizzle : uint32_t {
  None = 0,
  Swizzle128BBase32B = 1, ///< 128-byte swizzle with 32-byte atomicity
  Swizzle128B = 2,
  Swizzle64B = 4,
  Swizzle32B = 6,
};

/// Bits 46-48 of the tcgen05 smem descriptor: fixed constant 0b001.
inline constexpr uint64_t kTcgen05SmemDescVersionBits = 1ull << 46;

/// True when `code` is a tcgen05 swizzle code (0, 1, 2, 4, 6).
inline constexpr bool isValidTcgen05SwizzleCode(uint32_t code) {
  return code == 0 || code == 1 || code == 2 || code == 4 || code == 6;
}

/// Validates the arguments of encodeTcgen05SmemDesc (PTX ISA 9.7.16.4.1).
/// Rules, in order: startAddrBytes % 16 == 0 and <= 0x3FFF0 (18-bit
/// shared::cta window); lboBytes and sboBytes multiples of 16 and <= 262128
/// (>> 4 fits in 14 bits); baseOffset in 0..7; swizzle is one of the five
/// codes. Returns "" when valid, otherwise the violated rule.
inline std::string checkTcgen05SmemDesc(uint32_t startAddrBytes,
                                        uint32_t lboBytes, uint32_t sboBytes,
                                        Tcgen05Swizzle swizzle,
                                        unsigned baseOffset) {
  std::string err =
      detail::checkSmemCommon(startAddrBytes, lboBytes, sboBytes, baseOffset);
  if (!err.empty())
    return err;
  if (!isValidTcgen05SwizzleCode(static_cast<uint32_t>(swizzle)))
    return "swizzle code " + std::to_string(static_cast<uint32_t>(swizzle)) +
           " is not a tcgen05 swizzle mode (none 0, 128B_base32B 1, 128B 2, "
           "64B 4, 32B 6)";
  return "";
}

/// The 64-bit tcgen05 shared-memory matrix descriptor (PTX ISA 9.7.16.4.1):
///   bits 0-13 : (startAddrBytes & 0x3FFFF) >> 4
///   bits 16-29: lboBytes >> 4   (leading-dimension byte offset)
///   bits 32-45: sboBytes >> 4   (stride-dimension byte offset)
///   bits 46-48: fixed 0b001
///   bits 49-51: baseOffset (0 when the swizzle pattern starts at its natural
///               alignment: 1024 B for 128B, 512 B for 64B, 256 B for 32B)
///   bit  52   : LBO mode, 0 = relative (absolute is sm_103a only)
///   bits 53-60: 0
///   bits 61-63: swizzle code
/// Precondition: checkTcgen05SmemDesc(...) is empty (fields are masked
/// otherwise). Example: SW128 K-major e4m3 tile at 0, LBO 16, SBO 1024 ->
/// 0x4000404000010000.
inline constexpr uint64_t encodeTcgen05SmemDesc(uint32_t startAddrBytes,
                                                uint32_t lboBytes,
                                                uint32_t sboBytes,
                                                Tcgen05Swizzle swizzle,
                                                unsigned baseOffset) {
  return detail::packSmemCommon(startAddrBytes, lboBytes, sboBytes,
                                baseOffset) |
         kTcgen05SmemDescVersionBits |
         (static_cast<uint64_t>(static_cast<uint32_t>(swizzle) & 0x7u) << 61);
}

/// encodeTcgen05SmemDesc with start address 0 and base offset 0: the
/// compile-time part a kernel ORs smemDescStartAddressField(addr) into at run
/// time. Valid when checkTcgen05SmemDesc(0, lbo, sbo, swizzle, 0) is empty.
inline constexpr uint64_t tcgen05SmemDescConstantPart(uint32_t lboBytes,
                                                      uint32_t sboBytes,
                                                      Tcgen05Swizzle swizzle) {
  return encodeTcgen05SmemDesc(0, lboBytes, sboBytes, swizzle, 0);
}

/// Constant part of the shared-memory source descriptor of the scale-factor
/// copy `tcgen05.cp.cta_group::1.32x128b.warpx4` (PTX ISA 9.7.16.4.1;
/// CUTLASS cute/arch/copy_sm100.hpp): no swizzle, LBO 0, SBO 128 bytes (8
/// rows x 16 B), base offset 0, version 0b001 -> 0x0000400800000000. OR in
/// smemDescStartAddressField(atomAddr) of the 16-byte aligned 512-B atom.
inline constexpr uint64_t kTcgen05ScaleFactorSrcDescConstant =
    encodeTcgen05SmemDesc(0, 0, 128, Tcgen05Swizzle::None, 0);
static_assert(kTcgen05ScaleFactorSrcDescConstant == 0x0000400800000000ull,
              "tcgen05.cp scale-factor source descriptor");

/// The full scale-factor source descriptor for a 512-B atom at
/// `atomAddrBytes` (16-byte aligned, <= 0x3FFF0; same rules as
/// checkTcgen05SmemDesc).
inline constexpr uint64_t tcgen05ScaleFactorSrcDesc(uint32_t atomAddrBytes) {
  return kTcgen05ScaleFactorSrcDescConstant |
         smemDescStartAddressField(atomAddrBytes);
}

/// Inverse of encodeTcgen05SmemDesc. std::nullopt when bits 46-48 are not
/// 0b001, a bit the encoder never sets is set (14-15, 30-31, 52-60), or the
/// swizzle code is not a tcgen05 mode.
inline constexpr std::optional<SmemDescFields>
decodeTcgen05SmemDesc(uint64_t desc) {
  constexpr uint64_t reserved =
      (0x3ull << 14) | (0x3ull << 30) | (0x1FFull << 52); // bits 52-60
  if ((desc & (0x7ull << 46)) != kTcgen05SmemDescVersionBits ||
      (desc & reserved) != 0)
    return std::nullopt;
  uint32_t swz = static_cast<uint32_t>(desc >> 61) & 0x7u;
  if (!isValidTcgen05SwizzleCode(swz))
    return std::nullopt;
  SmemDescFields f = detail::unpackSmemCommon(desc);
  f.swizzleCode = swz;
  return f;
}

//===----------------------------------------------------------------------===//
// wgmma shared-memory matrix descriptor (sm_90)
//===----------------------------------------------------------------------===//

/// Swizzle field (bits 62-63) of the wgmma matrix descriptor (PTX ISA
/// 9.7.15.5.1). Values are the PTX codes; written at bit 62 they equal the
/// tcgen05 3-bit codes at bit 61 (128B 1<<62 == 2<<61, ...).
enum class WgmmaSwizzle : uint32_t {
  None = 0,
  Swizzle128B = 1,
  Swizzle64B = 2,
  Swizzle32B = 3,
};

/// Validates the arguments of encodeWgmmaSmemDesc (PTX ISA 9.7.15.5.1): the
/// same address / LBO / SBO / base-offset rules as checkTcgen05SmemDesc, and
/// swizzle in 0..3. Returns "" when valid, otherwise the violated rule.
inline std::string checkWgmmaSmemDesc(uint32_t startAddrBytes,
                                      uint32_t lboBytes, uint32_t sboBytes,
                                      WgmmaSwizzle swizzle,
                                      unsigned baseOffset) {
  std::string err =
      detail::checkSmemCommon(startAddrBytes, lboBytes, sboBytes, baseOffset);
  if (!err.empty())
    return err;
  if (static_cast<uint32_t>(swizzle) > 3)
    return "swizzle code " + std::to_string(static_cast<uint32_t>(swizzle)) +
           " is not a wgmma swizzle mode (none 0, 128B 1, 64B 2, 32B 3)";
  return "";
}

/// The 64-bit wgmma matrix descriptor (PTX ISA 9.7.15.5.1, "Matrix Descriptor
/// Format"):
///   bits 0-13 : (startAddrBytes & 0x3FFFF) >> 4
///   bits 16-29: lboBytes >> 4
///   bits 32-45: sboBytes >> 4
///   bits 49-51: baseOffset
///   bits 62-63: swizzle code (2 bits)
/// and zero elsewhere (no version field, unlike tcgen05). Precondition:
/// checkWgmmaSmemDesc(...) is empty (fields are masked otherwise). Example:
/// SW128 K-major at 0, LBO 16, SBO 1024 -> (1<<62)|(64<<32)|(1<<16).
inline constexpr uint64_t encodeWgmmaSmemDesc(uint32_t startAddrBytes,
                                              uint32_t lboBytes,
                                              uint32_t sboBytes,
                                              WgmmaSwizzle swizzle,
                                              unsigned baseOffset) {
  return detail::packSmemCommon(startAddrBytes, lboBytes, sboBytes,
                                baseOffset) |
         (static_cast<uint64_t>(static_cast<uint32_t>(swizzle) & 0x3u) << 62);
}

/// encodeWgmmaSmemDesc with start address 0 and base offset 0: the
/// compile-time part a kernel ORs smemDescStartAddressField(addr) into at run
/// time. Valid when checkWgmmaSmemDesc(0, lbo, sbo, swizzle, 0) is empty.
inline constexpr uint64_t wgmmaSmemDescConstantPart(uint32_t lboBytes,
                                                    uint32_t sboBytes,
                                                    WgmmaSwizzle swizzle) {
  return encodeWgmmaSmemDesc(0, lboBytes, sboBytes, swizzle, 0);
}

/// Inverse of encodeWgmmaSmemDesc. std::nullopt when a bit the encoder never
/// sets is set (14-15, 30-31, 46-48, 52-61).
inline constexpr std::optional<SmemDescFields>
decodeWgmmaSmemDesc(uint64_t desc) {
  constexpr uint64_t reserved = (0x3ull << 14) | (0x3ull << 30) |
                                (0x7ull << 46) | (0x3FFull << 52); // 52-61
  if ((desc & reserved) != 0)
    return std::nullopt;
  SmemDescFields f = detail::unpackSmemCommon(desc);
  f.swizzleCode = static_cast<unsigned>(desc >> 62) & 0x3u;
  return f;
}

} // namespace mxmoe

#endif // MXMOE_CONVERSION_MMADESCRIPTORS_H
