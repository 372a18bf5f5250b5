// SPDX-License-Identifier: Apache-2.0
#include "pypto/sim/memory/l2_cache.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "pypto/common/errors.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pypto::sim {

namespace {

// 64 M lines is 32 GiB of L2 at 512 B lines, far above any chip we model; the bound keeps a
// typo in l2.size_kib from turning into a multi-gigabyte allocation (or bad_alloc).
constexpr std::uint64_t kMaxLines = std::uint64_t{1} << 26;

// Largest compact tag: tags are 32 bits and 0 marks an empty way.
constexpr std::uint64_t kMaxCompactTag = 0xFFFFFFFFull;
constexpr std::uint64_t kNibbleOnes = 0x1111111111111111ull;
constexpr std::uint64_t kNibbleHighs = 0x8888888888888888ull;

// Pieces pay while an access covers many sets per piece; a piece costs about as much as
// ten to twenty per-set lookups (split, compare, scattered records). Judged per window.
constexpr std::uint64_t kWindowAccesses = 4096;
constexpr std::uint64_t kMinLinesPerPiece = 16;

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Bit w set where tags[w] == tag. A fixed trip count so the compiler unrolls it fully.
template <unsigned kSlots>
inline unsigned match_mask(const std::uint32_t* tags, std::uint32_t tag) {
#if defined(__SSE2__)
  static_assert(kSlots == 4 || kSlots == 8 || kSlots == 16, "compact sets hold 4, 8 or 16 ways");
  const __m128i key = _mm_set1_epi32(static_cast<int>(tag));
  const auto* v = reinterpret_cast<const __m128i*>(tags);
  const __m128i e0 = _mm_cmpeq_epi32(_mm_load_si128(v), key);
  if constexpr (kSlots == 4) {
    return static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(e0)));
  } else {
    // Each 32-bit all-ones/zero lane narrows to one byte; movemask then gives one bit a way.
    const __m128i e1 = _mm_cmpeq_epi32(_mm_load_si128(v + 1), key);
    const __m128i e01 = _mm_packs_epi32(e0, e1);
    if constexpr (kSlots == 8) {
      return static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(e01, _mm_setzero_si128())));
    } else {
      const __m128i e2 = _mm_cmpeq_epi32(_mm_load_si128(v + 2), key);
      const __m128i e3 = _mm_cmpeq_epi32(_mm_load_si128(v + 3), key);
      return static_cast<unsigned>(
          _mm_movemask_epi8(_mm_packs_epi16(e01, _mm_packs_epi32(e2, e3))));
    }
  }
#else
  unsigned m = 0;
  for (unsigned w = 0; w < kSlots; ++w) m |= static_cast<unsigned>(tags[w] == tag) << w;
  return m;
#endif
}

// Puts `tag` at rank 0 of a compact state's tags (16-byte aligned), moving ranks 0 .. rank-1
// down by one (the line at `rank` leaves). Most hits are in the first four ranks: one vector
// then, instead of a memmove call.
inline void shift_in(std::uint32_t* tags, std::uint32_t tag, unsigned rank) {
#if defined(__SSE2__)
  if (rank < 4) {
    auto* v = reinterpret_cast<__m128i*>(tags);
    const __m128i old = _mm_load_si128(v);
    const __m128i moved =
        _mm_or_si128(_mm_slli_si128(old, 4), _mm_cvtsi32_si128(static_cast<int>(tag)));
    const __m128i keep =
        _mm_cmpgt_epi32(_mm_set_epi32(3, 2, 1, 0), _mm_set1_epi32(static_cast<int>(rank)));
    _mm_store_si128(v, _mm_or_si128(_mm_and_si128(keep, old), _mm_andnot_si128(keep, moved)));
    return;
  }
#endif
  std::memmove(&tags[1], &tags[0], rank * sizeof(std::uint32_t));
  tags[0] = tag;
}

// Puts `tag` at rank 0 of a full compact state's kSlots tags (16-byte aligned), every rank
// moving down by one (the last leaves): GCC calls libc for a 60-byte memmove; here every
// vector is loaded before any is stored, and the last load overlaps the one before it so that
// no store passes the array's end.
template <unsigned kSlots>
inline void shift_in_full(std::uint32_t* tags, std::uint32_t tag) {
#if defined(__SSE2__)
  if constexpr (kSlots == 16) {
    auto* v = reinterpret_cast<__m128i*>(tags);
    const __m128i t0 = _mm_load_si128(v), t4 = _mm_load_si128(v + 1);
    const __m128i t8 = _mm_load_si128(v + 2);
    const __m128i t11 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + 11));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tags + 1), t0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tags + 5), t4);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tags + 9), t8);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tags + 12), t11);
    tags[0] = tag;
    return;
  } else if constexpr (kSlots == 8) {
    const __m128i t0 = _mm_load_si128(reinterpret_cast<const __m128i*>(tags));
    const __m128i t3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + 3));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tags + 1), t0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tags + 4), t3);
    tags[0] = tag;
    return;
  }
#endif
  std::memmove(&tags[1], &tags[0], (kSlots - 1) * sizeof(std::uint32_t));
  tags[0] = tag;
}

