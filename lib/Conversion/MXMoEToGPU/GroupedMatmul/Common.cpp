//===- Common.cpp - shared parts of the MX grouped-GEMM kernels -----------===//
//
// The tile scheduler, kernel frame, prologue (size and offsets validation),
// pipeline ring and loader steps of both grouped-GEMM generators; see
// Common.h.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mxmoe/Conversion/MMADescriptors.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

namespace mlir::mxmoe::kernels::gemm {

void waitParity(KB &b, Value bar, Value phase) {
  Value parity = b.toI32(phase);
  NVVM::MBarrierTryWaitParityOp::create(b, bar, parity, b.i32(0x989680));
}

Value addOutput(KB &b, Value value, Value out, Type outTy, Value at) {
  Value old = b.ldg(outTy, out, at);
  if (!outTy.isF32())
    old = arith::ExtFOp::create(b, b.getF32Type(), old);
  return arith::AddFOp::create(b, old, value);
}

void fenceAsyncShared(KB &b) {
  NVVM::FenceProxyOp::create(
      b, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

Value smemDescriptor(KB &b, Value addr, uint64_t constantPart, Value lboBytes) {
  Value window = b.andi(addr, b.idx(::mxmoe::kSmemDescAddressMask));
  Value desc = b.shrui(window, 4);
  if (lboBytes) {
    Value lbo = b.shrui(lboBytes, 4);
    desc = b.ori(desc, b.shli(lbo, ::mxmoe::kSmemDescLboShift));
  }
  desc = b.ori(desc, b.idx(static_cast<int64_t>(constantPart)));
  return b.toI64(desc);
}

SmallVector<Value> ifYield(KB &b, Value cond, ValueRange otherwise,
                           function_ref<SmallVector<Value>()> then) {
  auto op = scf::IfOp::create(b, otherwise.getTypes(), cond, true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&op.getThenRegion().front());
    scf::YieldOp::create(b, then());
    b.setInsertionPointToStart(&op.getElseRegion().front());
    scf::YieldOp::create(b, otherwise);
  }
  return SmallVector<Value>(op.getResults());
}

//===----------------------------------------------------------------------===//
// Pipeline ring
//===----------------------------------------------------------------------===//

RingSlot ringSlot(KB &b, Value base, Value it, int64_t stages,
                  int64_t stageBytes) {
  Value wrapped = b.sge(it, b.idx(stages));
  Value st = b.select(wrapped, b.sub(it, b.idx(stages)), it);
  Value one = b.idx(1);
  Value phase = b.select(wrapped, one, b.idx(0));
  Value stage = b.add(base, b.mulc(st, stageBytes));
  return {st, phase, stage};
}

Value ringNext(KB &b, Value it, int64_t stages) {
  Value n = b.add(it, b.idx(1));
  Value wraps = b.eq(n, b.idx(2 * stages));
  return b.select(wraps, b.idx(0), n);
}

std::pair<SmallVector<Value>, Value> ringLoop(
    KB &b, Value kStages, ValueRange carried, Value it0, int64_t stages,
    function_ref<SmallVector<Value>(Value, Value, SmallVector<Value>)> body) {
  SmallVector<Value> init(carried);
  init.push_back(it0);
  Value zero = b.idx(0);
  auto loop = scf::ForOp::create(b, zero, kStages, b.idx(1), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value it = loop.getRegionIterArgs().back();
    SmallVector<Value> yield =
        body(loop.getInductionVar(), it,
             SmallVector<Value>(loop.getRegionIterArgs().drop_back()));
    yield.push_back(ringNext(b, it, stages));
    scf::YieldOp::create(b, yield);
  }
  return {SmallVector<Value>(loop.getResults().drop_back()),
          loop.getResults().back()};
}

Value forEachRingSlot(KB &b, Value base, Value kStages, Value it0,
                      int64_t stages, int64_t stageBytes,
                      function_ref<void(Value, const RingSlot &)> body) {
  return ringLoop(
             b, kStages, ValueRange{}, it0, stages,
             [&](Value s, Value it, SmallVector<Value>) -> SmallVector<Value> {
               body(s, ringSlot(b, base, it, stages, stageBytes));
               return {};
             })
      .second;
}

//===----------------------------------------------------------------------===//
// Tile scheduler
//===----------------------------------------------------------------------===//

Generator::Generator(KB &b, const GemmKind &p, const GemmConfig &cfg,
                     const GemmSizes &s, Value offsets)
    : b(b), p(p), cfg(cfg), s(s), offsets(offsets) {
  nTiles = b.ceilDivc(s.n, cfg.tileN);
  mTiles = b.ceilDivc(s.m, kBM);
}

Value Generator::offsetAt(Value g) {
  Value safe = b.minui(g, b.sub(s.groups, b.idx(1)));
  return b.fromI32(b.ldg(b.getI32Type(), offsets, safe));
}

Value Generator::groupTiles(Value size) {
  if (p.kGrouped)
    return b.mul(mTiles, nTiles);
  return b.mul(clusterRows(b.ceilDivc(size, kBM)), nTiles);
}

Value Generator::clusterRows(Value rowTiles) {
  return cfg.clusterM > 1 ? b.roundUpc(rowTiles, cfg.clusterM) : rowTiles;
}

Walk Generator::advance(Walk w) {
  SmallVector<Value> init = w.asRange();
  SmallVector<Type> types(init.size(), b.getIndexType());
  auto loop = scf::WhileOp::create(b, types, init);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before =
        b.createBlock(&loop.getBefore(), {}, types,
                      SmallVector<Location>(types.size(), b.getLoc()));
    Walk w = Walk::from(before->getArguments());
    Value inGroups = b.ult(w.g, s.groups);
    Value size = b.sub(offsetAt(w.g), w.gStart);
    Value past = b.ule(b.add(w.gBase, groupTiles(size)), w.t);
    scf::ConditionOp::create(b, b.andi(inGroups, past), before->getArguments());
    Block *after =
        b.createBlock(&loop.getAfter(), {}, types,
                      SmallVector<Location>(types.size(), b.getLoc()));
    Walk a = Walk::from(after->getArguments());
    Value end = offsetAt(a.g);
    Value sz = b.sub(end, a.gStart);
    Walk n = a;
    n.g = b.add(a.g, b.idx(1));
    n.gBase = b.add(a.gBase, groupTiles(sz));
    n.gStart = end;
    if (p.kGrouped) {
      n.padStart = b.add(a.padStart, b.roundUpc(sz, 32));
      n.sStart = b.add(a.sStart, b.roundUpc(b.ceilDivc(sz, 32), 4));
    } else {
      n.padStart = b.add(a.padStart, b.roundUpc(sz, kBM));
    }
    scf::YieldOp::create(b, n.asRange());
  }
  return Walk::from(loop.getResults());
}

Value Generator::exists(const Walk &w) {
  Value inGroups = b.ult(w.g, s.groups);
  if (p.kGrouped)
    return inGroups;
  Value tail = b.sub(s.m, w.gStart);
  Value tailTiles = b.mul(clusterRows(b.ceilDivc(tail, kBM)), nTiles);
  return b.ori(inGroups, b.ult(b.sub(w.t, w.gBase), tailTiles));
}

Tile Generator::tile(const Walk &w) {
  Value local = b.sub(w.t, w.gBase);
  Value inGroups = b.ult(w.g, s.groups);
  return p.kGrouped ? kGroupTile(w, local) : expertTile(w, local, inGroups);
}

Tile Generator::expertTile(const Walk &w, Value local, Value inGroups) {
  Tile T;
  // Blocked scale extents follow from K and N (validateSizes checks the
  // bound ones): roundUp(K/32, 4) columns, one atom per 4.
  Value cpA = b.ceilDivc(b.div(s.k, 32), 4), cpB = cpA;
  // Rows of the group, or of the zero tail past the last offset.
  Value end = b.select(inGroups, offsetAt(w.g), s.m);
  Value size = b.sub(end, w.gStart);
  Value sizeTiles = b.ceilDivc(size, kBM);
  Value mtReal = b.maxsi(sizeTiles, b.idx(1));
  Value mtCount = clusterRows(mtReal);
  auto [nt, mt] = b.divRem32(local, mtCount);
  if (cfg.clusterM > 1) {
    // A cluster's padding tile (past the group's last 128-row tile) loads
    // that tile's rows and scales again and writes nothing.
    Value rowsLeft = b.sub(size, b.mulc(mt, kBM));
    Value rows = b.minsi(rowsLeft, b.idx(kBM));
    T.rowsValid = b.maxsi(rows, b.idx(0));
    Value lastTile = b.sub(mtReal, b.idx(1));
    mt = b.minui(mt, lastTile);
  }
  Value row0 = b.add(w.gStart, b.mulc(mt, kBM));
  if (cfg.clusterM == 1) {
    Value rowsLeft = b.sub(size, b.mulc(mt, kBM));
    T.rowsValid = b.minsi(rowsLeft, b.idx(kBM));
  }
  Value colsLeft = b.sub(s.n, b.mulc(nt, cfg.tileN));
  T.colsValid = b.minsi(colsLeft, b.idx(cfg.tileN));
  T.outStride = s.n;
  Value rowOff = b.mul(row0, s.n);
  T.outBase = b.add(rowOff, b.mulc(nt, cfg.tileN));
  T.aRow = row0;
  Value gSafe = b.minui(w.g, b.sub(s.groups, b.idx(1)));
  Value expertRow = b.mul(gSafe, s.n);
  T.bRow = b.add(expertRow, b.mulc(nt, cfg.tileN));
  T.kCoord0 = b.idx(0);
  Value allBlocks = b.div(s.k, 32);
  T.kBlocks = b.select(inGroups, allBlocks, b.idx(0));
  T.kStages = b.ceilDivc(T.kBlocks, kBlocksPerStage);
  Value aTileRow = b.add(b.div(w.padStart, kBM), mt);
  T.aAtom0 = b.mulc(b.mul(aTileRow, cpA), kAtom);
  Value nRow = b.mulc(nt, cfg.tileN);
  Value expertTileRow = b.mul(gSafe, b.ceilDivc(s.n, kBM));
  Value bTileRow = b.add(expertTileRow, b.div(nRow, kBM));
  T.bAtom0 = b.mulc(b.mul(bTileRow, cpB), kAtom);
  T.bAtomRow = b.rem(nRow, kBM);
  T.bAtomStride = b.mulc(cpB, kAtom);
  T.nRow = nRow;
  if (cfg.tileN > kBM) {
    // (One IR-creating call per argument list: GCC and clang evaluate
    // arguments in different orders.)
    Value nextRow = b.add(nRow, b.idx(kBM));
    Value rowsPadded = b.roundUpc(s.n, kBM);
    Value past = b.sge(nextRow, rowsPadded);
    Value step = b.select(past, b.idx(0), T.bAtomStride);
    T.bAtom1 = b.add(T.bAtom0, step);
  }
  return T;
}

Tile Generator::kGroupTile(const Walk &w, Value local) {
  Tile T;
  auto [nt, mt] = b.divRem32(local, mTiles);
  Value size = b.sub(offsetAt(w.g), w.gStart);
  Value rowsLeft = b.sub(s.m, b.mulc(mt, kBM));
  T.rowsValid = b.minsi(rowsLeft, b.idx(kBM));
  Value colsLeft = b.sub(s.n, b.mulc(nt, cfg.tileN));
  T.colsValid = b.minsi(colsLeft, b.idx(cfg.tileN));
  T.outStride = s.n;
  Value groupOff = b.mul(w.g, b.mul(s.m, s.n));
  Value rowOff = b.mul(b.mulc(mt, kBM), s.n);
  Value tileOff = b.add(rowOff, b.mulc(nt, cfg.tileN));
  T.outBase = b.add(groupOff, tileOff);
  T.aRow = b.mulc(mt, kBM);
  Value nRow = b.mulc(nt, cfg.tileN);
  T.bRow = nRow;
  T.kCoord0 = w.padStart;
  T.kBlocks = b.ceilDivc(size, 32);
  T.kStages = b.ceilDivc(T.kBlocks, kBlocksPerStage);
  // per_k_group blocked scales (torchao's K-group layout,
  // torch_to_blocked_2d_K_groups): group g's columns form their own blocked
  // matrix [Rp, kgp_g] (kgp_g = roundUp(ceil(m_g/32), 4)) stored at byte
  // S_g * Rp, S_g = sum_{h<g} kgp_h.
  Value kgpAtoms = b.div(b.roundUpc(T.kBlocks, 4), 4);
  Value aGroupOff = b.mul(w.sStart, b.roundUpc(s.m, kBM));
  T.aAtom0 = b.add(aGroupOff, b.mulc(b.mul(mt, kgpAtoms), kAtom));
  Value bGroupOff = b.mul(w.sStart, b.roundUpc(s.n, kBM));
  T.bAtom0 = b.add(bGroupOff, b.mulc(b.mul(b.div(nRow, kBM), kgpAtoms), kAtom));
  T.bAtomRow = b.rem(nRow, kBM);
  T.bAtomStride = b.mulc(kgpAtoms, kAtom);
  T.nRow = nRow;
  return T;
}

SmallVector<Value> Generator::forEachTile(
    Value firstTile, Value step, unsigned numCarried,
    function_ref<SmallVector<Value>(const Tile &, ValueRange)> body) {
  SmallVector<Value> init{firstTile, b.idx(0), b.idx(0),
                          b.idx(0),  b.idx(0), b.idx(0)};
  for (unsigned i = 0; i < numCarried; ++i)
    init.push_back(b.idx(0));
  SmallVector<Type> types(init.size(), b.getIndexType());
  auto loop = scf::WhileOp::create(b, types, init);
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Location> locs(types.size(), b.getLoc());
  Block *before = b.createBlock(&loop.getBefore(), {}, types, locs);
  Walk w = advance(Walk::from(before->getArguments().take_front(6)));
  SmallVector<Value> fwd = w.asRange();
  llvm::append_range(fwd, before->getArguments().drop_front(6));
  scf::ConditionOp::create(b, exists(w), fwd);
  Block *after = b.createBlock(&loop.getAfter(), {}, types, locs);
  Walk a = Walk::from(after->getArguments().take_front(6));
  SmallVector<Value> carried =
      body(tile(a), after->getArguments().drop_front(6));
  Walk n = a;
  n.t = b.add(a.t, step);
  SmallVector<Value> next = n.asRange();
  llvm::append_range(next, carried);
  scf::YieldOp::create(b, next);
  b.setInsertionPointAfter(loop);
  return SmallVector<Value>(loop.getResults().drop_front(6));
}

Value Generator::forEachTile(Value firstTile, Value step,
                             function_ref<Value(const Tile &, Value)> body) {
  return forEachTile(firstTile, step, 1,
                     [&](const Tile &T, ValueRange c) -> SmallVector<Value> {
                       return {body(T, c[0])};
                     })[0];
}

void Generator::forEachTileStage(
    Value firstTile, Value step, Value base, int64_t stageBytes,
    function_ref<void(const Tile &, Value, const RingSlot &)> body) {
  forEachTile(firstTile, step, [&](const Tile &T, Value it0) {
    return forEachRingSlot(
        b, base, T.kStages, it0, cfg.stages, stageBytes,
        [&](Value s, const RingSlot &slot) { body(T, s, slot); });
  });
}

//===----------------------------------------------------------------------===//
// Kernel frame
//===----------------------------------------------------------------------===//

KernelFrame createGemmKernel(gpu::GPUModuleOp module, StringRef name,
                             const GemmKind &p, const GemmConfig &cfg,
                             int64_t threads, int64_t smemBytes) {
  KernelFrame f;
  f.ob = std::make_unique<OpBuilder>(module.getBodyRegion());
  OpBuilder &ob = *f.ob;
  ob.setInsertionPointToEnd(&module.getBodyRegion().front());
  Location loc = module.getLoc();

  // The dynamic shared memory window, declared once per module.
  if (!SymbolTable::lookupSymbolIn(module, kSmemGlobal)) {
    OpBuilder gb(module.getBodyRegion());
    gb.setInsertionPointToStart(&module.getBodyRegion().front());
    LLVM::GlobalOp::create(gb, loc, LLVM::LLVMArrayType::get(gb.getI8Type(), 0),
                           /*isConstant=*/false, LLVM::Linkage::External,
                           kSmemGlobal, Attribute(), /*alignment=*/1024,
                           /*addrSpace=*/3);
  }

  MLIRContext *ctx = module.getContext();
  Type gptr = LLVM::LLVMPointerType::get(ctx, 1);
  SmallVector<Type> argTypes(7, gptr);
  argTypes[0] = gemmTensorMapType(ctx, kBM);
  argTypes[2] = gemmTensorMapType(ctx, cfg.tileN / cfg.clusterM);
  argTypes.append(std::size(kGemmScalarParams), ob.getI64Type());
  auto fn =
      gpu::GPUFuncOp::create(ob, loc, name, ob.getFunctionType(argTypes, {}));
  f.fn = fn;
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), ob.getUnitAttr());
  fn.setKnownBlockSizeAttr(
      ob.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  // One CTA per SM (PTX `.minnctapersm 1`): with `.maxntid` alone ptxas
  // cannot determine the register count at entry and ignores `setmaxnreg`
  // (warning C7508), which capped the sm_90a consumer warpgroups at 168
  // registers and made them spill.
  fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
              ob.getI32IntegerAttr(1));
  // A cluster's shape is part of the kernel (PTX `.reqnctapercluster`,
  // `.explicitcluster`): launchers need no cluster attribute.
  if (cfg.clusterM > 1)
    fn->setAttr(
        NVVM::NVVMDialect::getClusterDimAttrName(),
        ob.getDenseI32ArrayAttr({static_cast<int32_t>(cfg.clusterM), 1, 1}));
  fn->setAttr(MXMoEDialect::BlockAttrHelper::getNameStr(),
              ob.getDenseI64ArrayAttr({threads, 1, 1}));
  fn->setAttr(MXMoEDialect::GridAttrHelper::getNameStr(),
              ob.getDenseI64ArrayAttr({cfg.numCTAs, 1, 1}));
  fn->setAttr(MXMoEDialect::DynamicSmemAttrHelper::getNameStr(),
              ob.getI64IntegerAttr(smemBytes));
  SymbolTable(module).insert(fn);
  // Pointers: noalias, with the element type a launcher must bind.
  Type e8m0 = Float8E8M0FNUType::get(ctx);
  Type elems[7] = {getMXElementType(ctx, p.aType),
                   e8m0,
                   getMXElementType(ctx, p.bType),
                   e8m0,
                   ob.getI32Type(),
                   p.outF32 ? ob.getF32Type() : Type(ob.getBF16Type()),
                   ob.getI32Type()};
  for (unsigned i = 0; i < 7; ++i) {
    fn.setArgAttr(i, "llvm.noalias", ob.getUnitAttr());
    fn.setArgAttr(i, "mxmoe.element_type", TypeAttr::get(elems[i]));
  }
  for (auto [i, scalar] : llvm::enumerate(kGemmScalarParams))
    fn.setArgAttr(7 + i, "mxmoe.scalar", ob.getStringAttr(scalar));
  // A TMA map over the bound operand viewed as [rows, K]: its dims (K,
  // rows in elements) and row stride come from the bound tensor at launch;
  // box in elements; fp4 rows hold two elements per byte and are unpacked
  // by the copy to one shared-memory byte per element.
  auto tmapAttr = [&](StringRef operand, bool fp4) {
    return ob.getDictionaryAttr(
        {ob.getNamedAttr("operand", ob.getStringAttr(operand)),
         ob.getNamedAttr("data_type",
                         ob.getStringAttr(fp4 ? "16U4_ALIGN16B" : "uint8")),
         ob.getNamedAttr(
             "box",
             ob.getDenseI64ArrayAttr(
                 {kBK, operand == "lhs" ? kBM : cfg.tileN / cfg.clusterM})),
         ob.getNamedAttr("swizzle", ob.getStringAttr("128B")),
         ob.getNamedAttr("oob_fill", ob.getStringAttr("zero"))});
  };
  using ::mxmoe::MXElementKind;
  fn.setArgAttr(0, "mxmoe.tensor_map",
                tmapAttr("lhs", p.aType == MXElementKind::E2M1));
  fn.setArgAttr(2, "mxmoe.tensor_map",
                tmapAttr("rhs", p.bType == MXElementKind::E2M1));

  f.b = std::make_unique<KB>(loc, ob);
  KB &b = *f.b;
  b.setInsertionPointToStart(&fn.getBody().front());
  f.tmapA = fn.getArgument(0);
  f.aScales = fn.getArgument(1);
  f.tmapB = fn.getArgument(2);
  f.bScales = fn.getArgument(3);
  f.offsets = fn.getArgument(4);
  f.out = fn.getArgument(5);
  f.status = fn.getArgument(6);
  Value *sizes[] = {&f.sizes.m,          &f.sizes.n,
                    &f.sizes.k,          &f.sizes.groups,
                    &f.sizes.aScaleRows, &f.sizes.aScaleCols,
                    &f.sizes.bScaleRows, &f.sizes.bScaleCols};
  for (auto [i, v] : llvm::enumerate(sizes))
    *v = arith::IndexCastOp::create(b, b.getIndexType(), fn.getArgument(7 + i));
  f.tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  f.bid = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  f.grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  // 1024-aligned base of the dynamic shared memory (SWIZZLE_128B atoms).
  Value smem = LLVM::AddressOfOp::create(b, b.ptr(3), kSmemGlobal);
  Value raw = arith::IndexCastOp::create(
      b, b.getIndexType(),
      LLVM::PtrToIntOp::create(b, b.getI64Type(), smem).getResult());
  Value rawUp = b.add(raw, b.idx(1023));
  f.base = b.andi(rawUp, b.idx(~int64_t{1023}));
  return f;
}

