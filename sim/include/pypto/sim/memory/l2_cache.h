// SPDX-License-Identifier: Apache-2.0
// The chip's L2: line-granular, set-associative, LRU, write-allocate, write-back. Plain C++
// (no SystemC) so it can be tested on access patterns alone. The contents may outlive one
// simulation (SimOptions::l2_state carries them from one kernel call to the next); the
// counters are per run (reset_counters()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace pypto::sim {

class L2Cache {
 public:
  struct Result {
    std::uint64_t hit_bytes = 0;        // bytes touched in resident lines (reads or writes)
    std::uint64_t miss_bytes = 0;       // bytes of lines filled from HBM: read misses and
                                        // writes that allocate a line they cover partly
    std::uint64_t alloc_bytes = 0;      // writes that allocate a line they cover whole: no
                                        // fill, no HBM traffic now (written back on eviction)
    std::uint64_t writeback_bytes = 0;  // dirty lines evicted to make room
  };

  // Line counts since construction or the last reset_counters(). Reads and writes apart: a
  // write that allocates a line is neither a hit nor a read miss, so counting it as a hit
  // (as a single hit rate does) shows a plain stream, read once and written once, at 50 %.
  struct Counters {
    std::uint64_t read_hits = 0;          // read of a resident line
    std::uint64_t read_misses = 0;        // read of a line not resident: filled from HBM
    std::uint64_t write_hits = 0;         // write to a resident line
    std::uint64_t write_allocations = 0;  // write to a line not resident: a way allocated
    std::uint64_t write_fills = 0;        // of those, lines written partly: filled from HBM
    std::uint64_t writebacks = 0;         // dirty lines evicted (written to HBM)
  };

  // size_bytes must be a multiple of line_bytes * ways; line_bytes a power of two.
  // Throws ConfigError otherwise.
  L2Cache(std::uint64_t size_bytes, std::uint32_t line_bytes, std::uint32_t ways);

  // Contract: called in simulated-time order by the core that moves the data. Touches
  // every line of [addr, addr + bytes), allocating on a miss (reads fill, writes allocate
  // and mark dirty), and updates LRU order.
  Result access(std::uint64_t addr, std::uint64_t bytes, bool is_write);
  // What a run of rows made of L2: the sum of the rows' Results and how each row hit, which
  // is all a core needs to price them (a row's share of its moved bytes at L2 speed).
  struct RowsResult {
    Result sum;
    std::uint64_t whole_hit_rows = 0;  // rows with hit_bytes == bytes > 0
    std::uint64_t part_hit_rows = 0;   // rows with 0 < hit_bytes < bytes
  };
  // Contract: access() of the `count` rows [addr + k * pitch, + bytes), k = 0, 1, ... in
  // turn, with the same lines, LRU order, counters and errors; row_hits[k] (count entries,
  // or null) receives row k's hit_bytes. One call shares the per-access setup of a tile's
  // rows and adds their Results up as it goes.
  RowsResult access_rows(std::uint64_t addr, std::uint64_t bytes, std::uint64_t pitch,
                         std::uint64_t count, bool is_write, std::uint64_t* row_hits);

  const Counters& counters() const { return counters_; }
  // Contract: zeroes the counters and keeps every line, dirty bit and the LRU order.
  void reset_counters() { counters_ = Counters{}; }
  std::uint64_t resident_lines() const;
  // Lines written and not yet written back: HBM traffic still owed when a run ends.
  std::uint64_t dirty_lines() const;
  std::uint64_t size_bytes() const { return sets_ * ways_ * line_bytes_; }
  std::uint32_t ways() const { return ways_; }
  std::uint32_t line_bytes() const { return line_bytes_; }

