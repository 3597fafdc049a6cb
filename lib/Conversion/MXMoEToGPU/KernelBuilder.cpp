//===- KernelBuilder.cpp - building blocks of the SIMT MX kernels ---------===//

#include "KernelBuilder.h"
#include "FusedQuantize.h"

#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"
#include "mxmoe/Dialect/MXMoE/Utils/MXFormats.h"
#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using ::mxmoe::MXElementKind;

//===----------------------------------------------------------------------===//
// KB
//===----------------------------------------------------------------------===//

Value KB::idx(int64_t v) { return arith::ConstantIndexOp::create(*this, v); }
Value KB::i32(int64_t v) {
  return arith::ConstantIntOp::create(*this, getI32Type(), v);
}
Value KB::i8(int64_t v) {
  return arith::ConstantIntOp::create(*this, getI8Type(), v);
}
Value KB::i1(bool v) {
  return arith::ConstantIntOp::create(*this, getI1Type(), v ? 1 : 0);
}
Value KB::f32(float v) {
  return arith::ConstantFloatOp::create(*this, getF32Type(), APFloat(v));
}
Value KB::add(Value a, Value b) { return arith::AddIOp::create(*this, a, b); }
Value KB::sub(Value a, Value b) { return arith::SubIOp::create(*this, a, b); }
Value KB::mul(Value a, Value b) { return arith::MulIOp::create(*this, a, b); }
Value KB::mulc(Value a, int64_t c) { return c == 1 ? a : mul(a, idx(c)); }
Value KB::div(Value a, int64_t c) {
  return c == 1 ? a : arith::DivUIOp::create(*this, a, idx(c));
}
Value KB::divv(Value a, Value b) { return arith::DivUIOp::create(*this, a, b); }
std::pair<Value, Value> KB::divRem(Value a, Value d) {
  Value q = divv(a, d);
  return {q, sub(a, mul(q, d))};
}
std::pair<Value, Value> KB::divRem32(Value a, Value d) {
  Value a32 = toI32(a), d32 = toI32(d);
  Value q = arith::DivUIOp::create(*this, a32, d32);
  Value r = arith::RemUIOp::create(*this, a32, d32);
  return {arith::IndexCastUIOp::create(*this, getIndexType(), q),
          arith::IndexCastUIOp::create(*this, getIndexType(), r)};
}
Value KB::rem(Value a, int64_t c) {
  return arith::RemUIOp::create(*this, a, idx(c));
}
Value KB::ceilDivc(Value a, int64_t c) { return div(add(a, idx(c - 1)), c); }
Value KB::roundUpc(Value a, int64_t c) { return mulc(ceilDivc(a, c), c); }
Value KB::ult(Value a, Value b) {
  return arith::CmpIOp::create(*this, arith::CmpIPredicate::ult, a, b);
}
Value KB::ule(Value a, Value b) {
  return arith::CmpIOp::create(*this, arith::CmpIPredicate::ule, a, b);
}
Value KB::slt(Value a, Value b) {
  return arith::CmpIOp::create(*this, arith::CmpIPredicate::slt, a, b);
}
Value KB::sge(Value a, Value b) {
  return arith::CmpIOp::create(*this, arith::CmpIPredicate::sge, a, b);
}
Value KB::eq(Value a, Value b) {
  return arith::CmpIOp::create(*this, arith::CmpIPredicate::eq, a, b);
}
Value KB::ne(Value a, Value b) {
  return arith::CmpIOp::create(*this, arith::CmpIPredicate::ne, a, b);
}
Value KB::select(Value c, Value a, Value b) {
  return arith::SelectOp::create(*this, c, a, b);
}
Value KB::andi(Value a, Value b) { return arith::AndIOp::create(*this, a, b); }
Value KB::ori(Value a, Value b) { return arith::OrIOp::create(*this, a, b); }
Value KB::xori(Value a, Value b) { return arith::XOrIOp::create(*this, a, b); }
Value KB::lnot(Value a) { return xori(a, i1(true)); }
Value KB::shrui(Value a, int64_t s) {
  return arith::ShRUIOp::create(
      *this, a,
      arith::ConstantOp::create(*this, getIntegerAttr(a.getType(), s)));
}
Value KB::shli(Value a, int64_t s) {
  return arith::ShLIOp::create(
      *this, a,
      arith::ConstantOp::create(*this, getIntegerAttr(a.getType(), s)));
}
Value KB::maxsi(Value a, Value b) {
  return arith::MaxSIOp::create(*this, a, b);
}
Value KB::minsi(Value a, Value b) {
  return arith::MinSIOp::create(*this, a, b);
}
Value KB::minui(Value a, Value b) {
  return arith::MinUIOp::create(*this, a, b);
}
Value KB::bitcast(Type t, Value v) {
  return arith::BitcastOp::create(*this, t, v);
}
Value KB::toI64(Value idx) {
  return arith::IndexCastOp::create(*this, getI64Type(), idx);
}
Value KB::toI32(Value idx) {
  return arith::IndexCastOp::create(*this, getI32Type(), idx);
}
Value KB::fromI32(Value v) {
  return arith::IndexCastOp::create(*this, getIndexType(), v);
}
Value KB::load(Value mem, Value index) {
  return memref::LoadOp::create(*this, mem, ValueRange{index});
}
void KB::store(Value v, Value mem, Value index) {
  memref::StoreOp::create(*this, v, mem, ValueRange{index});
}

