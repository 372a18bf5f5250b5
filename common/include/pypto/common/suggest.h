// SPDX-License-Identifier: Apache-2.0
// "Did you mean" for every user-facing name (policies, config keys, commands, chips).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace pypto::common {

// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent
// transpositions ("wyas" -> "ways") each count one edit.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate closest to `word`, if it is close enough to be a plausible typo: one edit
// for words of up to four letters, up to a third of the word beyond that.
std::optional<std::string> closest_match(const std::string& word,
                                         const std::vector<std::string>& candidates);

}  // namespace pypto::common