//===----------------------------------------------------------------------===//
// Loader steps
//===----------------------------------------------------------------------===//

nvgpu::TensorMapDescriptorType gemmTensorMapType(MLIRContext *ctx,
                                                 int64_t boxRows) {
  Attribute workgroup = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  auto box = MemRefType::get({boxRows, kBK}, IntegerType::get(ctx, 8),
                             MemRefLayoutAttrInterface(), workgroup);
  return nvgpu::TensorMapDescriptorType::get(
      ctx, box, nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

Value acquireTensorMap(KB &b, Value map) {
  // Upstream's op for the acquire fence (fence.proxy.tensormap::generic
  // .acquire.sys over 128 bytes, NVGPUToNVVM's TmaFenceOp lowering), then
  // the map as the generic pointer the NVVM TMA copies take
  // (convert-gpu-to-nvvm lowers the descriptor type to !llvm.ptr).
  nvgpu::TmaFenceOp::create(b, map);
  return UnrealizedConversionCastOp::create(b, b.ptr(0), map).getResult(0);
}

void loadTiles(KB &b, Value stage, Value full, Value empty, Value phase,
               int64_t txBytes, Value kc, int64_t aOff, int64_t bOff,
               Value descA, Value descB, const Tile &T, bool loadB) {
  waitParity(b, empty, b.xori(phase, b.idx(1)));
  NVVM::MBarrierArriveExpectTxOp::create(
      b, Type(), full, b.i32(txBytes), NVVM::MemScopeKind::CTA, false, Value());
  auto tma = [&](Value off, Value desc, Value row, Value mask) {
    // A shared::cta address is valid in the shared::cluster window (the
    // PTX 8.0 form of the instruction takes the latter).
    Value dst =
        LLVM::AddrSpaceCastOp::create(b, b.ptr(7), b.sptr(b.add(stage, off)));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, dst, desc, ValueRange{b.toI32(kc), b.toI32(row)}, full, ValueRange{},
        mask, Value(), NVVM::TMALoadMode::TILE, false, nullptr, Value());
  };
  tma(b.idx(aOff), descA, T.aRow, Value());
  if (loadB)
    tma(b.idx(bOff), descB, T.bRow, Value());
}

void loadAtom(KB &b, Value dstAddr, Value src, Value full) {
  Value dst = LLVM::AddrSpaceCastOp::create(b, b.ptr(7), b.sptr(dstAddr));
  NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
      b, dst, src, full, b.i32(kAtom), Value(), Value());
}

