// RUN: mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu=host-launch=false | FileCheck %s

// A bf16 mxmoe.linear inside a static shard loop (a tiled MoE block's
// router, LinearBf16.cpp) becomes one mma.sync kernel (y [M, N] = x [M, K]
// W [N, K]^T, f32 accumulation, 128 x 128 tiles of 256 threads), and a 2-D
// linalg.transpose in the loop, or read only in it, a transpose kernel.
// Outside shard loops both stay on the host.

// CHECK-LABEL: func.func @router(
// CHECK: mxmoe.linear %{{.*}}, %{{.*}} {fqn = "host", precision = #mxmoe.precision<bf16>} :
// CHECK: linalg.transpose {{.*}} permutation = [1, 0] {mxmoe.grid = array<i64: 1, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@router__transpose_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<value 16>, #mxmoe.kernel_arg<value 32>]}
// CHECK: scf.for
// CHECK: mxmoe.linear {{.*}} {fqn = "router", mxmoe.grid = array<i64: 1, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@router__linear_bf16_1, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<value 32>, #mxmoe.kernel_arg<value 16>, #mxmoe.kernel_arg<value 32>]
// CHECK: mxmoe.linear {{.*}} {fqn = "router.input_grad", mxmoe.grid = array<i64: 1, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@router__linear_bf16_2, {{.*}}#mxmoe.kernel_arg<value 32>, #mxmoe.kernel_arg<value 32>, #mxmoe.kernel_arg<value 16>]
// CHECK: linalg.transpose {{.*}} {mxmoe.grid = array<i64: 2, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@router__transpose_3
// The weight gradient contracts over the shard's 33 tokens: K = 33.
// CHECK: mxmoe.linear {{.*}} {fqn = "router.weight_grad", {{.*}}#mxmoe.kernel_arg<value 16>, #mxmoe.kernel_arg<value 32>, #mxmoe.kernel_arg<value 33>]
// CHECK: gpu.func @router__transpose_0(%{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}, %{{.*}}: i64 {mxmoe.scalar = "rows"}, %{{.*}}: i64 {mxmoe.scalar = "cols"}) workgroup(%{{.*}} : memref<1056xbf16, #gpu.address_space<workgroup>>
// CHECK: gpu.func @router__linear_bf16_1(%{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}, %{{.*}}: i64 {mxmoe.scalar = "m"}, %{{.*}}: i64 {mxmoe.scalar = "n"}, %{{.*}}: i64 {mxmoe.scalar = "k"}) workgroup(%{{.*}} : memref<40960xi8, #gpu.address_space<workgroup>>
// K % 8 == 0: 16-byte loads (two chunks of x and of W per thread, for
// the first stage and in the loop).
// CHECK-COUNT-4: llvm.load {{.*}} -> vector<4xi32>
// CHECK: scf.for
// CHECK-COUNT-4: llvm.load {{.*}} -> vector<4xi32>
// Per 16-wide K slice: 4 ldmatrix.x4 of x, 2 of W, 16 mma.sync m16n8k16.
// CHECK-COUNT-4: nvvm.ldmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK-COUNT-2: nvvm.ldmatrix
// CHECK-COUNT-16: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK: gpu.barrier
// CHECK: vector.from_elements {{.*}} : vector<2xbf16>
// The weight gradient's kernel (K = 33): 2-byte loads, each predicated.
// CHECK: gpu.func @router__linear_bf16_5(
// CHECK-COUNT-8: llvm.load {{.*}} -> i16