// Touches line `tag` of a compact state (tags by recency rank): it moves to rank 0 and the
// more recent ranks move down by one. On a miss the line at the last active rank is evicted
// (an empty way there is never dirty). Returns true on a miss; a dirty evicted line adds the
// piece's n sets to `writebacks`.
template <unsigned kSlots, bool kWrite, class Set>
inline bool touch(Set& s, std::uint32_t tag, unsigned ways, std::uint64_t n,
                  std::uint64_t& writebacks) {
  const unsigned hit = match_mask<kSlots>(s.tag, tag);
  const unsigned old = s.dirty;
  if (hit == 0) {
    // Every rank but the last moves down one (ranks at or above ways_ hold no dirty bit); a
    // set of every slot, as on every preset chip, has its constants in the code.
    if (ways == kSlots) {
      writebacks += (old >> (kSlots - 1)) * n;
      shift_in_full<kSlots>(s.tag, tag);
      s.dirty =
          static_cast<std::uint16_t>(((old << 1) & ((1u << kSlots) - 1)) | (kWrite ? 1u : 0u));
    } else {
      const unsigned last = ways - 1;
      writebacks += ((old >> last) & 1u) * n;
      shift_in(s.tag, tag, last);
      s.dirty = static_cast<std::uint16_t>(((old & ((1u << last) - 1)) << 1) | (kWrite ? 1u : 0u));
    }
    return true;
  }
  const unsigned rank = static_cast<unsigned>(__builtin_ctz(hit));
  const unsigned was_dirty = (old >> rank) & 1u;
  const unsigned now_dirty = kWrite ? 1u : was_dirty;
  shift_in(s.tag, tag, rank);
  const unsigned newer = (1u << rank) - 1;  // ranks above the touched one
  const unsigned through = (newer << 1) | 1u;
  s.dirty = static_cast<std::uint16_t>((old & ~through) | ((old & newer) << 1) | now_dirty);
  return false;
}

// Moves way w to rank 0 of an order word, shifting the ways that were more recent down by
// one rank. Exactly one nibble holds w (the word is a permutation of 0..15), and the lowest
// zero nibble of order ^ (w * 0x111...) is found exactly by the borrow trick (borrows only
// produce false positives above a true zero).
inline std::uint64_t move_to_front(std::uint64_t order, unsigned w) {
  const std::uint64_t x = order ^ (w * kNibbleOnes);
  const std::uint64_t zero = (x - kNibbleOnes) & ~x & kNibbleHighs;
  const unsigned rank_bits = static_cast<unsigned>(__builtin_ctzll(zero)) - 3;  // 4 * rank
  const std::uint64_t newer = (std::uint64_t{1} << rank_bits) - 1;  // nibbles below the rank
  const std::uint64_t through = (newer << 4) | 0xF;  // nibbles up to and including the rank
  return (order & ~through) | ((order & newer) << 4) | w;
}

// Touches line `tag` of a per-set record, making it the most recent (and dirty for a write);
// true when it was not resident and took a way (a dirty victim adds one to `writebacks`).
template <unsigned kSlots, bool kWrite, class Set>
[[gnu::always_inline]] inline bool touch_per_set(Set& set, std::uint32_t tag, unsigned victim_shift,
                                                 std::uint64_t active, std::uint64_t& writebacks) {
  const unsigned hit = match_mask<kSlots>(set.tag, tag);
  if (__builtin_expect(hit != 0, 1)) {
    const unsigned way = static_cast<unsigned>(__builtin_ctz(hit));
    // Most hits are on the set's most recent line (a consumer reading what its producer
    // just wrote); skip the reorder then.
    if ((set.order & 0xF) != way) set.order = move_to_front(set.order, way);
    if (kWrite) set.dirty = static_cast<std::uint16_t>(set.dirty | (1u << way));
    return false;
  }
  // The victim holds the last active rank; every other active rank moves down by one.
  const std::uint64_t order = set.order;
  const unsigned way = static_cast<unsigned>(order >> victim_shift) & 0xF;
  set.order = (order & ~active) | ((order << 4) & active) | way;
  const unsigned bit = 1u << way;
  writebacks += (set.dirty & bit) != 0;  // empty ways are never dirty
  set.dirty = static_cast<std::uint16_t>(kWrite ? set.dirty | bit : set.dirty & ~bit);
  set.tag[way] = tag;
  return true;
}

// Counts a partial first or last line of an access (or a whole one): its touched bytes on a
// hit and the whole line on a fill; a write that covers the line allocates without a fill.
template <bool kWrite>
[[gnu::always_inline]] inline void account_end_line(L2Cache::Counters& c, L2Cache::Result& r,
                                                    bool allocated, std::uint64_t touched,
                                                    std::uint64_t line_bytes) {
  if (!allocated) {
    r.hit_bytes += touched;
    ++(kWrite ? c.write_hits : c.read_hits);
  } else if (!kWrite) {
    r.miss_bytes += line_bytes;
    ++c.read_misses;
  } else {
    ++c.write_allocations;
    if (touched == line_bytes) {
      r.alloc_bytes += touched;
    } else {
      r.miss_bytes += line_bytes;
      ++c.write_fills;
    }
  }
}

// Adds row k's Result to a run's total (and its hit bytes to row_hits, when given).
[[gnu::always_inline]] inline void add_row(L2Cache::RowsResult& t, const L2Cache::Result& r,
                                           std::uint64_t bytes, std::uint64_t* row_hits,
                                           std::uint64_t k) {
  t.sum.hit_bytes += r.hit_bytes;
  t.sum.miss_bytes += r.miss_bytes;
  t.sum.alloc_bytes += r.alloc_bytes;
  t.sum.writeback_bytes += r.writeback_bytes;
  t.whole_hit_rows += r.hit_bytes == bytes && bytes != 0;
  t.part_hit_rows += r.hit_bytes != 0 && r.hit_bytes != bytes;
  if (row_hits != nullptr) row_hits[k] = r.hit_bytes;
}

}  // namespace

