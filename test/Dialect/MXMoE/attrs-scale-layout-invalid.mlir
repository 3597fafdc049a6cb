// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Parse and verifier errors of #mxmoe.scale_layout (MXMoEAttrs.cpp).

// expected-error @+1 {{unknown scale layout 'col_major'; expected row_major or blocked_128x4}}
func.func @unknown_kind() attributes {l = #mxmoe.scale_layout<col_major>} {
  return
}

// -----

// The layout names are exact: the atom is 128x4, not 4x128.
// expected-error @+1 {{unknown scale layout 'blocked_4x128'; expected row_major or blocked_128x4}}
func.func @unknown_kind_transposed() attributes {l = #mxmoe.scale_layout<blocked_4x128>} {
  return
}

// -----

// expected-error @+1 {{unknown scale layout modifier 'per_m_group'; the only modifier is per_k_group}}
func.func @unknown_modifier() attributes {l = #mxmoe.scale_layout<blocked_128x4, per_m_group>} {
  return
}

// -----

// ScaleLayoutAttr::verify.
// expected-error @+1 {{per_k_group applies only to the blocked_128x4 scale layout}}
func.func @per_k_group_row_major() attributes {l = #mxmoe.scale_layout<row_major, per_k_group>} {
  return
}

// -----

// The verifier also runs when the attribute is a tensor encoding.
// expected-error @+1 {{per_k_group applies only to the blocked_128x4 scale layout}}
func.func @per_k_group_row_major_encoding(%s: tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<row_major, per_k_group>>) {
  return
}

// -----

// expected-error @+1 {{expected valid keyword}}
func.func @empty() attributes {l = #mxmoe.scale_layout<>} {
  return
}

// -----

// The kind is a bare keyword, not a string.
// expected-error @+1 {{expected valid keyword}}
func.func @string_kind() attributes {l = #mxmoe.scale_layout<"blocked_128x4">} {
  return
}

// -----

// expected-error @+1 {{expected valid keyword}}
func.func @trailing_comma() attributes {l = #mxmoe.scale_layout<blocked_128x4,>} {
  return
}

// -----

// At most one modifier.
// expected-error @+1 {{expected '>'}}
func.func @repeated_modifier() attributes {l = #mxmoe.scale_layout<blocked_128x4, per_k_group, per_k_group>} {
  return
}

// -----

// The modifier is separated by a comma.
// expected-error @+1 {{expected '>'}}
func.func @missing_comma() attributes {l = #mxmoe.scale_layout<blocked_128x4 per_k_group>} {
  return
}