func.func @router(%x: tensor<64x32xbf16>, %w: tensor<16x32xbf16>, %dy: tensor<64x16xbf16>) -> (tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<64x32xbf16>, tensor<16x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %host = mxmoe.linear %x, %w {fqn = "host", precision = #mxmoe.precision<bf16>} : (tensor<64x32xbf16>, tensor<16x32xbf16>) -> tensor<64x16xbf16>
  %e = tensor.empty() : tensor<32x16xbf16>
  %wt = linalg.transpose ins(%w : tensor<16x32xbf16>) outs(%e : tensor<32x16xbf16>) permutation = [1, 0]
  %y0 = tensor.empty() : tensor<64x16xbf16>
  %dx0 = tensor.empty() : tensor<64x32xbf16>
  %dw0 = arith.constant dense<0.0> : tensor<16x32xbf16>
  %r:3 = scf.for %i = %c0 to %c1 step %c1 iter_args(%y = %y0, %dx = %dx0, %dw = %dw0) -> (tensor<64x16xbf16>, tensor<64x32xbf16>, tensor<16x32xbf16>) {
    %xs = tensor.extract_slice %x[0, 0] [32, 32] [1, 1] : tensor<64x32xbf16> to tensor<32x32xbf16>
    %ys = mxmoe.linear %xs, %w {fqn = "router", precision = #mxmoe.precision<bf16>} : (tensor<32x32xbf16>, tensor<16x32xbf16>) -> tensor<32x16xbf16>
    %gs = tensor.extract_slice %dy[0, 0] [32, 16] [1, 1] : tensor<64x16xbf16> to tensor<32x16xbf16>
    %dxs = mxmoe.linear %gs, %wt {fqn = "router.input_grad", precision = #mxmoe.precision<bf16>} : (tensor<32x16xbf16>, tensor<32x16xbf16>) -> tensor<32x32xbf16>
    %g33 = tensor.extract_slice %dy[0, 0] [33, 16] [1, 1] : tensor<64x16xbf16> to tensor<33x16xbf16>
    %x33 = tensor.extract_slice %x[0, 0] [33, 32] [1, 1] : tensor<64x32xbf16> to tensor<33x32xbf16>
    %e1 = tensor.empty() : tensor<16x33xbf16>
    %gt = linalg.transpose ins(%g33 : tensor<33x16xbf16>) outs(%e1 : tensor<16x33xbf16>) permutation = [1, 0]
    %e2 = tensor.empty() : tensor<32x33xbf16>
    %xt = linalg.transpose ins(%x33 : tensor<33x32xbf16>) outs(%e2 : tensor<32x33xbf16>) permutation = [1, 0]
    %dws = mxmoe.linear %gt, %xt {fqn = "router.weight_grad", precision = #mxmoe.precision<bf16>} : (tensor<16x33xbf16>, tensor<32x33xbf16>) -> tensor<16x32xbf16>
    %y1 = tensor.insert_slice %ys into %y[0, 0] [32, 16] [1, 1] : tensor<32x16xbf16> into tensor<64x16xbf16>
    %dx1 = tensor.insert_slice %dxs into %dx[0, 0] [32, 32] [1, 1] : tensor<32x32xbf16> into tensor<64x32xbf16>
    %dw1 = arith.addf %dw, %dws : tensor<16x32xbf16>
    scf.yield %y1, %dx1, %dw1 : tensor<64x16xbf16>, tensor<64x32xbf16>, tensor<16x32xbf16>
  } {mxmoe.shard_tokens = 32 : i64}
  return %host, %r#0, %r#1, %r#2 : tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<64x32xbf16>, tensor<16x32xbf16>
}

// -----

// K = 0 (a weight gradient over an empty shard): zeros, no kernel reads
// the empty operands.
// CHECK-LABEL: func.func @empty_k(
// CHECK: scf.for
// CHECK-NEXT: arith.constant {mxmoe.zero_result} dense<0.000000e+00> : tensor<16x32xbf16>
// CHECK-NOT: mxmoe.linear
func.func @empty_k(%x: tensor<16x0xbf16>, %w: tensor<32x0xbf16>) -> tensor<16x32xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %y0 = tensor.empty() : tensor<16x32xbf16>
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%y = %y0) -> (tensor<16x32xbf16>) {
    %l = mxmoe.linear %x, %w {fqn = "r", precision = #mxmoe.precision<bf16>} : (tensor<16x0xbf16>, tensor<32x0xbf16>) -> tensor<16x32xbf16>
    scf.yield %l : tensor<16x32xbf16>
  } {mxmoe.shard_tokens = 16 : i64}
  return %r : tensor<16x32xbf16>
}

// -----

// A bias (gpt-oss's router): added to the f32 sum before the rounding (a
// fourth pointer after y); its gradient, linalg.reduce over the shard's
// tokens into zeros, is the row-sum kernel (f32 per column, 8 partials
// added in order).
// CHECK-LABEL: func.func @biased(
// CHECK: mxmoe.linear %{{.*}}, %{{.*}} bias %{{.*}} {fqn = "r", mxmoe.grid = array<i64: 1, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@biased__linear_bf16_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<operand 2>, #mxmoe.kernel_arg<value 32>, #mxmoe.kernel_arg<value 16>, #mxmoe.kernel_arg<value 32>]
// CHECK: linalg.reduce ins(%{{.*}} : tensor<32x16xbf16>) {{.*}} {mxmoe.grid = array<i64: 1, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@biased__sum_rows_1, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<value 32>, #mxmoe.kernel_arg<value 16>]}
// CHECK: gpu.func @biased__linear_bf16_0({{.*}}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}, %{{.*}}: i64 {mxmoe.scalar = "m"}
// CHECK: llvm.load {{.*}} -> vector<2xbf16>
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: arith.addf
// CHECK: gpu.func @biased__sum_rows_1(
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f32)
// CHECK: gpu.barrier
// CHECK-COUNT-7: arith.addf {{.*}} : f32
func.func @biased(%x: tensor<64x32xbf16>, %w: tensor<16x32xbf16>, %bias: tensor<16xbf16>, %dy: tensor<64x16xbf16>) -> (tensor<64x16xbf16>, tensor<16xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : bf16
  %y0 = tensor.empty() : tensor<64x16xbf16>
  %e = tensor.empty() : tensor<16xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<16xbf16>) -> tensor<16xbf16>
  %db0 = arith.constant dense<0.0> : tensor<16xbf16>
  %r:2 = scf.for %i = %c0 to %c1 step %c1 iter_args(%y = %y0, %db = %db0) -> (tensor<64x16xbf16>, tensor<16xbf16>) {
    %xs = tensor.extract_slice %x[0, 0] [32, 32] [1, 1] : tensor<64x32xbf16> to tensor<32x32xbf16>
    %ys = mxmoe.linear %xs, %w bias %bias {fqn = "r", precision = #mxmoe.precision<bf16>} : (tensor<32x32xbf16>, tensor<16x32xbf16>, tensor<16xbf16>) -> tensor<32x16xbf16>
    %gs = tensor.extract_slice %dy[0, 0] [32, 16] [1, 1] : tensor<64x16xbf16> to tensor<32x16xbf16>
    %s = linalg.reduce ins(%gs : tensor<32x16xbf16>) outs(%z : tensor<16xbf16>) dimensions = [0]
      (%a: bf16, %acc: bf16) {
        %t = arith.addf %a, %acc : bf16
        linalg.yield %t : bf16
      }
    %y1 = tensor.insert_slice %ys into %y[0, 0] [32, 16] [1, 1] : tensor<32x16xbf16> into tensor<64x16xbf16>
    %db1 = arith.addf %db, %s : tensor<16xbf16>
    scf.yield %y1, %db1 : tensor<64x16xbf16>, tensor<16xbf16>
  } {mxmoe.shard_tokens = 32 : i64}
  return %r#0, %r#1 : tensor<64x16xbf16>, tensor<16xbf16>
}