Type KB::ptr(unsigned as) {
  return LLVM::LLVMPointerType::get(getContext(), as);
}
Value KB::sptr(Value addr) {
  return LLVM::IntToPtrOp::create(*this, ptr(3), toI64(addr));
}
Value KB::genericPtr(Value global) {
  return LLVM::AddrSpaceCastOp::create(*this, ptr(0), global);
}
Value KB::elemPtr(Type t, Value base, Value i) {
  return LLVM::GEPOp::create(*this, base.getType(), t, base,
                             ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(toI64(i))});
}
Value KB::gep8(Value base, Value offset) {
  return elemPtr(getI8Type(), base, offset);
}
Value KB::ldg(Type t, Value base, Value i) {
  return LLVM::LoadOp::create(*this, t, elemPtr(t, base, i));
}
void KB::stg(Value v, Value base, Value i) {
  LLVM::StoreOp::create(*this, v, elemPtr(v.getType(), base, i));
}
Value KB::lds(Type t, Value addr) {
  return LLVM::LoadOp::create(*this, t, sptr(addr));
}
void KB::sts(Value v, Value addr) {
  LLVM::StoreOp::create(*this, v, sptr(addr));
}

Value KB::blockedOffset(Value r, Value c, Value cp) {
  Value rowTile = div(r, 128);
  Value colTiles = div(cp, 4);
  Value tileBase = mul(rowTile, colTiles);
  Value atom = add(tileBase, div(c, 4));
  Value atomBase = mulc(atom, 512);
  Value inAtom = atomRowOffset(rem(r, 128));
  Value rowBase = add(atomBase, inAtom);
  return add(rowBase, rem(c, 4));
}

Value KB::atomRowOffset(Value r) {
  Value laneRow = mulc(rem(r, 32), 16);
  return add(laneRow, mulc(div(r, 32), 4));
}

Value KB::blockedOffset(Value r, Value c, int64_t cp) {
  return blockedOffset(r, c, idx(cp));
}

std::pair<Value, Value> KB::blockedCoord(Value o, Value cp) {
  Value ncb = div(cp, 4);
  Value atom = div(o, 512), w = rem(o, 512);
  Value rowBase = mulc(divv(atom, ncb), 128);
  Value rowBlock = mulc(div(rem(w, 16), 4), 32);
  Value inAtom = add(rowBlock, div(w, 16));
  Value r = add(rowBase, inAtom);
  Value colBase = mulc(arith::RemUIOp::create(*this, atom, ncb), 4);
  Value c = add(colBase, rem(w, 4));
  return {r, c};
}

Value KB::countLE(Value arr, int64_t n, Value key) {
  // Invariant: the answer lies in [lo, hi]. ceil(log2(n + 1)) halvings.
  int64_t trips = 0;
  while ((int64_t{1} << trips) < n + 1)
    ++trips;
  Value lo = idx(0), hi = idx(n);
  for (int64_t i = 0; i < trips; ++i) {
    Value open = ult(lo, hi);
    Value mid = div(add(lo, hi), 2);
    // Clamp so the load stays in bounds when the range is already closed.
    Value safeMid = minui(mid, idx(n - 1));
    Value le = ule(load(arr, safeMid), key);
    Value goRight = andi(open, le), goLeft = andi(open, lnot(le));
    lo = select(goRight, add(mid, idx(1)), lo);
    hi = select(goLeft, mid, hi);
  }
  return lo;
}

Value mlir::mxmoe::kernels::addSharedBuffer(KB &b, int64_t elems, Type elem) {
  auto fn =
      b.getInsertionBlock()->getParent()->getParentOfType<gpu::GPUFuncOp>();
  auto wg =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value buf = fn.addWorkgroupAttribution(
      MemRefType::get({elems}, elem, MemRefLayoutAttrInterface{}, wg),
      fn.getLoc());
  fn.setWorkgroupAttributionAttr(fn.getNumWorkgroupAttributions() - 1,
                                 "llvm.align", b.getI64IntegerAttr(16));
  return buf;
}

Value GroupTable::groupBegin(KB &b, Value g) {
  Value clamped = b.maxsi(g, b.idx(1));
  Value prev = b.sub(clamped, b.idx(1));
  Value first = b.eq(g, b.idx(0));
  Value zero = b.idx(0);
  return b.select(first, zero, b.load(ends, prev));
}

