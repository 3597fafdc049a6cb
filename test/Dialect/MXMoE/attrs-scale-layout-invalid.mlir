// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Parse and verifier errors of #mxmoe.scale_layout (MXMoEAttrs.cpp).

// expected-error @+1 {{unknown scale layout 'col_major'; expected row_major, blocked_128x4 or compact}}
func.func @unknown_kind() attributes {l = #mxmoe.scale_layout<col_major>} {
  return
}

// -----

// The layout names are exact: the atom is 128x4, not 4x128.
// expected-error @+1 {{unknown scale layout 'blocked_4x128'; expected row_major, blocked_128x4 or compact}}
func.func @unknown_kind_transposed() attributes {l = #mxmoe.scale_layout<blocked_4x128>} {
  return
}

// -----

// expected-error @+1 {{unknown scale layout modifier 'per_m_group'; expected per_k_group or tile = [r, c]}}
func.func @unknown_modifier() attributes {l = #mxmoe.scale_layout<blocked_128x4, per_m_group>} {
  return
}

// -----

// ScaleLayoutAttr::verify.
// expected-error @+1 {{per_k_group applies only to the blocked_128x4 and compact scale layouts}}
func.func @per_k_group_row_major() attributes {l = #mxmoe.scale_layout<row_major, per_k_group>} {
  return
}

// -----

// The verifier also runs when the attribute is a tensor encoding.
// expected-error @+1 {{per_k_group applies only to the blocked_128x4 and compact scale layouts}}
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

// Each modifier at most once.
// expected-error @+1 {{scale layout modifier 'per_k_group' given twice}}
func.func @repeated_modifier() attributes {l = #mxmoe.scale_layout<blocked_128x4, per_k_group, per_k_group>} {
  return
}

// -----

// The modifier is separated by a comma.
// expected-error @+1 {{expected '>'}}
func.func @missing_comma() attributes {l = #mxmoe.scale_layout<blocked_128x4 per_k_group>} {
  return
}

// -----

// expected-error @+1 {{the compact scale layout needs tile = [r, c] (one E8M0 scale per r x c tile of the data)}}
func.func @compact_without_tile() attributes {l = #mxmoe.scale_layout<compact>} {
  return
}

// -----

// expected-error @+1 {{tile = [r, c] needs r >= 1 rows and c a multiple of 32 along the contraction axis (one E8M0 scale per r x c tile of the data), got [1, 100]}}
func.func @compact_tile_not_32() attributes {l = #mxmoe.scale_layout<compact, tile = [1, 100]>} {
  return
}

// -----

// expected-error @+1 {{tile = [r, c] needs r >= 1 rows and c a multiple of 32 along the contraction axis (one E8M0 scale per r x c tile of the data), got [1, 128, 1]}}
func.func @compact_tile_rank() attributes {l = #mxmoe.scale_layout<compact, tile = [1, 128, 1]>} {
  return
}

// -----

// expected-error @+1 {{a per_k_group layout with a tile (windows along a jagged token axis) needs tile rows 1, got [128, 128]}}
func.func @compact_per_k_group_rows() attributes {l = #mxmoe.scale_layout<compact, tile = [128, 128], per_k_group>} {
  return
}

// -----

// A tile on a blocked layout follows the same rules as on the compact one.
// expected-error @+1 {{tile = [r, c] needs r >= 1 rows and c a multiple of 32 along the contraction axis (one E8M0 scale per r x c tile of the data), got [1, 48]}}
func.func @tile_on_blocked_not_32() attributes {l = #mxmoe.scale_layout<blocked_128x4, tile = [1, 48]>} {
  return
}

// -----

// expected-error @+1 {{a per_k_group layout with a tile (windows along a jagged token axis) needs tile rows 1, got [128, 128]}}
func.func @blocked_per_k_group_rows() attributes {l = #mxmoe.scale_layout<blocked_128x4, tile = [128, 128], per_k_group>} {
  return
}
