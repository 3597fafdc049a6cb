//===- Passes.td - mxmoe model-level passes ----------------*- tablegen -*-===//

#ifndef MXMOE_TRANSFORMS_PASSES
#define MXMOE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def MXMoEPrecisionPolicy : Pass<"mxmoe-precision-policy", "::mlir::ModuleOp"> {
  let summary = "Decide per linear / grouped GEMM whether it runs in MX "
                "precision or stays bf16";
  let description = [{
    Sets `precision` (and, for MX, a default `recipe`) on every
    `mxmoe.linear` and `mxmoe.scaled_grouped_matmul` that has none. Rules,
    in order (the first that applies decides):

    1. `user`: an op that already carries `precision` keeps it.
    2. `include`: with a non-empty include list, an op whose fqn matches no
       include pattern stays bf16 (TorchTitan's `fqns` include list).
    3. `exclude`: an op whose fqn matches an exclude pattern stays bf16.
       Default: `output`, `lm_head`, `router.gate`, `attention.wk`,
       `attention.wv` (the TorchAO/TorchTitan MXFP8 MoE recipe: the output
       projection is too sensitive, wk/wv too small to gain).
    4. `legality`: every GEMM of the op (forward over K, input gradient over
       N) must contract over a multiple of 32; otherwise bf16 (e.g. a router
       gate with 16 experts), never an error.
    5. `min-dim`: an op with K, N or a static token count below `min-dim`
       stays bf16 (quantization costs more than it saves on tiny GEMMs).
    6. `default`: the op runs in `precision` (mxfp8 by default).

    Patterns match dot-separated fqn components: a pattern matches when its
    components occur as a contiguous run of the fqn's components, `*`
    matching any one component (`router.gate` matches
    `layers.3.moe.router.gate`; `output` does not match `outputs`;
    `layers.*.attention.wk` works too).

    Every decision is reported as a remark on the op ("mxmoe-precision-policy:
    <fqn> -> <precision> (rule <rule>: <why>)"); `report=FILE` writes all
    decisions as JSON (fqn, op, shape, precision, rule, reason).
  }];
  let options = [
    ListOption<"exclude", "exclude", "std::string",
               "fqn patterns kept in bf16 (default: output, lm_head, "
               "router.gate, attention.wk, attention.wv; pass an empty "
               "string to clear)">,
    ListOption<"include", "include", "std::string",
               "if set, only fqns matching one of these patterns may use MX "
               "precision">,
    Option<"minDim", "min-dim", "int64_t", /*default=*/"0",
           "ops with K, N or a static token count below this stay bf16 "
           "(0 disables the rule)">,
    Option<"precision", "precision", "std::string", /*default=*/"\"mxfp8\"",
           "precision assigned to the ops that pass every rule: mxfp8 or "
           "mxfp4">,
    Option<"rounding", "rounding", "std::string", /*default=*/"\"rceil\"",
           "scale rounding of the assigned recipe: floor, rceil, ceil, even">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "write the decisions as JSON to this file ('-' = stdout)">
  ];
}

#endif // MXMOE_TRANSFORMS_PASSES