void mlir::mxmoe::kernels::atomicMaxStatus(KB &b, Value status, Value code) {
  Value at = b.idx(0);
  memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::maxs, code, status,
                              ValueRange{at});
}

void mlir::mxmoe::kernels::ifThen(KB &b, Value cond,
                                  function_ref<void()> then) {
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&op.getThenRegion().front());
  then();
}

void mlir::mxmoe::kernels::ifThenElse(KB &b, Value cond,
                                      function_ref<void()> then,
                                      function_ref<void()> otherwise) {
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&op.getThenRegion().front());
  then();
  b.setInsertionPointToStart(&op.getElseRegion().front());
  otherwise();
}

//===----------------------------------------------------------------------===//
// Kernel skeleton
//===----------------------------------------------------------------------===//

namespace {
/// One chunk of the group table's prologue: thread tid handles group
/// g0 + tid of [g0, min(g0 + blockSize, G)). Validates the group against
/// its predecessor (clearing `flag` on a violation), scans the padded sizes
/// of every PrefixUnit in `scratch`, writes the groups' starts and adds the
/// chunk's totals to `carry`.
void scanGroupChunk(KB &b, const GroupSpec &groups, GroupTable &table,
                    int64_t blockSize, int64_t g0, Value tid, Value total,
                    Value flag, ArrayRef<Value> scratch,
                    MutableArrayRef<Value> carry) {
  int64_t G = groups.numGroups;
  int64_t units = groups.units.size();
  Value g = b.add(tid, b.idx(g0));
  Value inG = b.ult(g, b.idx(G));
  // Clamped indices keep the loads in bounds; inG masks the values.
  Value gc = b.minui(g, b.idx(G - 1));
  Value o = b.load(table.ends, gc);
  // The predecessor's index from the clamped gc (g - 1 would be -1 for
  // the threads past the only group when G == 1).
  Value gcFirst = b.eq(gc, b.idx(0));
  Value gcZero = b.idx(0);
  Value prevIdx = b.select(gcFirst, gcZero, b.sub(gc, b.idx(1)));
  Value gFirst = b.eq(g, b.idx(0));
  Value gZero = b.idx(0);
  Value prev = b.select(gFirst, gZero, b.load(table.ends, prevIdx));
  Value ge = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, o, prev);
  Value le = arith::CmpIOp::create(b, arith::CmpIPredicate::sle, o, total);
  Value bad = b.andi(inG, b.lnot(b.andi(ge, le)));
  ifThen(b, bad, [&] {
    Value zero = b.i32(0);
    b.store(zero, flag, b.idx(0));
  });
  Value diff = b.sub(o, prev);
  Value nonNeg = b.maxsi(diff, b.idx(0));
  Value size = b.select(inG, nonNeg, b.idx(0));
  SmallVector<Value> n;
  for (auto [u, unit] : llvm::enumerate(groups.units)) {
    Value c = b.div(b.add(size, b.idx(unit.divisor - 1)), unit.divisor);
    n.push_back(b.mulc(b.div(b.add(c, b.idx(unit.roundTo - 1)), unit.roundTo),
                       unit.roundTo));
    b.store(n.back(), scratch[u], tid);
  }
  gpu::BarrierOp::create(b);
  // Steps up to the chunk's group count: its last entry is then the
  // chunk's total (entries past it are never read).
  int64_t chunk = std::min(blockSize, G - g0);
  for (int64_t d = 1; d < chunk; d *= 2) {
    SmallVector<Value> v;
    for (int64_t u = 0; u < units; ++u) {
      Value mine = b.load(scratch[u], tid);
      Value low = b.ult(tid, b.idx(d));
      Value zero = b.idx(0);
      Value otherIdx = b.select(low, zero, b.sub(tid, b.idx(d)));
      Value other = b.load(scratch[u], otherIdx);
      v.push_back(b.add(mine, b.select(low, b.idx(0), other)));
    }
    gpu::BarrierOp::create(b);
    for (int64_t u = 0; u < units; ++u)
      b.store(v[u], scratch[u], tid);
    gpu::BarrierOp::create(b);
  }
  for (int64_t u = 0; u < units; ++u) {
    Value incl = b.load(scratch[u], tid);
    Value start = b.add(carry[u], b.sub(incl, n[u]));
    ifThen(b, inG, [&] { b.store(start, table.starts[u], g); });
    carry[u] = b.add(carry[u], b.load(scratch[u], b.idx(chunk - 1)));
  }
  gpu::BarrierOp::create(b); // scratch is rewritten by the next chunk
}