L2Cache::L2Cache(std::uint64_t size_bytes, std::uint32_t line_bytes, std::uint32_t ways) {
  if (!is_power_of_two(line_bytes)) {
    throw ConfigError("l2.line_bytes = " + std::to_string(line_bytes) +
                      " is not valid; expected a power of two (e.g. 512)");
  }
  if (ways == 0) throw ConfigError("l2.ways = 0 is not valid; expected at least 1");
  const std::uint64_t set_bytes = std::uint64_t{line_bytes} * ways;
  if (size_bytes == 0 || size_bytes % set_bytes != 0) {
    throw ConfigError("l2.size = " + std::to_string(size_bytes) +
                      " bytes is not valid; expected a positive multiple of l2.line_bytes * "
                      "l2.ways = " +
                      std::to_string(line_bytes) + " * " + std::to_string(ways) + " = " +
                      std::to_string(set_bytes) + " bytes");
  }
  const std::uint64_t lines = size_bytes / line_bytes;
  if (lines > kMaxLines) {
    throw ConfigError("l2.size = " + std::to_string(size_bytes) + " bytes with l2.line_bytes = " +
                      std::to_string(line_bytes) + " gives " + std::to_string(lines) +
                      " lines; expected at most " + std::to_string(kMaxLines));
  }
  line_bytes_ = line_bytes;
  while ((std::uint64_t{1} << line_shift_) < line_bytes) ++line_shift_;
  ways_ = ways;
  sets_ = size_bytes / set_bytes;

  // A direct-mapped cache gains nothing from the compact record (and would pay 32 B a line).
  compact_slots_ = ways < 2 ? 0 : ways <= 4 ? 4 : ways <= 8 ? 8 : ways <= 16 ? 16 : 0;
  if (compact_slots_ == 0) {
    tag_.assign(lines, 0);
    stamp_.assign(lines, 0);
    dirty_.assign(lines, 0);
    fill_.assign(sets_, 0);
    return;
  }
  // sets_ <= 2^26, so the product fits in 64 bits.
  compact_line_limit_ = kMaxCompactTag * sets_;
  lru_active_ = ways == 16 ? ~std::uint64_t{0} : (std::uint64_t{1} << (4 * ways)) - 1;
  // One piece of empty sets, in slot 0 of the pool.
  if (compact_slots_ == 4) compact4_.resize(1);
  if (compact_slots_ == 8) compact8_.resize(1);
  if (compact_slots_ == 16) compact16_.resize(1);
  slot_.assign(sets_, 0);
  next_.assign(sets_, 0);
  next_[0] = static_cast<std::uint32_t>(sets_);
  starts_.assign((sets_ + 63) / 64, 0);
  summary_.assign((starts_.size() + 63) / 64, 0);
  set_start(0);
}

template <unsigned kSlots>
bool L2Cache::CompactSet<kSlots>::operator==(const CompactSet& o) const {
#if defined(__SSE2__)
  // A piece is compared with its neighbour after each change: 16 bytes a step, no branch
  // per word as the inlined memcmp has (the records are 16-byte aligned).
  const auto* a = reinterpret_cast<const __m128i*>(tag);
  const auto* b = reinterpret_cast<const __m128i*>(o.tag);
  __m128i eq = _mm_cmpeq_epi32(_mm_load_si128(a), _mm_load_si128(b));
  for (unsigned i = 1; i < kSlots / 4; ++i) {
    eq = _mm_and_si128(eq, _mm_cmpeq_epi32(_mm_load_si128(a + i), _mm_load_si128(b + i)));
  }
  return dirty == o.dirty && _mm_movemask_epi8(eq) == 0xFFFF;
#else
  return dirty == o.dirty && std::memcmp(tag, o.tag, sizeof tag) == 0;
#endif
}

// The piece bookkeeping runs a few times per access; inlined into access_compact.
[[gnu::always_inline]] inline void L2Cache::set_start(std::uint64_t s) {
  std::uint64_t& w = starts_[s >> 6];
  if (w == 0) summary_[s >> 12] |= std::uint64_t{1} << ((s >> 6) & 63);
  w |= std::uint64_t{1} << (s & 63);
}

[[gnu::always_inline]] inline void L2Cache::clear_start(std::uint64_t s) {
  std::uint64_t& w = starts_[s >> 6];
  w &= ~(std::uint64_t{1} << (s & 63));
  if (w == 0) summary_[s >> 12] &= ~(std::uint64_t{1} << ((s >> 6) & 63));
}

[[gnu::always_inline]] inline std::uint64_t L2Cache::start_at_or_before(std::uint64_t s) const {
  std::uint64_t wi = s >> 6;
  // Bits 0 .. s & 63 (at 63 the shift gives 0 and the subtraction all ones).
  const std::uint64_t w = starts_[wi] & ((std::uint64_t{2} << (s & 63)) - 1);
  if (w != 0) return (wi << 6) + 63 - static_cast<std::uint64_t>(__builtin_clzll(w));
  std::uint64_t si = wi >> 6;
  std::uint64_t sm = summary_[si] & ((std::uint64_t{1} << (wi & 63)) - 1);
  while (sm == 0) sm = summary_[--si];  // set 0 always starts a piece
  wi = (si << 6) + 63 - static_cast<std::uint64_t>(__builtin_clzll(sm));
  return (wi << 6) + 63 - static_cast<std::uint64_t>(__builtin_clzll(starts_[wi]));
}

[[gnu::always_inline]] inline std::uint64_t L2Cache::start_after(std::uint64_t s) const {
  const std::uint64_t t = s + 1;
  if (t >= sets_) return sets_;
  std::uint64_t wi = t >> 6;
  const std::uint64_t w = starts_[wi] & ~((std::uint64_t{1} << (t & 63)) - 1);
  if (w != 0) return (wi << 6) + static_cast<std::uint64_t>(__builtin_ctzll(w));
  std::uint64_t si = wi >> 6;
  // Words after wi (at 63 the mask is empty).
  std::uint64_t sm = summary_[si] & ~((std::uint64_t{2} << (wi & 63)) - 1);
  while (sm == 0) {
    if (++si >= summary_.size()) return sets_;
    sm = summary_[si];
  }
  wi = (si << 6) + static_cast<std::uint64_t>(__builtin_ctzll(sm));
  return (wi << 6) + static_cast<std::uint64_t>(__builtin_ctzll(starts_[wi]));
}

