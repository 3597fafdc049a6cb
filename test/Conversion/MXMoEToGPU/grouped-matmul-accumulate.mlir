// Lowering of mxmoe.grouped_matmul `accumulate` (2D x 2D weight gradient,
// out = acc + product): the kernel takes the same parameters as without it
// (the output pointer holds the accumulator) and its epilogue loads each
// element it replaces, adds the fp32 tile value and stores the sum rounded
// once. sm_90a MX128 (staged rows: the loads happen before the row copies;
// column pairs as one 4-byte load), sm_90a MX32 (direct stores) and
// sm_100a (tcgen05: per element; tiles without K work store nothing).
// RUN: mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu=chip=sm_90a | FileCheck %s --check-prefix=SM90
// RUN: mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu=chip=sm_100a | FileCheck %s --check-prefix=SM100
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// SM90-LABEL: func.func @mx128_acc(
// SM90-SAME:    %[[ACC:[a-z0-9_]+]]: tensor<4x256x128xbf16>)
// SM90:         mxmoe.grouped_matmul {{.*}} accumulate %[[ACC]] {mxmoe.kernel = @mxmoe_kernels::@mx128_acc__grouped_matmul_0
// SM90-SAME:      #mxmoe.kernel_arg<result 0>
// SM90:         gpu.func @mx128_acc__grouped_matmul_0(
// SM90-SAME:      mxmoe.mma = "wgmma_fp8_promote_k128"
// The accumulator pairs, then the fp32 sums, before the staged rows' branch.
// SM90:           llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<2xbf16>
// SM90:           arith.extf %{{.+}} : bf16 to f32
// SM90:           arith.addf
// SM90:           nvvm.cp.async.bulk.global.shared.cta
// SM100-LABEL: func.func @mx128_acc(
// SM100:         gpu.func @mx128_acc__grouped_matmul_0(
// SM100:           nvvm.tcgen05.ld
// SM100:           llvm.load %{{.+}} : !llvm.ptr<1> -> bf16
// SM100-NEXT:      arith.extf
// SM100-NEXT:      arith.addf
// SM100-NEXT:      arith.truncf
// PTXAS-DAG: Compiling entry function 'mx128_acc__grouped_matmul_0' for 'sm_90a'
// PTXAS-DAG: Compiling entry function 'mx32_acc_f32__grouped_matmul_0' for 'sm_90a'
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
func.func @mx128_acc(%g: tensor<256x1280xf8E4M3FN>, %gs: tensor<256x44xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>,
                     %x: tensor<128x1280xf8E4M3FN>, %xs: tensor<128x44xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>,
                     %offs: tensor<4xi32>, %acc: tensor<4x256x128xbf16>) -> tensor<4x256x128xbf16> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs accumulate %acc
      : (tensor<256x1280xf8E4M3FN>, tensor<256x44xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<128x1280xf8E4M3FN>, tensor<128x44xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<4xi32>, tensor<4x256x128xbf16>) -> tensor<4x256x128xbf16>
  return %o : tensor<4x256x128xbf16>
}

// -----

// MX32, f32 accumulator (sm_90a: the bf16-upcast strategy): the direct
// fragment stores, 8-byte pairs.
// SM90-LABEL: func.func @mx32_acc_f32(
// SM90:         gpu.func @mx32_acc_f32__grouped_matmul_0(
// SM90-SAME:      mxmoe.mma = "wgmma_bf16_upcast"
// SM90:           llvm.load %{{.+}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xf32>
// SM90-NOT:       arith.extf %{{.+}} : bf16 to f32
// SM90:           arith.addf
// SM90:           llvm.store %{{.+}}, %{{.+}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// SM100-LABEL: func.func @mx32_acc_f32(
// SM100:         llvm.load %{{.+}} : !llvm.ptr<1> -> f32
// SM100-NEXT:    arith.addf
// SM100:         llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr<1>
func.func @mx32_acc_f32(%g: tensor<256x1280xf8E4M3FN>, %gs: tensor<256x44xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                        %x: tensor<128x1280xf8E4M3FN>, %xs: tensor<128x44xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                        %offs: tensor<4xi32>, %acc: tensor<4x256x128xf32>) -> tensor<4x256x128xf32> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs accumulate %acc
      : (tensor<256x1280xf8E4M3FN>, tensor<256x44xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<128x1280xf8E4M3FN>, tensor<128x44xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<4xi32>, tensor<4x256x128xf32>) -> tensor<4x256x128xf32>
  return %o : tensor<4x256x128xf32>
}