/// The common skeleton: `fn` exists with its arguments; `work`, the group
/// total and capacities are values (constants for static kernels).
void buildKernelBody(gpu::GPUFuncOp fn, KB &b, Value work, int64_t blockSize,
                     const GroupSpec *groups, ValueRange views,
                     ValueRange scalars,
                     function_ref<void(KB &, Value, GroupTable &)> body) {
  Location loc = fn.getLoc();
  Value bid = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);

  GroupTable table;
  Value valid;
  if (groups) {
    auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                         gpu::AddressSpace::Workgroup);
    int64_t G = groups->numGroups;
    table.numGroups = G;
    table.ends = fn.addWorkgroupAttribution(
        MemRefType::get({G}, b.getIndexType(), MemRefLayoutAttrInterface{}, wg),
        loc);
    for (size_t u = 0; u < groups->units.size(); ++u)
      table.starts.push_back(fn.addWorkgroupAttribution(
          MemRefType::get({G + 1}, b.getIndexType(),
                          MemRefLayoutAttrInterface{}, wg),
          loc));
    Value flag = fn.addWorkgroupAttribution(
        MemRefType::get({1}, b.getI32Type(), MemRefLayoutAttrInterface{}, wg),
        loc);
    // 16-byte alignment: LLVM vectorizes the prologue's shared stores into
    // st.shared.v2.b64, which faults on the default 8-byte alignment.
    for (unsigned i = 0, e = fn.getNumWorkgroupAttributions(); i < e; ++i)
      fn.setWorkgroupAttributionAttr(i, "llvm.align", b.getI64IntegerAttr(16));
    Value offsets = views[groups->offsetsArg];
    Value status = views[groups->statusArg];
    Value total = groups->totalScalar >= 0 ? scalars[groups->totalScalar]
                                           : b.idx(groups->total);

    // The table is built by all of the CTA's threads (thread 0 alone, one
    // dependent step per group, made the prologue longer than the CTA's
    // work at G = 128: the Qwen3 layer's token-group quantize ran at 11 %
    // of copy bandwidth, bench/RESULTS.md): each thread copies offsets into
    // `ends` (coalesced), validates its group against its predecessor
    // (clearing `flag` on a violation), and the padded sizes of each
    // PrefixUnit are scanned in blockSize chunks (Hillis-Steele in
    // `scratch`, ceil(log2(min(G, blockSize))) steps) into `starts`. For
    // invalid offsets the table's values are unused (the body does not
    // run).
    int64_t units = groups->units.size();
    SmallVector<Value> scratch;
    for (int64_t u = 0; u < units; ++u) {
      scratch.push_back(fn.addWorkgroupAttribution(
          MemRefType::get({blockSize}, b.getIndexType(),
                          MemRefLayoutAttrInterface{}, wg),
          loc));
      fn.setWorkgroupAttributionAttr(fn.getNumWorkgroupAttributions() - 1,
                                     "llvm.align", b.getI64IntegerAttr(16));
    }
    ifThen(b, b.eq(tid, b.idx(0)), [&] {
      Value one = b.i32(1);
      b.store(one, flag, b.idx(0));
    });
    for (int64_t g0 = 0; g0 < G; g0 += blockSize) {
      Value g = b.add(tid, b.idx(g0));
      ifThen(b, b.ult(g, b.idx(G)), [&] {
        b.store(
            arith::IndexCastOp::create(b, b.getIndexType(), b.load(offsets, g)),
            table.ends, g);
      });
    }
    gpu::BarrierOp::create(b);
    SmallVector<Value> carry(units, b.idx(0));
    for (int64_t g0 = 0; g0 < G; g0 += blockSize)
      scanGroupChunk(b, *groups, table, blockSize, g0, tid, total, flag,
                     scratch, carry);
    ifThen(b, b.eq(tid, b.idx(0)), [&] {
      Value capOk = arith::ConstantIntOp::create(b, b.getI1Type(), 1);
      for (auto [u, unit] : llvm::enumerate(groups->units)) {
        b.store(carry[u], table.starts[u], b.idx(G));
        Value capacity =
            unit.capacityScalar >= 0
                ? b.div(scalars[unit.capacityScalar], unit.capacity)
                : b.idx(unit.capacity);
        capOk = b.andi(capOk, b.ule(carry[u], capacity));
      }
      ifThen(b, b.lnot(capOk), [&] {
        Value zero = b.i32(0);
        b.store(zero, flag, b.idx(0));
      });
    });
    gpu::BarrierOp::create(b);
    // Every thread's violations are in `flag` now; block 0 reports it.
    Value firstBlock = b.eq(bid, b.idx(0));
    Value reporter = b.andi(firstBlock, b.eq(tid, b.idx(0)));
    ifThen(b, reporter, [&] {
      Value one = b.i32(1);
      Value word = b.sub(one, b.load(flag, b.idx(0)));
      // A fused gather's threads raise the word to 3 (routing indices) by
      // atomic max, maybe before this: the report joins them.
      if (activeFusedSource && activeFusedSource->gather)
        atomicMaxStatus(b, status, word);
      else
        b.store(word, status, b.idx(0));
    });
    if (activeFusedSource)
      activeFusedSource->status = status;
    // No barrier needed: nothing writes `flag` after the one above.
    Value flagValue = b.load(flag, b.idx(0));
    valid = b.ne(flagValue, b.i32(0));
  }
  // (Computed after the group table: not live across its loops.)
  Value gtid = b.add(b.mulc(bid, blockSize), tid);
  Value inRange = b.ult(gtid, work);
  if (valid)
    inRange = b.andi(inRange, valid);

  auto ifOp = scf::IfOp::create(b, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body(b, gtid, table);
  b.setInsertionPointToEnd(&fn.getBody().front());
  gpu::ReturnOp::create(b);
}