// Not inlined into access_rows()'s rare row-at-a-time path: GCC would then split the zero-byte
// test from the body, a second call for every access the cores make.
[[gnu::noinline]] L2Cache::Result L2Cache::access(std::uint64_t addr, std::uint64_t bytes,
                                                  bool is_write) {
  if (bytes == 0) return Result{};
  NPU_CHECK(bytes - 1 <= ~std::uint64_t{0} - addr, "L2 access range wraps past 2^64");

  Lines l;
  const std::uint64_t last_byte = addr + (bytes - 1);
  l.first = addr >> line_shift_;
  l.last = last_byte >> line_shift_;
  const std::uint64_t mask = line_bytes_ - 1;
  // Bytes touched in the first and last line; every line in between is touched whole.
  l.head_bytes = l.first == l.last ? bytes : line_bytes_ - (addr & mask);
  l.tail_bytes = (last_byte & mask) + 1;
  l.set = l.first % sets_;
  l.tag = l.first / sets_ + 1;

  // Lines only grow within an access, so the last one has the largest tag.
  if (compact_slots_ != 0 && l.last >= compact_line_limit_) {
    if (compact_slots_ == 4)
      per_set_ ? per_set_to_generic(per_set4_) : convert_to_generic(compact4_);
    if (compact_slots_ == 8)
      per_set_ ? per_set_to_generic(per_set8_) : convert_to_generic(compact8_);
    if (compact_slots_ == 16) {
      per_set_ ? per_set_to_generic(per_set16_) : convert_to_generic(compact16_);
    }
  }
  switch (compact_slots_) {
    case 16: return access_2_16(compact16_, per_set16_, l, is_write);
    case 8: return access_2_16(compact8_, per_set8_, l, is_write);
    case 4: return access_2_16(compact4_, per_set4_, l, is_write);
    default: return access_generic(l, is_write);
  }
}

L2Cache::RowsResult L2Cache::access_rows(std::uint64_t addr, std::uint64_t bytes,
                                         std::uint64_t pitch, std::uint64_t count, bool is_write,
                                         std::uint64_t* row_hits) {
  // The shared path needs every row's lines to have compact tags and no row to wrap past
  // 2^64 (then no row throws or converts the layout); anything else goes a row at a time.
  std::uint64_t span = 0;  // the last row's offset from the first
  const bool plain = count > 1 && bytes != 0 && compact_slots_ != 0 &&
                     !__builtin_mul_overflow(pitch, count - 1, &span) &&
                     span <= ~std::uint64_t{0} - addr &&
                     bytes - 1 <= ~std::uint64_t{0} - (addr + span) &&
                     ((addr + span + (bytes - 1)) >> line_shift_) < compact_line_limit_;
  if (!plain) {
    RowsResult t;
    for (std::uint64_t k = 0; k < count; ++k) {
      add_row(t, access(addr + k * pitch, bytes, is_write), bytes, row_hits, k);
    }
    return t;
  }
  switch (compact_slots_) {
    case 16:
      return is_write
                 ? rows_2_16<16, true>(compact16_, per_set16_, addr, bytes, pitch, count, row_hits)
                 : rows_2_16<16, false>(compact16_, per_set16_, addr, bytes, pitch, count,
                                        row_hits);
    case 8:
      return is_write
                 ? rows_2_16<8, true>(compact8_, per_set8_, addr, bytes, pitch, count, row_hits)
                 : rows_2_16<8, false>(compact8_, per_set8_, addr, bytes, pitch, count, row_hits);
    default:
      return is_write
                 ? rows_2_16<4, true>(compact4_, per_set4_, addr, bytes, pitch, count, row_hits)
                 : rows_2_16<4, false>(compact4_, per_set4_, addr, bytes, pitch, count, row_hits);
  }
}

template <unsigned kSlots, bool kWrite>
L2Cache::RowsResult L2Cache::rows_2_16(std::vector<CompactSet<kSlots>>& pool,
                                       std::vector<PerSet<kSlots>>& per_set, std::uint64_t addr,
                                       std::uint64_t bytes, std::uint64_t pitch,
                                       std::uint64_t count, std::uint64_t* row_hits) {
  const std::uint64_t mask = line_bytes_ - 1;
  Lines l;
  l.first = addr >> line_shift_;
  l.set = l.first % sets_;
  l.tag = l.first / sets_ + 1;
  if (per_set_ && (addr & mask) + bytes <= line_bytes_ && (pitch & mask) == 0) {
    return one_line_rows<kSlots, kWrite>(per_set, l, bytes, pitch, count, row_hits);
  }
  RowsResult t;
  for (std::uint64_t k = 0;;) {
    // Each row as access() takes it; its first line's set and tag follow from the row before
    // by the lines between them (a division only for a step of a whole L2 or more).
    const std::uint64_t last_byte = addr + (bytes - 1);
    l.last = last_byte >> line_shift_;
    l.head_bytes = l.first == l.last ? bytes : line_bytes_ - (addr & mask);
    l.tail_bytes = (last_byte & mask) + 1;
    if (per_set_ && l.first == l.last) {
      // A row inside one line (a tile's row of a wide matrix): access_per_set()'s one-line
      // case, in place.
      Result r;
      std::uint64_t writebacks = 0;
      const bool miss =
          touch_per_set<kSlots, kWrite>(per_set[l.set], static_cast<std::uint32_t>(l.tag),
                                        4 * (ways_ - 1), lru_active_, writebacks);
      account_end_line<kWrite>(counters_, r, miss, bytes, line_bytes_);
      r.writeback_bytes = writebacks * line_bytes_;
      counters_.writebacks += writebacks;
      add_row(t, r, bytes, row_hits, k);
    } else {
      add_row(t, access_2_16(pool, per_set, l, kWrite), bytes, row_hits, k);
    }
    if (++k == count) return t;
    addr += pitch;
    const std::uint64_t first = addr >> line_shift_;
    const std::uint64_t step = first - l.first;
    l.first = first;
    if (step < sets_) {
      l.set += step;
      if (l.set >= sets_) {
        l.set -= sets_;
        ++l.tag;
      }
    } else {
      l.set = first % sets_;
      l.tag = first / sets_ + 1;
    }
  }
}