 private:
  // Two layouts hold the same state. access() is the simulator's hottest function (a task
  // touches ~200 lines), so most caches use the compact one; the generic one covers the rest.
  //
  // Compact (2..16 ways): sets in runs. Consecutive lines map to consecutive sets, and an
  // access gives every line of a run of sets the same tag (line / sets + 1, 0 = empty way), so
  // neighbouring sets that saw the same accesses hold the same tags in the same LRU order.
  // Such a run of sets (a piece) is stored once, in a pool slot, and an access updates each
  // piece it covers once instead of each line: the outcome (hit, fill, eviction, writeback)
  // is the same for every set of a piece. A piece is split where an access starts or ends
  // inside it and merged with its neighbour as soon as the two hold the same state, which
  // happens quickly for tile-shaped traffic (the 100k mix trace averages ~3.1 pieces an
  // access of ~76 lines); the worst case (every set its own piece) costs one lookup a line, as a
  // per-set layout does. State is canonical so that equal contents compare equal: tags by
  // recency rank (rank 0 = most recent), empty ways (tag 0) at the end, dirty bit r = rank r.
  template <unsigned kSlots>
  struct alignas(16) CompactSet {
    std::uint32_t tag[kSlots];  // ranks at or above ways_ stay 0 forever
    std::uint16_t dirty;        // bit r = the line at rank r is dirty
    bool operator==(const CompactSet& o) const;
  };

  // Per set (2..16 ways, from the first window of accesses that averaged fewer than
  // kMinLinesPerPiece lines a piece on: the row segments of a strided tile, one line each,
  // leave every set its own piece, and pieces then cost more than a record per set): one
  // record per set, so a range's consecutive sets are consecutive records. LRU order is a
  // permutation of 4-bit way numbers, so a hit is a move-to-front and the victim is the last
  // active nibble; empty ways sit at the LRU end. The cache stays per set afterwards.
  template <unsigned kSlots>
  struct alignas(16) PerSet {
    std::uint32_t tag[kSlots];  // slots at or above ways_ stay 0 forever
    std::uint64_t order;        // nibble i = the way at recency rank i (0 = most recent)
    std::uint16_t dirty;        // bit w = way w is dirty
  };

  // Generic (1 way, more than 16 ways, or from the first line whose tag needs more than 32
  // bits on): per way a 64-bit line address, a 64-bit LRU stamp and a dirty byte, set-major.

  // The lines one access touches and the bytes it touches in the first and the last; the
  // first line's set and its tag (line / sets_ + 1).
  struct Lines {
    std::uint64_t first, last, head_bytes, tail_bytes, set, tag;
  };
  template <unsigned kSlots>
  [[gnu::always_inline]] Result access_2_16(std::vector<CompactSet<kSlots>>& pool,
                                            std::vector<PerSet<kSlots>>& per_set, const Lines& l,
                                            bool is_write);
  // access_rows() of rows whose lines all have compact tags, none wrapping past 2^64.
  template <unsigned kSlots, bool kWrite>
  RowsResult rows_2_16(std::vector<CompactSet<kSlots>>& pool, std::vector<PerSet<kSlots>>& per_set,
                       std::uint64_t addr, std::uint64_t bytes, std::uint64_t pitch,
                       std::uint64_t count, std::uint64_t* row_hits);
  // rows_2_16() of per-set records when every row lies inside one line (same offset in its
  // line, pitch a whole number of lines): one record touched a row, the counts kept in
  // registers.
  template <unsigned kSlots, bool kWrite>
  RowsResult one_line_rows(std::vector<PerSet<kSlots>>& per_set, const Lines& l,
                           std::uint64_t bytes, std::uint64_t pitch, std::uint64_t count,
                           std::uint64_t* row_hits);
  // first_piece: the piece that holds set l.set.
  template <unsigned kSlots, bool kWrite>
  Result access_compact(std::vector<CompactSet<kSlots>>& sets, const Lines& l,
                        std::uint64_t first_piece);
  // A read whose lines are each their set's most recent (a consumer reading what its producer
  // just wrote; half the mix trace's reads) changes no piece: true and r as access_compact()
  // would give it, found without that walk's setup; false (nothing changed) otherwise.
  template <unsigned kSlots>
  bool read_of_recent(const std::vector<CompactSet<kSlots>>& pool, const Lines& l,
                      std::uint64_t first_piece, Result& r);
  template <unsigned kSlots, bool kWrite>
  Result access_per_set(std::vector<PerSet<kSlots>>& sets, const Lines& l);
  // Expands the pieces into one record per set, keeping every line, dirty bit and LRU order.
  template <unsigned kSlots>
  void pieces_to_per_set(std::vector<CompactSet<kSlots>>& pool,
                         std::vector<PerSet<kSlots>>& per_set);
  template <unsigned kSlots>
  void per_set_to_generic(std::vector<PerSet<kSlots>>& sets);
  template <unsigned kSlots>
  std::uint64_t per_set_resident(const std::vector<PerSet<kSlots>>& sets) const;
  template <unsigned kSlots>
  std::uint64_t per_set_dirty(const std::vector<PerSet<kSlots>>& sets) const;
  Result access_generic(const Lines& l, bool is_write);
  // Moves the compact state into the generic arrays, keeping every line, dirty bit and the
  // LRU order of every set; the cache stays generic afterwards.
  template <unsigned kSlots>
  void convert_to_generic(std::vector<CompactSet<kSlots>>& sets);
  template <unsigned kSlots>
  std::uint64_t compact_resident(const std::vector<CompactSet<kSlots>>& sets) const;
  template <unsigned kSlots>
  std::uint64_t compact_dirty(const std::vector<CompactSet<kSlots>>& sets) const;