gpu::GPUFuncOp declareKernel(gpu::GPUModuleOp module, OpBuilder &ob,
                             StringRef name, TypeRange args,
                             int64_t blockSize) {
  Location loc = module.getLoc();
  auto fn = gpu::GPUFuncOp::create(ob, loc, name, ob.getFunctionType(args, {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), ob.getUnitAttr());
  fn.setKnownBlockSizeAttr(
      ob.getDenseI32ArrayAttr({static_cast<int32_t>(blockSize), 1, 1}));
  fn->setAttr(MXMoEDialect::BlockAttrHelper::getNameStr(),
              ob.getDenseI64ArrayAttr({blockSize, 1, 1}));
  SymbolTable(module).insert(fn);
  return fn;
}
} // namespace

gpu::GPUFuncOp mlir::mxmoe::kernels::createKernel(
    gpu::GPUModuleOp module, StringRef name, TypeRange args, int64_t work,
    int64_t blockSize, const GroupSpec *groups,
    function_ref<void(KB &, ValueRange, Value, GroupTable &)> body) {
  OpBuilder ob(module.getBodyRegion());
  ob.setInsertionPointToEnd(&module.getBodyRegion().front());
  gpu::GPUFuncOp fn = declareKernel(module, ob, name, args, blockSize);
  int64_t grid = std::max<int64_t>(1, ::mxmoe::ceilDiv(work, blockSize));
  fn->setAttr(MXMoEDialect::GridAttrHelper::getNameStr(),
              ob.getDenseI64ArrayAttr({grid, 1, 1}));
  // Distinct buffers: every pointer parameter is noalias (lets LLVM use the
  // read-only data path for the inputs).
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    fn.setArgAttr(i, "llvm.noalias", ob.getUnitAttr());
  KB b(module.getLoc(), ob);
  b.setInsertionPointToStart(&fn.getBody().front());
  // A copy: workgroup attributions append entry-block arguments.
  SmallVector<Value> views(fn.getArguments());
  buildKernelBody(
      fn, b, b.idx(work), blockSize, groups, views, {},
      [&](KB &b, Value t, GroupTable &table) { body(b, views, t, table); });
  return fn;
}