template <unsigned kSlots, bool kWrite>
L2Cache::RowsResult L2Cache::one_line_rows(std::vector<PerSet<kSlots>>& per_set, const Lines& l,
                                           std::uint64_t bytes, std::uint64_t pitch,
                                           std::uint64_t count, std::uint64_t* row_hits) {
  // Row k's line is the first row's plus k steps: its set and tag advance by the step's
  // remainder and quotient in sets, carrying one into the tag where the set wraps.
  // Members copied to locals: the stores to records and row_hits could alias them.
  const std::uint64_t n_sets = sets_;
  const std::uint64_t step = pitch >> line_shift_;
  const std::uint64_t set_step = step % n_sets;
  const auto tag_step = static_cast<std::uint32_t>(step / n_sets);
  const unsigned victim_shift = 4 * (ways_ - 1);
  const std::uint64_t active = lru_active_;
  PerSet<kSlots>* const sets = per_set.data();
  std::uint64_t misses = 0, writebacks = 0;
  const auto walk = [&](auto with_hits) {
    std::uint64_t set = l.set;
    auto tag = static_cast<std::uint32_t>(l.tag);
    for (std::uint64_t k = 0;;) {
      const bool miss =
          touch_per_set<kSlots, kWrite>(sets[set], tag, victim_shift, active, writebacks);
      misses += miss;
      if constexpr (decltype(with_hits)::value) row_hits[k] = miss ? 0 : bytes;
      if (++k == count) return;
      set += set_step;
      tag += tag_step;
      if (set >= n_sets) {
        set -= n_sets;
        ++tag;
      }
    }
  };
  row_hits != nullptr ? walk(std::true_type{}) : walk(std::false_type{});
  // What account_end_line() gives each row, summed: a hit touches the row's bytes, a miss
  // fills the line (a read, or a write of part of it) or allocates it (a write of all of it).
  const std::uint64_t hits = count - misses;
  const std::uint64_t line_bytes = line_bytes_;
  RowsResult t;
  t.sum.hit_bytes = hits * bytes;
  t.whole_hit_rows = hits;
  t.sum.writeback_bytes = writebacks * line_bytes;
  Counters& c = counters_;
  c.writebacks += writebacks;
  if (!kWrite) {
    t.sum.miss_bytes = misses * line_bytes;
    c.read_hits += hits;
    c.read_misses += misses;
  } else {
    c.write_hits += hits;
    c.write_allocations += misses;
    if (bytes == line_bytes) {
      t.sum.alloc_bytes = misses * line_bytes;
    } else {
      t.sum.miss_bytes = misses * line_bytes;
      c.write_fills += misses;
    }
  }
  return t;
}

template <unsigned kSlots>
[[gnu::always_inline]] inline L2Cache::Result L2Cache::access_2_16(
    std::vector<CompactSet<kSlots>>& pool, std::vector<PerSet<kSlots>>& per_set, const Lines& l,
    bool is_write) {
  if (per_set_) {
    return is_write ? access_per_set<kSlots, true>(per_set, l)
                    : access_per_set<kSlots, false>(per_set, l);
  }
  Result r;
  const std::uint64_t first_piece = start_at_or_before(l.set);  // found once for both walks
  if (is_write) {
    r = access_compact<kSlots, true>(pool, l, first_piece);
  } else if (!read_of_recent(pool, l, first_piece, r)) {
    r = access_compact<kSlots, false>(pool, l, first_piece);
  }
  window_lines_ += l.last - l.first + 1;
  if (++window_accesses_ == kWindowAccesses) {
    if (window_lines_ < kMinLinesPerPiece * window_pieces_) pieces_to_per_set(pool, per_set);
    window_accesses_ = window_lines_ = window_pieces_ = 0;
  }
  return r;
}

template <unsigned kSlots>
[[gnu::always_inline]] inline bool L2Cache::read_of_recent(
    const std::vector<CompactSet<kSlots>>& pool, const Lines& l, std::uint64_t first_piece,
    Result& r) {
  const std::uint64_t n = l.last - l.first + 1;
  const std::uint64_t b = l.set + n;
  if (b > sets_) return false;  // wraps past the last set: access_compact's runs
  const auto tag = static_cast<std::uint32_t>(l.tag);
  std::uint64_t pieces = 0;
  for (std::uint64_t p = first_piece; p < b; p = next_[p]) {
    if (pool[slot_[p]].tag[0] != tag) return false;
    ++pieces;
  }
  // What access_compact() gives when every line hits at rank 0: the touched bytes.
  window_pieces_ += pieces;
  const std::uint64_t line_bytes = line_bytes_;
  const std::uint64_t tail_short = l.last != l.first ? line_bytes - l.tail_bytes : 0;
  r = Result{};
  r.hit_bytes = n * line_bytes - (line_bytes - l.head_bytes) - tail_short;
  counters_.read_hits += n;
  return true;
}

template <unsigned kSlots>
[[gnu::always_inline]] inline void L2Cache::split(std::vector<CompactSet<kSlots>>& pool,
                                                  std::uint64_t piece, std::uint64_t s) {
  const std::uint32_t from = slot_[piece];
  std::uint32_t to;
  if (!free_.empty()) {
    to = free_.back();
    free_.pop_back();
    pool[to] = pool[from];
  } else {
    to = static_cast<std::uint32_t>(pool.size());
    const CompactSet<kSlots> copy = pool[from];  // push_back may reallocate under pool[from]
    pool.push_back(copy);
  }
  slot_[s] = to;
  next_[s] = next_[piece];
  next_[piece] = static_cast<std::uint32_t>(s);
  set_start(s);
}