  // Piece starts: bit s of starts_ is set when set s begins a piece (set 0 always does);
  // bit w of summary_ when word w of starts_ is not zero, so that finding the piece of a set
  // scans words, not bits.
  void set_start(std::uint64_t s);
  void clear_start(std::uint64_t s);
  std::uint64_t start_at_or_before(std::uint64_t s) const;  // the piece that holds set s
  std::uint64_t start_after(std::uint64_t s) const;         // the next piece, or sets_
  // The end of the piece that starts at set p, or b if that is before it.
  std::uint64_t end_within(std::uint64_t p, std::uint64_t b) const {
    return std::min<std::uint64_t>(next_[p], b);
  }
  // Starts a piece at set s (inside the piece that starts at `piece`, not yet a start) with
  // that piece's state.
  template <unsigned kSlots>
  void split(std::vector<CompactSet<kSlots>>& pool, std::uint64_t piece, std::uint64_t s);
  // Joins the piece at set s to the one before it, which starts at `before` (their states
  // are equal).
  void merge(std::uint64_t before, std::uint64_t s);

  std::uint32_t line_bytes_ = 0, line_shift_ = 0, ways_ = 0;
  std::uint64_t sets_ = 0;

  unsigned compact_slots_ = 0;  // 4, 8 or 16 while compact (which vector is live), else 0
  // The pool of piece states: few pieces live at a time (~60 at the end of the mix trace),
  // so a dense pool stays in the host's L1/L2 where records indexed by set (2 MB for the A2
  // L2) missed it on every split.
  std::vector<CompactSet<4>> compact4_;
  std::vector<CompactSet<8>> compact8_;
  std::vector<CompactSet<16>> compact16_;
  std::vector<std::uint32_t> slot_;  // per set: its pool slot, meaningful at piece starts
  // Per set: where its piece ends (the next start, or sets_), meaningful at piece starts: an
  // access finds each piece's end in one load instead of scanning starts_.
  std::vector<std::uint32_t> next_;
  std::vector<std::uint32_t> free_;  // pool slots of merged pieces, reused by splits
  std::vector<std::uint64_t> starts_, summary_;
  std::uint64_t compact_line_limit_ = 0;  // first line whose tag does not fit 32 bits

  // Per-set layout (per_set_ true: the vector for compact_slots_ is live, the pool is freed).
  bool per_set_ = false;
  std::vector<PerSet<4>> per_set4_;
  std::vector<PerSet<8>> per_set8_;
  std::vector<PerSet<16>> per_set16_;
  std::uint64_t lru_active_ = 0;  // nibbles 0 .. ways_-1 of an order word
  // Lines and pieces touched in the current window of accesses (pieces layout only).
  std::uint64_t window_accesses_ = 0, window_lines_ = 0, window_pieces_ = 0;

  // Generic layout. Per set: ways in use. Lines are never invalidated, so a set fills ways
  // 0, 1, ... in order: hits scan only the filled ways and a miss in a set that is not full
  // takes the next way without an LRU scan.
  std::vector<std::uint64_t> tag_;
  std::vector<std::uint64_t> stamp_;
  std::vector<std::uint8_t> dirty_;
  std::vector<std::uint32_t> fill_;
  std::uint64_t clock_ = 0;

  Counters counters_;
};

}  // namespace pypto::sim