gpu::GPUFuncOp mlir::mxmoe::kernels::createKernel(
    gpu::GPUModuleOp module, StringRef name, const RuntimeShapeSpec &specIn,
    function_ref<Value(KB &, ValueRange)> workOf, int64_t blockSize,
    const GroupSpec *groups,
    function_ref<void(KB &, ValueRange, ValueRange, Value, GroupTable &)>
        body) {
  MLIRContext *ctx = module.getContext();
  OpBuilder ob(module.getBodyRegion());
  ob.setInsertionPointToEnd(&module.getBodyRegion().front());
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  // A fused quantization's kernel reads the producer's inputs
  // (FusedQuantize.h).
  RuntimeShapeSpec fusedSpec;
  if (activeFusedSource) {
    fusedSpec = specIn;
    activeFusedSource->bind(fusedSpec.views);
  }
  const RuntimeShapeSpec &spec = activeFusedSource ? fusedSpec : specIn;
  SmallVector<Type> args(spec.views.size(), ptr);
  args.append(spec.scalars.size(), ob.getI64Type());
  gpu::GPUFuncOp fn = declareKernel(module, ob, name, args, blockSize);
  for (auto [i, elem] : llvm::enumerate(spec.views)) {
    fn.setArgAttr(i, "llvm.noalias", ob.getUnitAttr());
    fn.setArgAttr(i, "mxmoe.element_type", TypeAttr::get(elem));
  }
  for (auto [i, scalar] : llvm::enumerate(spec.scalars))
    fn.setArgAttr(spec.views.size() + i, "mxmoe.scalar",
                  ob.getStringAttr(scalar));
  KB b(module.getLoc(), ob);
  b.setInsertionPointToStart(&fn.getBody().front());
  // Each pointer seen as a memref<?xT> (a 1-D descriptor built in LLVM
  // form; the extent is not used by the kernels' loads and stores).
  SmallVector<Value> views;
  Type i64 = b.getI64Type();
  for (auto [i, elem] : llvm::enumerate(spec.views)) {
    auto memTy = MemRefType::get({ShapedType::kDynamic}, elem);
    auto descTy = LLVM::LLVMStructType::getLiteral(
        ctx, {ptr, ptr, i64, LLVM::LLVMArrayType::get(i64, 1),
              LLVM::LLVMArrayType::get(i64, 1)});
    Value p = fn.getArgument(i);
    Value d = LLVM::PoisonOp::create(b, descTy);
    d = LLVM::InsertValueOp::create(b, d, p, ArrayRef<int64_t>{0});
    d = LLVM::InsertValueOp::create(b, d, p, ArrayRef<int64_t>{1});
    Value zero = LLVM::ConstantOp::create(b, i64, b.getI64IntegerAttr(0));
    Value one = LLVM::ConstantOp::create(b, i64, b.getI64IntegerAttr(1));
    Value extent = LLVM::ConstantOp::create(
        b, i64, b.getI64IntegerAttr(std::numeric_limits<int64_t>::max()));
    d = LLVM::InsertValueOp::create(b, d, zero, ArrayRef<int64_t>{2});
    d = LLVM::InsertValueOp::create(b, d, extent, ArrayRef<int64_t>{3, 0});
    d = LLVM::InsertValueOp::create(b, d, one, ArrayRef<int64_t>{4, 0});
    views.push_back(
        UnrealizedConversionCastOp::create(b, memTy, d).getResult(0));
  }
  SmallVector<Value> scalars;
  for (unsigned i = 0; i < spec.scalars.size(); ++i)
    scalars.push_back(arith::IndexCastOp::create(
        b, b.getIndexType(), fn.getArgument(spec.views.size() + i)));
  if (activeFusedSource)
    activeFusedSource->bindViews(views);
  buildKernelBody(fn, b, workOf(b, scalars), blockSize, groups, views, scalars,
                  [&](KB &b, Value t, GroupTable &table) {
                    body(b, views, scalars, t, table);
                  });
  return fn;
}

//===----------------------------------------------------------------------===//
// MX math
//===----------------------------------------------------------------------===//

Value mlir::mxmoe::kernels::computeScaleByte(KB &b, Value amax,
                                             RoundingMode mode,
                                             MXElementKind kind) {
  const auto &fmt = ::mxmoe::getMXElementFormat(kind);
  Type i32 = b.getI32Type();
  Value bits = b.bitcast(i32, amax);
  Value expMask = b.i32(0x7F800000);
  Value finite = b.ne(b.andi(bits, expMask), expMask);
  Value zero = b.i32(0), c255 = b.i32(255);
  auto expOf = [&](Value v) { return b.andi(b.shrui(v, 23), c255); };
  auto mantOf = [&](Value v) { return b.andi(v, b.i32(0x7FFFFF)); };
  Value emax = b.i32(fmt.emaxElem);
  Value byte;
  switch (mode) {
  case RoundingMode::floor:
    byte = b.maxsi(b.sub(expOf(bits), emax), zero);
    break;
  case RoundingMode::ceil: {
    Value up = arith::ExtUIOp::create(b, i32, b.ne(mantOf(bits), zero));
    byte = b.maxsi(b.sub(b.add(expOf(bits), up), emax), zero);
    break;
  }
  case RoundingMode::even: {
    Value rounded = b.add(bits, b.i32(1 << (23 - fmt.mantissaBits - 1)));
    byte = b.maxsi(b.sub(expOf(rounded), emax), zero);
    break;
  }
  case RoundingMode::rceil: {
    Value d = arith::MulFOp::create(
        b, amax, b.f32(1.0f / static_cast<float>(fmt.maxNormal)));
    Value dbits = b.bitcast(i32, d);
    Value e = expOf(dbits), m = mantOf(dbits);
    Value subnormal = arith::ExtUIOp::create(
        b, i32,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, m,
                              b.i32(0x400000)));
    Value up = arith::ExtUIOp::create(b, i32, b.ne(m, zero));
    Value expZero = b.eq(e, zero);
    byte = b.select(expZero, subnormal, b.add(e, up));
    break;
  }
  }
  byte = b.minsi(byte, c255);
  return b.select(finite, byte, c255);
}

Value mlir::mxmoe::kernels::reciprocalScale(KB &b, Value byte) {
  Value normal = b.shli(b.sub(b.i32(254), byte), 23);
  Value isMax = b.eq(byte, b.i32(254));
  Value bits = b.select(isMax, b.i32(0x00400000), normal);
  Value isNaN = b.eq(byte, b.i32(255));
  bits = b.select(isNaN, b.i32(0x7FC00000), bits);
  return b.bitcast(b.getF32Type(), bits);
}