void L2Cache::merge(std::uint64_t before, std::uint64_t s) {
  free_.push_back(slot_[s]);
  next_[before] = next_[s];
  clear_start(s);
}

template <unsigned kSlots, bool kWrite>
[[gnu::always_inline]] inline L2Cache::Result L2Cache::access_compact(
    std::vector<CompactSet<kSlots>>& sets, const Lines& l, std::uint64_t first_piece) {
  const unsigned ways = ways_;
  const std::uint64_t line_bytes = line_bytes_;
  const std::uint64_t n_sets = sets_;  // a local: the piece starts' 64-bit words may alias sets_
  std::uint64_t hits = 0, allocated = 0, writebacks = 0;
  bool first_allocated = false, last_allocated = false;
  std::uint64_t pieces = 0;  // counted here: a member's count would be reloaded each piece

  // One division per call: consecutive lines map to consecutive sets, so walk the sets in
  // runs that end where the set index wraps (the tag grows by one there).
  std::uint64_t set = l.set;
  auto tag = static_cast<std::uint32_t>(l.tag);
  for (std::uint64_t left = l.last - l.first + 1; left != 0;) {
    const std::uint64_t a = set;
    const std::uint64_t b = set + std::min(left, n_sets - set);  // this run: sets [a, b)
    // The pieces that overlap [a, b), left to right. About half the mix trace's reads are of
    // lines that are each their set's most recent (a consumer reading what its producer just
    // wrote): touching such a piece changes nothing, so it is neither split nor merged. A
    // piece that changes is first cut to the part inside [a, b).
    std::uint64_t p = first_piece;
    std::uint64_t prev = n_sets;  // the piece left of p once p is cut at a or follows one; none
    bool prev_changed = false;    // prev was touched and changed in this run
    while (p < b) {
      const std::uint64_t q = end_within(p, b);  // p's end, or b if p reaches it
      ++pieces;
      const std::uint64_t lo_set = std::max(p, a);
      const CompactSet<kSlots>& cur = sets[slot_[p]];
      if (cur.tag[0] == tag && (!kWrite || (cur.dirty & 1u) != 0)) {
        hits += q - lo_set;
        last_allocated = false;
        // A piece changed before it may now equal this one: keep pieces maximal.
        if (prev_changed && sets[slot_[prev]] == cur) {
          merge(prev, p);
        } else {
          prev = p;
        }
        prev_changed = false;
        p = q;
        continue;
      }
      // A touch that changes a state never leaves it equal to what it was (the test above),
      // so a part cut off either side keeps a state the touched part no longer has.
      if (lo_set != p) {  // p starts left of a: cut there (the left part keeps its state)
        split(sets, p, lo_set);
        prev = n_sets;  // the left part: no merge to try
        p = lo_set;
      } else if (prev == n_sets && p > 0) {
        prev = start_at_or_before(p - 1);
      }
      const bool cut_right = next_[p] > b;
      if (cut_right) split(sets, p, b);              // p ends right of b
      CompactSet<kSlots>* const pool = sets.data();  // splits may have grown it
      CompactSet<kSlots>& s = pool[slot_[p]];
      const std::uint64_t n = q - p;
      const bool miss = touch<kSlots, kWrite>(s, tag, ways, n, writebacks);
      // The walk visits lines in order: the first piece holds the first line (no line counted
      // yet), the last piece visited the last line.
      if (pieces == 1) first_allocated = miss;
      last_allocated = miss;
      (miss ? allocated : hits) += n;
      // Keep pieces maximal: a piece that now equals its left neighbour joins it.
      if (prev != n_sets && pool[slot_[prev]] == s) {
        merge(prev, p);
      } else {
        prev = p;
      }
      prev_changed = !cut_right;
      p = q;
    }
    // The last piece changed and ends at b (not cut there): it may now equal the piece that
    // starts there.
    if (prev_changed && b < n_sets && sets[slot_[prev]] == sets[slot_[b]]) merge(prev, b);
    left -= b - a;
    set = b;
    if (set == n_sets) {
      set = 0;
      ++tag;
      first_piece = 0;  // set 0 always starts a piece
    }
  }
  window_pieces_ += pieces;

  // Every line was touched whole except possibly the first and the last. A partial line
  // counts its touched bytes on a hit and the whole line on a fill; a write that covers a
  // line allocates it without a fill.
  const bool two_ends = l.last != l.first;
  const std::uint64_t head_short = line_bytes - l.head_bytes;
  const std::uint64_t tail_short = two_ends ? line_bytes - l.tail_bytes : 0;
  Result r;
  r.hit_bytes =
      hits * line_bytes - (first_allocated ? 0 : head_short) - (last_allocated ? 0 : tail_short);
  r.writeback_bytes = writebacks * line_bytes;
  Counters& c = counters_;
  c.writebacks += writebacks;
  if (kWrite) {
    const std::uint64_t fills = static_cast<std::uint64_t>(first_allocated && head_short != 0) +
                                static_cast<std::uint64_t>(last_allocated && tail_short != 0);
    r.miss_bytes = fills * line_bytes;
    r.alloc_bytes = (allocated - fills) * line_bytes;
    c.write_hits += hits;
    c.write_allocations += allocated;
    c.write_fills += fills;
  } else {
    r.miss_bytes = allocated * line_bytes;
    c.read_hits += hits;
    c.read_misses += allocated;
  }
  return r;
}

