// A two-layer tiled MLP (linear -> x*exp(x) -> linear, batch 2 x 7
// tokens) with 2, 3, 8 and 16 shards (14 tokens: uneven shards, and more
// shards than tokens) gives the outputs and the gradients (dx, dW1, dW2) of
// the untiled run (1 shard) within 1e-5: each printed flag is 1 when
// max |tiled - untiled| < 1e-5, else the difference. Runs on the CPU.
// RUN: mxmoe-opt %s --mxmoe-tile-mlp --mxmoe-linear-to-linalg --canonicalize --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine --convert-math-to-llvm --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-tile-mlp="static-shards=false" --mxmoe-linear-to-linalg --canonicalize --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine --convert-math-to-llvm --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

func.func private @m1.backward(tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x7x4xf32>) -> (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
func.func private @m2.backward(tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x7x4xf32>) -> (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
func.func private @m3.backward(tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x7x4xf32>) -> (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
func.func private @m8.backward(tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x7x4xf32>) -> (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
func.func private @m16.backward(tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x7x4xf32>) -> (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>)

func.func @m1(%x: tensor<2x7x4xf32>, %w1: tensor<8x4xf32>, %w2: tensor<4x8xf32>) -> tensor<2x7x4xf32> {
  %y = mxmoe.tiled_mlp shards = 1 (%x, %w1, %w2) {fqn = "m1"} : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<2x7x4xf32> {
  ^bb0(%xs: tensor<?x4xf32>, %a: tensor<8x4xf32>, %b: tensor<4x8xf32>):
    %h = mxmoe.linear %xs, %a {fqn = "m1.w1"} : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
    %e = math.exp %h : tensor<?x8xf32>
    %g = arith.mulf %h, %e : tensor<?x8xf32>
    %o = mxmoe.linear %g, %b {fqn = "m1.w2"} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    mxmoe.yield %o : tensor<?x4xf32>
  }
  return %y : tensor<2x7x4xf32>
}

func.func @m2(%x: tensor<2x7x4xf32>, %w1: tensor<8x4xf32>, %w2: tensor<4x8xf32>) -> tensor<2x7x4xf32> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w1, %w2) {fqn = "m2"} : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<2x7x4xf32> {
  ^bb0(%xs: tensor<?x4xf32>, %a: tensor<8x4xf32>, %b: tensor<4x8xf32>):
    %h = mxmoe.linear %xs, %a {fqn = "m2.w1"} : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
    %e = math.exp %h : tensor<?x8xf32>
    %g = arith.mulf %h, %e : tensor<?x8xf32>
    %o = mxmoe.linear %g, %b {fqn = "m2.w2"} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    mxmoe.yield %o : tensor<?x4xf32>
  }
  return %y : tensor<2x7x4xf32>
}

func.func @m3(%x: tensor<2x7x4xf32>, %w1: tensor<8x4xf32>, %w2: tensor<4x8xf32>) -> tensor<2x7x4xf32> {
  %y = mxmoe.tiled_mlp shards = 3 (%x, %w1, %w2) {fqn = "m3"} : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<2x7x4xf32> {
  ^bb0(%xs: tensor<?x4xf32>, %a: tensor<8x4xf32>, %b: tensor<4x8xf32>):
    %h = mxmoe.linear %xs, %a {fqn = "m3.w1"} : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
    %e = math.exp %h : tensor<?x8xf32>
    %g = arith.mulf %h, %e : tensor<?x8xf32>
    %o = mxmoe.linear %g, %b {fqn = "m3.w2"} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    mxmoe.yield %o : tensor<?x4xf32>
  }
  return %y : tensor<2x7x4xf32>
}

func.func @m8(%x: tensor<2x7x4xf32>, %w1: tensor<8x4xf32>, %w2: tensor<4x8xf32>) -> tensor<2x7x4xf32> {
  %y = mxmoe.tiled_mlp shards = 8 (%x, %w1, %w2) {fqn = "m8"} : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<2x7x4xf32> {
  ^bb0(%xs: tensor<?x4xf32>, %a: tensor<8x4xf32>, %b: tensor<4x8xf32>):
    %h = mxmoe.linear %xs, %a {fqn = "m8.w1"} : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
    %e = math.exp %h : tensor<?x8xf32>
    %g = arith.mulf %h, %e : tensor<?x8xf32>
    %o = mxmoe.linear %g, %b {fqn = "m8.w2"} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    mxmoe.yield %o : tensor<?x4xf32>
  }
  return %y : tensor<2x7x4xf32>
}

func.func @m16(%x: tensor<2x7x4xf32>, %w1: tensor<8x4xf32>, %w2: tensor<4x8xf32>) -> tensor<2x7x4xf32> {
  %y = mxmoe.tiled_mlp shards = 16 (%x, %w1, %w2) {fqn = "m16"} : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<2x7x4xf32> {
  ^bb0(%xs: tensor<?x4xf32>, %a: tensor<8x4xf32>, %b: tensor<4x8xf32>):
    %h = mxmoe.linear %xs, %a {fqn = "m16.w1"} : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
    %e = math.exp %h : tensor<?x8xf32>
    %g = arith.mulf %h, %e : tensor<?x8xf32>
    %o = mxmoe.linear %g, %b {fqn = "m16.w2"} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    mxmoe.yield %o : tensor<?x4xf32>
  }
  return %y : tensor<2x7x4xf32>
}

// 1 if max |a - b| < 1e-5, else that maximum.
func.func @close3(%a: tensor<2x7x4xf32>, %b: tensor<2x7x4xf32>) -> f32 {
  %d = arith.subf %a, %b : tensor<2x7x4xf32>
  %ad = math.absf %d : tensor<2x7x4xf32>
  %c = tensor.collapse_shape %ad [[0, 1, 2]] : tensor<2x7x4xf32> into tensor<56xf32>
  %r = call @maxflag(%c) : (tensor<56xf32>) -> f32
  return %r : f32
}
func.func @close2(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> f32 {
  %d = arith.subf %a, %b : tensor<8x4xf32>
  %ad = math.absf %d : tensor<8x4xf32>
  %c = tensor.collapse_shape %ad [[0, 1]] : tensor<8x4xf32> into tensor<32xf32>
  %r = call @maxflag32(%c) : (tensor<32xf32>) -> f32
  return %r : f32
}
func.func @close2t(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> f32 {
  %d = arith.subf %a, %b : tensor<4x8xf32>
  %ad = math.absf %d : tensor<4x8xf32>
  %c = tensor.collapse_shape %ad [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %r = call @maxflag32(%c) : (tensor<32xf32>) -> f32
  return %r : f32
}
func.func @maxflag(%v: tensor<56xf32>) -> f32 {
  %z = arith.constant dense<0.0> : tensor<f32>
  %m = linalg.reduce ins(%v : tensor<56xf32>) outs(%z : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) { %x = arith.maximumf %in, %acc : f32
                            linalg.yield %x : f32 }
  %s = tensor.extract %m[] : tensor<f32>
  %r = call @flag(%s) : (f32) -> f32
  return %r : f32
}
func.func @maxflag32(%v: tensor<32xf32>) -> f32 {
  %z = arith.constant dense<0.0> : tensor<f32>
  %m = linalg.reduce ins(%v : tensor<32xf32>) outs(%z : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) { %x = arith.maximumf %in, %acc : f32
                            linalg.yield %x : f32 }
  %s = tensor.extract %m[] : tensor<f32>
  %r = call @flag(%s) : (f32) -> f32
  return %r : f32
}
func.func @flag(%s: f32) -> f32 {
  %tol = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %ok = arith.cmpf olt, %s, %tol : f32
  %r = arith.select %ok, %one, %s : f32
  return %r : f32
}

func.func @main() {
  %x = arith.constant dense<[[[1.020459532737732, -1.2778325080871582, 0.20904941856861115,   -0.28388479351997375],  [-0.2263246476650238, -0.10779858380556107, -1.009993076324463,   -0.11596618592739105],  [-0.4326065480709076, 1.6614997386932373, 0.11289330571889877,   -0.17631539702415466],  [-0.14064371585845947, -0.3340231776237488, -0.5275752544403076,   -0.19540049135684967],  [0.24097269773483276, -0.11927680671215057, 0.4788793623447418,   -0.09990106523036957],  [0.01212978269904852, 0.7729104161262512, 0.2725527584552765,   -0.2526143789291382],  [-0.09141948819160461, 0.27026256918907166, 0.9675440192222595,   -0.1348101645708084]], [[-0.12177933752536774, 0.5011568069458008, -0.4432299733161926,   -0.14586012065410614],  [0.44126948714256287, 0.29017502069473267, 0.04575835168361664,   0.3350521922111511],  [-1.41408109664917, 0.5106534361839294, -0.4798223674297333,   -0.8343099355697632],  [0.13822287321090698, 0.35027244687080383, -0.22238372266292572,   -0.5382029414176941],  [0.013062416575849056, -0.02637365460395813, 0.7027990818023682,   0.3737039864063263],  [0.09690782427787781, 0.5558165907859802, -0.10276152193546295,   -0.4629497826099396],  [0.29202914237976074, 0.2912692129611969, -0.10741445422172546,   -0.39140430092811584]]]> : tensor<2x7x4xf32>
  %w1 = arith.constant dense<[[0.11457695066928864, -1.246947169303894, 0.34506237506866455,  0.24568413197994232], [-0.819428563117981, 0.03067675419151783, -0.482049822807312,  0.3786105215549469], [-1.0170836448669434, -0.457247257232666, 0.35479000210762024,  0.5782005190849304], [-1.0790027379989624, -0.24901992082595825, 0.16401004791259766,  -0.3046080768108368], [0.7953200936317444, -0.5956133604049683, 0.1772659718990326,  -0.5242027640342712], [0.7029814720153809, -0.01082561444491148, -0.1861252784729004,  -0.8590924739837646], [0.8409127593040466, 0.3763892948627472, 0.3767819106578827,  0.5689406394958496], [0.17461328208446503, -0.31962329149246216, -0.4001206159591675,  -0.4000999927520752]]> : tensor<8x4xf32>
  %w2 = arith.constant dense<[[0.6850361824035645, -0.7301905751228333, -0.29818475246429443,  -0.16062195599079132, 0.1123095154762268, 0.2876746952533722,  -0.6245484948158264, -0.8650067448616028], [-0.002207116223871708, 0.6067818999290466, 0.37852904200553894,  0.1078253909945488, -0.1585778146982193, 0.1466168463230133,  -0.1216675415635109, 0.4086032807826996], [-0.39722368121147156, 0.06711997091770172, -0.055390067398548126,  0.27167969942092896, 0.11231926083564758, 1.275017261505127,  0.7493273615837097, 0.7483685612678528], [-1.0197519063949585, -0.17015831172466278, -0.3043053150177002,  0.2663607895374298, -1.1395132541656494, 0.5872493386268616,  0.5334916710853577, -0.6510354280471802]]> : tensor<4x8xf32>
  %dy = arith.constant dense<[[[-0.978548526763916, -0.8011720180511475, 0.04329590126872063,   0.6409710645675659],  [2.0478861331939697, -0.19744543731212616, 0.7675025463104248,   0.1554178148508072],  [1.7599263191223145, 0.7421578764915466, 1.368550419807434,   -1.077675223350525],  [-0.19224071502685547, -0.813772439956665, 1.5049474239349365,   0.6576399207115173],  [-0.30514442920684814, -0.4524678885936737, 0.4846648871898651,   -0.7014955282211304],  [-0.9305889010429382, 0.48127448558807373, 2.46313214302063,   -0.24613355100154877],  [-0.5558657646179199, -1.171156883239746, -1.3350110054016113,   0.5249832272529602]], [[0.850803017616272, 0.00917472131550312, 0.3325759768486023,   0.11591657996177673],  [0.13865484297275543, -1.5261590480804443, -0.4581182599067688,   0.11147930473089218],  [-0.783166766166687, -0.4764297306537628, -0.8191201686859131,   -0.33349665999412537],  [0.853108286857605, -0.4065803587436676, -0.15387068688869476,   0.8137183785438538],  [0.6447702050209045, 1.6952075958251953, -2.090485095977783,   0.8568589687347412],  [-0.4822840988636017, 0.13469181954860687, 0.8377193808555603,   1.0832531452178955],  [1.0393507480621338, 0.15510669350624084, 1.609662652015686,   -0.2829742133617401]]]> : tensor<2x7x4xf32>
  %y1 = call @m1(%x, %w1, %w2) : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<2x7x4xf32>
  %dx1, %g11, %g21 = call @m1.backward(%x, %w1, %w2, %dy) : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x7x4xf32>) -> (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
  %y2 = call @m2(%x, %w1, %w2) : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<2x7x4xf32>
  %dx2, %g12, %g22 = call @m2.backward(%x, %w1, %w2, %dy) : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x7x4xf32>) -> (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
  %fy2 = call @close3(%y2, %y1) : (tensor<2x7x4xf32>, tensor<2x7x4xf32>) -> f32
  %fx2 = call @close3(%dx2, %dx1) : (tensor<2x7x4xf32>, tensor<2x7x4xf32>) -> f32
  %fa2 = call @close2(%g12, %g11) : (tensor<8x4xf32>, tensor<8x4xf32>) -> f32
  %fb2 = call @close2t(%g22, %g21) : (tensor<4x8xf32>, tensor<4x8xf32>) -> f32
  %t2 = tensor.from_elements %fy2, %fx2, %fa2, %fb2 : tensor<4xf32>
  %m2 = bufferization.to_buffer %t2 : tensor<4xf32> to memref<4xf32>
  %u2 = memref.cast %m2 : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  %y3 = call @m3(%x, %w1, %w2) : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<2x7x4xf32>
  %dx3, %g13, %g23 = call @m3.backward(%x, %w1, %w2, %dy) : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x7x4xf32>) -> (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
  %fy3 = call @close3(%y3, %y1) : (tensor<2x7x4xf32>, tensor<2x7x4xf32>) -> f32
  %fx3 = call @close3(%dx3, %dx1) : (tensor<2x7x4xf32>, tensor<2x7x4xf32>) -> f32
  %fa3 = call @close2(%g13, %g11) : (tensor<8x4xf32>, tensor<8x4xf32>) -> f32
  %fb3 = call @close2t(%g23, %g21) : (tensor<4x8xf32>, tensor<4x8xf32>) -> f32
  %t3 = tensor.from_elements %fy3, %fx3, %fa3, %fb3 : tensor<4xf32>
  %m3 = bufferization.to_buffer %t3 : tensor<4xf32> to memref<4xf32>
  %u3 = memref.cast %m3 : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u3) : (memref<*xf32>) -> ()
  %y8 = call @m8(%x, %w1, %w2) : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<2x7x4xf32>
  %dx8, %g18, %g28 = call @m8.backward(%x, %w1, %w2, %dy) : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x7x4xf32>) -> (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
  %fy8 = call @close3(%y8, %y1) : (tensor<2x7x4xf32>, tensor<2x7x4xf32>) -> f32
  %fx8 = call @close3(%dx8, %dx1) : (tensor<2x7x4xf32>, tensor<2x7x4xf32>) -> f32
  %fa8 = call @close2(%g18, %g11) : (tensor<8x4xf32>, tensor<8x4xf32>) -> f32
  %fb8 = call @close2t(%g28, %g21) : (tensor<4x8xf32>, tensor<4x8xf32>) -> f32
  %t8 = tensor.from_elements %fy8, %fx8, %fa8, %fb8 : tensor<4xf32>
  %m8 = bufferization.to_buffer %t8 : tensor<4xf32> to memref<4xf32>
  %u8 = memref.cast %m8 : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u8) : (memref<*xf32>) -> ()
  %y16 = call @m16(%x, %w1, %w2) : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<2x7x4xf32>
  %dx16, %g116, %g216 = call @m16.backward(%x, %w1, %w2, %dy) : (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x7x4xf32>) -> (tensor<2x7x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
  %fy16 = call @close3(%y16, %y1) : (tensor<2x7x4xf32>, tensor<2x7x4xf32>) -> f32
  %fx16 = call @close3(%dx16, %dx1) : (tensor<2x7x4xf32>, tensor<2x7x4xf32>) -> f32
  %fa16 = call @close2(%g116, %g11) : (tensor<8x4xf32>, tensor<8x4xf32>) -> f32
  %fb16 = call @close2t(%g216, %g21) : (tensor<4x8xf32>, tensor<4x8xf32>) -> f32
  %t16 = tensor.from_elements %fy16, %fx16, %fa16, %fb16 : tensor<4xf32>
  %m16 = bufferization.to_buffer %t16 : tensor<4xf32> to memref<4xf32>
  %u16 = memref.cast %m16 : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u16) : (memref<*xf32>) -> ()
  // Sanity: the gradients are not all zero.
  %gz = call @close2(%g11, %g11) : (tensor<8x4xf32>, tensor<8x4xf32>) -> f32
  return
}

// CHECK: sizes = [4]
// CHECK-NEXT: [1,  1,  1,  1]
// CHECK: sizes = [4]
// CHECK-NEXT: [1,  1,  1,  1]
// CHECK: sizes = [4]
// CHECK-NEXT: [1,  1,  1,  1]
// CHECK: sizes = [4]
// CHECK-NEXT: [1,  1,  1,  1]
