// SPDX-License-Identifier: Apache-2.0
// Private to config_loader.cpp: the chip config keys of the vector ops' fitted rows (PyPTO's
// per-op fit of board-measured times; cost_model.cpp names the ops a row times).
#pragma once

#include "pypto/model/chip_config.h"

namespace pypto::model::detail {

struct VecFitRow {
  const char* fixed_key;
  const char* rate_key;
  const char* fixed_doc;
  const char* rate_doc;
  double ChipConfig::Cost::*fixed;
  double ChipConfig::Cost::*rate;
};

inline constexpr VecFitRow kVecFitRows[] = {
    {"vec_add_fixed_ns", "vec_add_ps_per_byte",
     "vector op time per 2-D slice of its tile: add, maximum, minimum, "
     "compares, where, clip",
     "vector op time per byte of its tile: add, maximum, minimum, "
     "compares, where, clip",
     &ChipConfig::Cost::vec_add_fixed_ns, &ChipConfig::Cost::vec_add_ps_per_byte},
    {"vec_sub_fixed_ns", "vec_sub_ps_per_byte", "vector op time per 2-D slice of its tile: sub",
     "vector op time per byte of its tile: sub", &ChipConfig::Cost::vec_sub_fixed_ns,
     &ChipConfig::Cost::vec_sub_ps_per_byte},
    {"vec_mul_fixed_ns", "vec_mul_ps_per_byte", "vector op time per 2-D slice of its tile: mul",
     "vector op time per byte of its tile: mul", &ChipConfig::Cost::vec_mul_fixed_ns,
     &ChipConfig::Cost::vec_mul_ps_per_byte},
    {"vec_div_fixed_ns", "vec_div_ps_per_byte", "vector op time per 2-D slice of its tile: div",
     "vector op time per byte of its tile: div", &ChipConfig::Cost::vec_div_fixed_ns,
     &ChipConfig::Cost::vec_div_ps_per_byte},
    {"vec_adds_fixed_ns", "vec_adds_ps_per_byte",
     "vector op time per 2-D slice of its tile: a tile and a scalar: adds, "
     "subs",
     "vector op time per byte of its tile: a tile and a scalar: adds, "
     "subs",
     &ChipConfig::Cost::vec_adds_fixed_ns, &ChipConfig::Cost::vec_adds_ps_per_byte},
    {"vec_muls_fixed_ns", "vec_muls_ps_per_byte",
     "vector op time per 2-D slice of its tile: muls, divs, neg, abs, relu",
     "vector op time per byte of its tile: muls, divs, neg, abs, relu",
     &ChipConfig::Cost::vec_muls_fixed_ns, &ChipConfig::Cost::vec_muls_ps_per_byte},
    {"vec_sqrt_fixed_ns", "vec_sqrt_ps_per_byte",
     "vector op time per 2-D slice of its tile: sqrt, rsqrt",
     "vector op time per byte of its tile: sqrt, rsqrt", &ChipConfig::Cost::vec_sqrt_fixed_ns,
     &ChipConfig::Cost::vec_sqrt_ps_per_byte},
    {"vec_exp_fixed_ns", "vec_exp_ps_per_byte",
     "vector op time per 2-D slice of its tile: exp, log, pow, sigmoid, tanh",
     "vector op time per byte of its tile: exp, log, pow, sigmoid, tanh",
     &ChipConfig::Cost::vec_exp_fixed_ns, &ChipConfig::Cost::vec_exp_ps_per_byte},
    {"vec_reciprocal_fixed_ns", "vec_reciprocal_ps_per_byte",
     "vector op time per 2-D slice of its tile: reciprocal",
     "vector op time per byte of its tile: reciprocal", &ChipConfig::Cost::vec_reciprocal_fixed_ns,
     &ChipConfig::Cost::vec_reciprocal_ps_per_byte},
    {"vec_expand_fixed_ns", "vec_expand_ps_per_byte",
     "vector op time per 2-D slice of its tile: expand_clone, clone, full, "
     "fill",
     "vector op time per byte of its tile: expand_clone, clone, full, "
     "fill",
     &ChipConfig::Cost::vec_expand_fixed_ns, &ChipConfig::Cost::vec_expand_ps_per_byte},
    {"vec_cast_fixed_ns", "vec_cast_ps_per_byte",
     "vector op time per 2-D slice of its tile: cast, transpose",
     "vector op time per byte of its tile: cast, transpose", &ChipConfig::Cost::vec_cast_fixed_ns,
     &ChipConfig::Cost::vec_cast_ps_per_byte},
};

}  // namespace pypto::model::detail