//===----------------------------------------------------------------------===//
// Prologue: size and offsets validation
//===----------------------------------------------------------------------===//

Value validateOffsets(KB &b, const GemmKind &p, const GemmSizes &s,
                      Value offsets) {
  SmallVector<Value> init{b.idx(0), b.i1(true), b.idx(0), b.idx(0)};
  Value zero = b.idx(0);
  auto loop = scf::ForOp::create(b, zero, s.groups, b.idx(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value g = loop.getInductionVar();
    Value prev = loop.getRegionIterArg(0), ok = loop.getRegionIterArg(1);
    Value pad = loop.getRegionIterArg(2), scol = loop.getRegionIterArg(3);
    Value o = b.fromI32(b.ldg(b.getI32Type(), offsets, g));
    Value total = p.kGrouped ? s.k : s.m; // token axis (padded for 2Dx2D)
    Value ordered = b.sge(o, prev);
    ok = b.andi(ok, b.andi(ordered, b.ule(o, total)));
    Value diff = b.sub(o, prev);
    Value size = b.maxsi(diff, b.idx(0));
    if (p.kGrouped) {
      pad = b.add(pad, b.roundUpc(size, 32));
      scol = b.add(scol, b.roundUpc(b.ceilDivc(size, 32), 4));
    } else {
      pad = b.add(pad, b.roundUpc(size, kBM));
    }
    scf::YieldOp::create(b, ValueRange{b.maxsi(o, prev), ok, pad, scol});
  }
  Value ok = loop.getResult(1), pad = loop.getResult(2),
        scol = loop.getResult(3);
  if (p.kGrouped) {
    // Padded token columns and K-group scale columns must fit.
    ok = b.andi(ok, b.ule(pad, s.k));
    ok = b.andi(ok, b.ule(scol, b.minsi(s.aScaleCols, s.bScaleCols)));
  } else {
    ok = b.andi(ok, b.ule(pad, s.aScaleRows));
  }
  return ok;
}

Value validateSizes(KB &b, const GemmKind &p, const GemmSizes &s) {
  Value zero = b.idx(0), one = b.idx(1), lim = b.idx(int64_t{1} << 31);
  auto inRange = [&](Value v, Value lo) {
    Value atLeast = b.sge(v, lo);
    return b.andi(atLeast, b.slt(v, lim));
  };
  int64_t kQuantum = (p.kMultipleOf128 || p.hasE2M1()) ? 128 : 32;
  Value groupsOk = inRange(s.groups, one);
  Value ok = b.andi(groupsOk, inRange(s.k, one));
  Value mOk = inRange(s.m, zero);
  ok = b.andi(ok, b.andi(mOk, inRange(s.n, zero)));
  ok = b.andi(ok, b.eq(b.rem(s.k, kQuantum), zero));
  // Tiles of one group: at most ceil(M/128) x ceil(N/tileN) (each < 2^24
  // and < 2^25 here, so the product does not overflow).
  Value mTiles = b.ceilDivc(s.m, kBM);
  Value tiles = b.mul(mTiles, b.ceilDivc(s.n, 64));
  ok = b.andi(ok, b.slt(tiles, lim));
  if (!p.kGrouped)
    ok = b.andi(ok, b.slt(b.mul(s.groups, s.n), lim));
  for (Value extent : {s.aScaleRows, s.aScaleCols, s.bScaleRows, s.bScaleCols})
    ok = b.andi(ok, b.sge(extent, zero));
  ok = b.andi(ok, b.eq(s.bScaleRows, b.roundUpc(s.n, kBM)));
  if (p.kGrouped)
    return b.andi(ok, b.eq(s.aScaleRows, b.roundUpc(s.m, kBM)));
  Value cols = b.roundUpc(b.div(s.k, 32), 4);
  Value aColsOk = b.eq(s.aScaleCols, cols);
  ok = b.andi(ok, b.andi(aColsOk, b.eq(s.bScaleCols, cols)));
  return b.andi(ok, b.eq(b.rem(s.aScaleRows, kBM), zero));
}

Value emitPrologue(KB &b, KernelFrame &f, const GemmKind &p, Value flagAddr,
                   ArrayRef<std::pair<Value, int64_t>> barriers) {
  ifThen(b, b.eq(f.tid, b.idx(0)), [&] {
    // Offsets are read only for valid sizes (G bounds the loop).
    Value sizesOk = validateSizes(b, p, f.sizes);
    Value offsetsOk = ifYield(b, sizesOk, ValueRange{b.i1(false)}, [&] {
      return SmallVector<Value>{validateOffsets(b, p, f.sizes, f.offsets)};
    })[0];
    Value zero32 = b.i32(0);
    Value offsetsVerdict = b.select(offsetsOk, zero32, b.i32(1));
    Value verdict = b.select(sizesOk, offsetsVerdict, b.i32(2));
    b.sts(verdict, flagAddr);
    for (auto [addr, count] : barriers) {
      Value barPtr = b.sptr(addr);
      NVVM::MBarrierInitOp::create(b, barPtr, b.i32(count), Value());
    }
    NVVM::FenceMbarrierInitOp::create(b);
    fenceAsyncShared(b);
  });
  gpu::BarrierOp::create(b);
  Value flag = b.lds(b.getI32Type(), flagAddr);
  Value firstCta = b.eq(f.bid, b.idx(0));
  Value publisher = b.andi(firstCta, b.eq(f.tid, b.idx(0)));
  ifThen(b, publisher, [&] { b.stg(flag, f.status, b.idx(0)); });
  return b.eq(flag, b.i32(0));
}

} // namespace mlir::mxmoe::kernels::gemm