template <unsigned kSlots, bool kWrite>
L2Cache::Result L2Cache::access_per_set(std::vector<PerSet<kSlots>>& sets, const Lines& l) {
  using Set = PerSet<kSlots>;
  const unsigned victim_shift = 4 * (ways_ - 1);
  const std::uint64_t active = lru_active_;
  std::uint64_t writebacks = 0;

  auto touch = [victim_shift, active, &writebacks](Set& set, std::uint32_t tag) -> bool {
    return touch_per_set<kSlots, kWrite>(set, tag, victim_shift, active, writebacks);
  };

  Result r;
  const std::uint64_t line_bytes = line_bytes_;
  Counters& c = counters_;
  auto account_end = [&](bool allocated, std::uint64_t touched) {
    account_end_line<kWrite>(c, r, allocated, touched, line_bytes);
  };

  // One division per call: consecutive lines map to consecutive sets, so walk the set records
  // and bump the tag when the walk wraps (the L2 is rarely a power-of-two number of sets).
  Set* const begin = sets.data();
  Set* const end = begin + sets_;
  Set* s = begin + l.set;
  auto tag = static_cast<std::uint32_t>(l.tag);
  account_end(touch(*s, tag), l.head_bytes);
  if (l.last == l.first) {
    r.writeback_bytes = writebacks * line_bytes;
    c.writebacks += writebacks;
    return r;
  }
  if (++s == end) {
    s = begin;
    ++tag;
  }
  // Whole middle lines, in runs that end where the set index wraps.
  const std::uint64_t middle = l.last - l.first - 1;
  std::uint64_t allocated = 0;
  for (std::uint64_t left = middle; left != 0;) {
    const std::uint64_t run = std::min<std::uint64_t>(left, static_cast<std::uint64_t>(end - s));
    for (Set* const stop = s + run; s != stop; ++s) allocated += touch(*s, tag);
    left -= run;
    if (s == end) {
      s = begin;
      ++tag;
    }
  }
  // Reads fill every allocated line; writes cover them whole and fill none.
  r.hit_bytes += (middle - allocated) * line_bytes;
  if (kWrite) {
    r.alloc_bytes += allocated * line_bytes;
    c.write_allocations += allocated;
    c.write_hits += middle - allocated;
  } else {
    r.miss_bytes += allocated * line_bytes;
    c.read_misses += allocated;
    c.read_hits += middle - allocated;
  }
  account_end(touch(*s, tag), l.tail_bytes);
  r.writeback_bytes = writebacks * line_bytes;
  c.writebacks += writebacks;
  return r;
}

L2Cache::Result L2Cache::access_generic(const Lines& l, bool is_write) {
  Result r;
  const std::uint64_t first_line = l.first, last_line = l.last;
  // One division per call: walk the set index instead of taking line % sets_ per line.
  std::uint64_t set = l.set;
  std::uint64_t* const tags = tag_.data();
  std::uint64_t* const stamps = stamp_.data();
  std::uint8_t* const dirty = dirty_.data();
  std::uint32_t* const fill = fill_.data();
  const std::uint32_t ways = ways_;

  for (std::uint64_t line = first_line;; ++line) {
    const std::uint64_t touched =
        line == first_line ? l.head_bytes : (line == last_line ? l.tail_bytes : line_bytes_);
    const std::uint64_t base = set * ways;
    std::uint64_t* const set_tags = tags + base;

    const std::uint32_t filled = fill[set];
    std::uint32_t way = 0;
    while (way < filled && set_tags[way] != line) ++way;

    if (way < filled) {  // hit
      stamps[base + way] = ++clock_;
      if (is_write) dirty[base + way] = 1;
      r.hit_bytes += touched;
      ++(is_write ? counters_.write_hits : counters_.read_hits);
    } else {
      // Victim: the next empty way, or in a full set the way with the oldest stamp.
      std::uint64_t* const set_stamps = stamps + base;
      std::uint32_t victim = filled;
      if (filled < ways) {
        fill[set] = filled + 1;
      } else {
        victim = 0;
        std::uint64_t oldest = set_stamps[0];
        for (std::uint32_t w = 1; w < ways; ++w) {
          if (set_stamps[w] < oldest) {
            oldest = set_stamps[w];
            victim = w;
          }
        }
      }
      const std::uint64_t slot = base + victim;
      if (dirty[slot]) {  // empty ways are never dirty
        r.writeback_bytes += line_bytes_;
        ++counters_.writebacks;
      }
      tags[slot] = line;
      stamps[slot] = ++clock_;
      dirty[slot] = is_write ? 1 : 0;
      if (!is_write) {
        r.miss_bytes += line_bytes_;
        ++counters_.read_misses;
      } else if (touched == line_bytes_) {
        // The write supplies every byte of the line: allocate without reading HBM.
        r.alloc_bytes += touched;
        ++counters_.write_allocations;
      } else {
        r.miss_bytes += line_bytes_;
        ++counters_.write_allocations;
        ++counters_.write_fills;
      }
    }

    if (line == last_line) break;
    if (++set == sets_) set = 0;
  }
  return r;
}

template <unsigned kSlots>
void L2Cache::convert_to_generic(std::vector<CompactSet<kSlots>>& sets) {
  const std::uint64_t lines = sets_ * ways_;
  tag_.assign(lines, 0);
  stamp_.assign(lines, 0);
  dirty_.assign(lines, 0);
  fill_.assign(sets_, 0);
  for (std::uint64_t p = 0; p < sets_;) {
    const std::uint64_t q = start_after(p);
    const CompactSet<kSlots>& s = sets[slot_[p]];
    for (std::uint64_t set = p; set < q; ++set) {
      const std::uint64_t base = set * ways_;
      // Filled ranks are a prefix; way = rank keeps the filled ways a prefix too. Stamps
      // only need to order the ways of one set: the most recent gets the largest.
      for (unsigned rank = 0; rank < ways_ && s.tag[rank] != 0; ++rank) {
        tag_[base + rank] = (std::uint64_t{s.tag[rank]} - 1) * sets_ + set;
        stamp_[base + rank] = ways_ - rank;
        dirty_[base + rank] = static_cast<std::uint8_t>((s.dirty >> rank) & 1u);
        ++fill_[set];
      }
    }
    p = q;
  }
  clock_ = ways_;
  std::vector<CompactSet<kSlots>>().swap(sets);
  std::vector<std::uint64_t>().swap(starts_);
  std::vector<std::uint32_t>().swap(slot_);
  std::vector<std::uint32_t>().swap(next_);
  std::vector<std::uint32_t>().swap(free_);
  std::vector<std::uint64_t>().swap(summary_);
  compact_slots_ = 0;
}