Value mlir::mxmoe::kernels::decodeScale(KB &b, Value byte, bool shiftFirst) {
  // Normal bytes are the fp32 exponent field: byte << 23.
  Value normal = shiftFirst ? b.shli(byte, 23) : Value();
  Value isMin = b.eq(byte, b.i32(0));
  Value minBits = b.i32(0x00400000);
  if (!shiftFirst)
    normal = b.shli(byte, 23);
  Value bits = b.select(isMin, minBits, normal);
  Value isNaN = b.eq(byte, b.i32(255));
  bits = b.select(isNaN, b.i32(0x7FC00000), bits);
  return b.bitcast(b.getF32Type(), bits);
}

Value mlir::mxmoe::kernels::absf(KB &b, Value x) {
  Value bits = b.bitcast(b.getI32Type(), x);
  return b.bitcast(b.getF32Type(), b.andi(bits, b.i32(0x7FFFFFFF)));
}

Value mlir::mxmoe::kernels::blockAmax(KB &b, ArrayRef<Value> xs) {
  SmallVector<Value> level;
  for (Value x : xs)
    level.push_back(absf(b, x));
  while (level.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back(arith::MaximumFOp::create(b, level[i], level[i + 1]));
    level = std::move(next);
  }
  return level[0];
}

namespace {
/// E2M1 code (i8 in the low 4 bits) of an fp32 value, RNE with saturation
/// to +-6; NaN -> 0 (the block's NaN is its 0xFF scale). The magnitude code
/// counts the rounding thresholds passed; ties go to the even code.
Value e2m1Code(KB &b, Value x) {
  Type i8 = b.getI8Type();
  Value mag = absf(b, x);
  Value code = b.i8(0);
  const std::pair<float, bool> thresholds[] = {
      {0.25f, false}, {0.75f, true}, {1.25f, false}, {1.75f, true},
      {2.5f, false},  {3.5f, true},  {5.0f, false}};
  for (auto [t, inclusive] : thresholds) {
    Value passed = arith::CmpFOp::create(
        b, inclusive ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT,
        mag, b.f32(t));
    code = b.add(code, arith::ExtUIOp::create(b, i8, passed));
  }
  Value bits = b.bitcast(b.getI32Type(), x);
  Value signBit = b.andi(bits, b.i32(0x80000000));
  Value neg = b.ne(signBit, b.i32(0));
  Value isNaN = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x);
  Value sign = b.andi(neg, b.lnot(isNaN));
  return b.select(sign, b.ori(code, b.i8(8)), code);
}

/// fp32 value of an E2M1 code held in the low 4 bits of an i32.
Value e2m1Value(KB &b, Value code) {
  Value mag = b.andi(code, b.i32(7));
  Value e = b.shrui(mag, 1), m = b.andi(mag, b.i32(1));
  Value expBits = b.shli(b.add(e, b.i32(126)), 23);
  Value normalBits = b.ori(expBits, b.shli(m, 22));
  Value mantZero = b.eq(m, b.i32(0));
  Value zero = b.i32(0);
  Value sub = b.select(mantZero, zero, b.i32(0x3F000000));
  Value bits = b.select(b.eq(e, b.i32(0)), sub, normalBits);
  Value sign = b.shli(b.andi(code, b.i32(8)), 28);
  return b.bitcast(b.getF32Type(), b.ori(bits, sign));
}

/// Exact f32 of the FP8 codes `pair` (vector<2xi8>) via cvt.rn.f16x2.
std::pair<Value, Value> fp8PairToF32(KB &b, MXElementKind kind, Value pair) {
  Value h2 = NVVM::ConvertF8x2ToF16x2Op::create(
      b, VectorType::get({2}, b.getF16Type()), pair, b.getBoolAttr(false),
      TypeAttr::get(getMXElementType(b.getContext(), kind)));
  Type f32 = b.getF32Type();
  Value lo = vector::ExtractOp::create(b, h2, 0);
  Value hi = vector::ExtractOp::create(b, h2, 1);
  return {arith::ExtFOp::create(b, f32, lo), arith::ExtFOp::create(b, f32, hi)};
}
} // namespace

void mlir::mxmoe::kernels::storeElements(KB &b, ArrayRef<Value> scaled,
                                         MXElementKind kind, Value data,
                                         Value elemIndex) {
  int64_t n = scaled.size(); // even; the store is n (FP8) or n/2 bytes
  if (kind == MXElementKind::E2M1) {
    SmallVector<Value> bytes;
    for (int64_t i = 0; i < n; i += 2) {
      Value lo = e2m1Code(b, scaled[i]);
      Value hi = b.shli(e2m1Code(b, scaled[i + 1]), 4);
      bytes.push_back(b.ori(lo, hi));
    }
    Value v = vector::FromElementsOp::create(
        b, VectorType::get({n / 2}, b.getI8Type()), bytes);
    vector::StoreOp::create(b, v, data, ValueRange{b.div(elemIndex, 2)}, false,
                            llvm::MaybeAlign(n / 2));
    return;
  }
  Type elem = getMXElementType(b.getContext(), kind);
  SmallVector<Value> packed;
  for (int64_t i = 0; i < n; i += 2) {
    // cvt.rn.satfinite.{e4m3,e5m2}x2.f32 d, a, b puts `a` in the upper
    // byte, so element i (the lower address) goes in `b`.
    packed.push_back(NVVM::ConvertF32x2ToF8x2Op::create(
        b, b.getI16Type(), scaled[i + 1], scaled[i], NVVM::FPRoundingMode::RN,
        NVVM::SaturationMode::SATFINITE, /*relu=*/false, elem));
  }
  Value vp = vector::FromElementsOp::create(
      b, VectorType::get({n / 2}, b.getI16Type()), packed);
  Value v = vector::BitCastOp::create(b, VectorType::get({n}, elem), vp);
  vector::StoreOp::create(b, v, data, ValueRange{elemIndex}, false,
                          llvm::MaybeAlign(n));
}

void mlir::mxmoe::kernels::storeZeroElements(KB &b, MXElementKind kind,
                                             Value data, Value elemIndex) {
  if (kind == MXElementKind::E2M1) {
    auto vt = VectorType::get({16}, b.getI8Type());
    Value z = arith::ConstantOp::create(
        b, vt, DenseElementsAttr::get(vt, b.getI8IntegerAttr(0)));
    vector::StoreOp::create(b, z, data, ValueRange{b.div(elemIndex, 2)}, false,
                            llvm::MaybeAlign(16));
    return;
  }
  auto i8t = VectorType::get({32}, b.getI8Type());
  Value z = arith::ConstantOp::create(
      b, i8t, DenseElementsAttr::get(i8t, b.getI8IntegerAttr(0)));
  Value v = vector::BitCastOp::create(
      b, VectorType::get({32}, getMXElementType(b.getContext(), kind)), z);
  vector::StoreOp::create(b, v, data, ValueRange{elemIndex}, false,
                          llvm::MaybeAlign(32));
}

SmallVector<Value> mlir::mxmoe::kernels::loadElements(KB &b, MXElementKind kind,
                                                      Value data,
                                                      Value elemIndex) {
  SmallVector<Value> out;
  if (kind == MXElementKind::E2M1) {
    Value v = vector::LoadOp::create(b, VectorType::get({16}, b.getI8Type()),
                                     data, ValueRange{b.div(elemIndex, 2)},
                                     false, llvm::MaybeAlign(16));
    for (int64_t i = 0; i < 16; ++i) {
      Value byte = arith::ExtUIOp::create(b, b.getI32Type(),
                                          vector::ExtractOp::create(b, v, i));
      out.push_back(e2m1Value(b, b.andi(byte, b.i32(15))));
      out.push_back(e2m1Value(b, b.shrui(byte, 4)));
    }
    return out;
  }
  auto codes = VectorType::get({32}, getMXElementType(b.getContext(), kind));
  Value q = vector::LoadOp::create(b, codes, data, ValueRange{elemIndex}, false,
                                   llvm::MaybeAlign(32));
  Value qi8 =
      vector::BitCastOp::create(b, VectorType::get({32}, b.getI8Type()), q);
  for (int64_t i = 0; i < 32; i += 2) {
    Value pair =
        vector::ShuffleOp::create(b, qi8, qi8, ArrayRef<int64_t>{i, i + 1});
    auto [lo, hi] = fp8PairToF32(b, kind, pair);
    out.push_back(lo);
    out.push_back(hi);
  }
  return out;
}

Value mlir::mxmoe::kernels::loadElement(KB &b, MXElementKind kind, Value data,
                                        Value elemIndex) {
  if (kind == MXElementKind::E2M1) {
    Value byte = arith::ExtUIOp::create(b, b.getI32Type(),
                                        b.load(data, b.div(elemIndex, 2)));
    Value parity = b.rem(elemIndex, 2);
    Value odd = b.ne(parity, b.idx(0));
    Value hi = b.shrui(byte, 4);
    Value code = b.select(odd, hi, b.andi(byte, b.i32(15)));
    return e2m1Value(b, code);
  }
  Value q = b.bitcast(b.getI8Type(), b.load(data, elemIndex));
  Value pair = vector::FromElementsOp::create(
      b, VectorType::get({2}, b.getI8Type()), ValueRange{q, b.i8(0)});
  return fp8PairToF32(b, kind, pair).first;
}

MemRefType mlir::mxmoe::kernels::flatMemRef(RankedTensorType t) {
  if (isa<Float4E2M1FNType>(t.getElementType()))
    return MemRefType::get({t.getNumElements() / 2},
                           IntegerType::get(t.getContext(), 8));
  return MemRefType::get({t.getNumElements()}, t.getElementType());
}