template <unsigned kSlots>
std::uint64_t L2Cache::compact_resident(const std::vector<CompactSet<kSlots>>& sets) const {
  std::uint64_t n = 0;
  for (std::uint64_t p = 0; p < sets_;) {
    const std::uint64_t q = start_after(p);
    std::uint64_t filled = 0;
    for (const std::uint32_t t : sets[slot_[p]].tag) filled += t != 0;
    n += filled * (q - p);
    p = q;
  }
  return n;
}

template <unsigned kSlots>
std::uint64_t L2Cache::compact_dirty(const std::vector<CompactSet<kSlots>>& sets) const {
  std::uint64_t n = 0;
  for (std::uint64_t p = 0; p < sets_;) {
    const std::uint64_t q = start_after(p);
    n += static_cast<std::uint64_t>(__builtin_popcount(sets[slot_[p]].dirty)) * (q - p);
    p = q;
  }
  return n;
}

template <unsigned kSlots>
void L2Cache::pieces_to_per_set(std::vector<CompactSet<kSlots>>& pool,
                                std::vector<PerSet<kSlots>>& per_set) {
  // Way = rank: the tags are already in recency order with the empty ways (tag 0) last, as
  // the per-set layout keeps them, and slots at or above ways_ sit at their own rank.
  constexpr std::uint64_t kIdentity = 0xFEDCBA9876543210ull;
  per_set.resize(sets_);
  for (std::uint64_t p = 0; p < sets_;) {
    const std::uint64_t q = start_after(p);
    const CompactSet<kSlots>& s = pool[slot_[p]];
    PerSet<kSlots> r;
    for (unsigned w = 0; w < kSlots; ++w) r.tag[w] = s.tag[w];
    r.order = kIdentity;
    r.dirty = s.dirty;
    std::fill(per_set.begin() + static_cast<std::ptrdiff_t>(p),
              per_set.begin() + static_cast<std::ptrdiff_t>(q), r);
    p = q;
  }
  std::vector<CompactSet<kSlots>>().swap(pool);
  std::vector<std::uint64_t>().swap(starts_);
  std::vector<std::uint64_t>().swap(summary_);
  std::vector<std::uint32_t>().swap(slot_);
  std::vector<std::uint32_t>().swap(next_);
  std::vector<std::uint32_t>().swap(free_);
  per_set_ = true;
}

template <unsigned kSlots>
void L2Cache::per_set_to_generic(std::vector<PerSet<kSlots>>& sets) {
  const std::uint64_t lines = sets_ * ways_;
  tag_.assign(lines, 0);
  stamp_.assign(lines, 0);
  dirty_.assign(lines, 0);
  fill_.assign(sets_, 0);
  for (std::uint64_t set = 0; set < sets_; ++set) {
    const PerSet<kSlots>& s = sets[set];
    const std::uint64_t base = set * ways_;
    for (unsigned rank = 0; rank < ways_; ++rank) {
      const unsigned way = static_cast<unsigned>(s.order >> (4 * rank)) & 0xF;
      if (s.tag[way] == 0) continue;
      // Both layouts fill ways 0, 1, ..., so the filled ways are a prefix here too. Stamps
      // only need to order the ways of one set: the most recent gets the largest.
      tag_[base + way] = (std::uint64_t{s.tag[way]} - 1) * sets_ + set;
      stamp_[base + way] = ways_ - rank;
      dirty_[base + way] = static_cast<std::uint8_t>((s.dirty >> way) & 1u);
      ++fill_[set];
    }
  }
  clock_ = ways_;
  std::vector<PerSet<kSlots>>().swap(sets);
  compact_slots_ = 0;
  per_set_ = false;
}

template <unsigned kSlots>
std::uint64_t L2Cache::per_set_resident(const std::vector<PerSet<kSlots>>& sets) const {
  std::uint64_t n = 0;
  for (const auto& s : sets) {
    for (const std::uint32_t t : s.tag) n += t != 0;
  }
  return n;
}

template <unsigned kSlots>
std::uint64_t L2Cache::per_set_dirty(const std::vector<PerSet<kSlots>>& sets) const {
  std::uint64_t n = 0;
  for (const auto& s : sets) n += static_cast<std::uint64_t>(__builtin_popcount(s.dirty));
  return n;
}

std::uint64_t L2Cache::dirty_lines() const {
  switch (compact_slots_) {
    case 16: return per_set_ ? per_set_dirty(per_set16_) : compact_dirty(compact16_);
    case 8: return per_set_ ? per_set_dirty(per_set8_) : compact_dirty(compact8_);
    case 4: return per_set_ ? per_set_dirty(per_set4_) : compact_dirty(compact4_);
    default: {
      std::uint64_t n = 0;
      for (const std::uint8_t d : dirty_) n += d;
      return n;
    }
  }
}

std::uint64_t L2Cache::resident_lines() const {
  switch (compact_slots_) {
    case 16: return per_set_ ? per_set_resident(per_set16_) : compact_resident(compact16_);
    case 8: return per_set_ ? per_set_resident(per_set8_) : compact_resident(compact8_);
    case 4: return per_set_ ? per_set_resident(per_set4_) : compact_resident(compact4_);
    default: {
      std::uint64_t n = 0;
      for (const std::uint32_t f : fill_) n += f;
      return n;
    }
  }
}

}  // namespace pypto::sim
