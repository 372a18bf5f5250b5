// SPDX-License-Identifier: Apache-2.0
// The native reader's fast path (native_parse.h): a direct scan of a task or device-task
// record on one line, in the plain form writers produce (escape-free ASCII strings, unsigned
// integers, known keys, values in range). It takes the record as the simdjson walk
// (native_records.cpp) would, with the same fields and the same kernel and op-list numbering;
// anything else, an error included, is left to that walk, which gives the message.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include "native_parse.h"
#include "swar_digits.h"

namespace pypto::trace::detail::native {

namespace {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Whitespace within a line: a newline inside a record is left to the simdjson walk. Writers
// put none between tokens, so one compare settles the usual case (every token's first byte
// is above ' ').
inline const char* skip_space(const char* p) {
  if (__builtin_expect(static_cast<unsigned char>(*p) > ' ', 1)) return p;
  while (is_space(*p)) ++p;
  return p;
}

// Past the byte c at p, whitespace before it allowed; nullptr where another byte comes first.
// The usual case (no whitespace) is one compare.
inline const char* past(const char* p, char c) {
  if (__builtin_expect(*p == c, 1)) return p + 1;
  p = skip_space(p);
  return *p == c ? p + 1 : nullptr;
}

using swar::digits_value;
using swar::kHighs;
using swar::kOnes;
using swar::leading_digits;
using swar::load8;

// A JSON unsigned integer as simdjson's get_uint64 takes it, up to `max`; nullptr for a
// sign, a leading zero or a value above `max`. The end is the first byte that is no digit:
// every caller takes only a separator (',', ']' or '}', whitespace before it allowed) there,
// so a fraction or an exponent is refused by the caller. It reads 8 bytes at a time, at
// most 7 past the line's newline (the chunk's padding); every other scan stops at the
// newline.
inline const char* read_u64(const char* p, std::uint64_t max, std::uint64_t* out) {
  std::uint64_t w = load8(p);
  unsigned n = leading_digits(w);
  if (n == 0 || ((w & 0xFF) == '0' && n > 1)) return nullptr;
  std::uint64_t x = digits_value(w, n);
  p += n;
  if (n == 8) {
    w = load8(p);
    n = leading_digits(w);
    if (n != 0) {
      static constexpr std::uint64_t kPow10[9] = {1,      10,      100,      1000,     10000,
                                                  100000, 1000000, 10000000, 100000000};
      x = x * kPow10[n] + digits_value(w, n);
      p += n;
    }
    // 16 digits so far: a 17th to 19th always fits, a 20th may not.
    for (unsigned d, digits = 16;
         n == 8 && (d = static_cast<unsigned char>(*p) - static_cast<unsigned>('0')) <= 9; ++p) {
      if (++digits > 20 || __builtin_mul_overflow(x, 10, &x) ||
          __builtin_add_overflow(x, std::uint64_t{d}, &x)) {
        return nullptr;
      }
    }
  }
  if (x > max) return nullptr;
  *out = x;
  return p;
}

// read_u64 past whitespace, where read_u64 at p failed: writers put none inside arrays, so
// the usual case pays no whitespace test.
[[gnu::noinline, gnu::cold]] const char* read_u64_spaced(const char* p, std::uint64_t max,
                                                         std::uint64_t* out) {
  return is_space(*p) ? read_u64(skip_space(p), max, out) : nullptr;
}
[[gnu::always_inline]] inline const char* read_u64_ws(const char* p, std::uint64_t max,
                                                      std::uint64_t* out) {
  const char* q = read_u64(p, max, out);
  return __builtin_expect(q != nullptr, 1) ? q : read_u64_spaced(p, max, out);
}

// Bit 7 of each byte of w that is zero; exact at the lowest such byte (a borrow only marks
// bytes above a zero byte).
inline std::uint64_t zero_bytes(std::uint64_t w) { return (w - kOnes) & ~w & kHighs; }

// An escape-free ASCII string at p, as RecordParser::get_str returns it; nullptr for any
// other token.
inline const char* read_str(const char* p, std::string_view* out) {
  if (*p != '"') return nullptr;
  const char* body = ++p;
  for (auto c = static_cast<unsigned char>(*p); c != '"'; c = static_cast<unsigned char>(*++p)) {
    if (c < 0x20 || c >= 0x80 || c == '\\') return nullptr;
  }
  *out = std::string_view(body, std::size_t(p - body));
  return p + 1;
}

// The end of the JSON array at p of plain strings, unsigned integers and such arrays; nullptr
// for any other text. Grammar is checked here, types and arity by read_ops: an array the
// walk would find malformed (around it, simdjson's stream may split a batch elsewhere) is
// left to the walk.
const char* skip_array(const char* p, int depth) {
  if (*p != '[' || depth > 8) return nullptr;
  p = skip_space(p + 1);
  if (*p == ']') return p + 1;
  while (true) {
    if (*p == '[') {
      p = skip_array(p, depth + 1);
    } else if (*p == '"') {
      std::string_view s;
      p = read_str(p, &s);
    } else {
      std::uint64_t x = 0;
      p = read_u64(p, ~0ull, &x);
    }
    if (!p) return nullptr;
    p = skip_space(p);
    if (*p == ']') return p + 1;
    if (*p != ',') return nullptr;
    p = skip_space(p + 1);
  }
}

// A key of up to 6 characters as a word: its bytes, and its length in the top byte (so that
// a key with a NUL inside is no shorter key).
constexpr std::uint64_t text_word(std::string_view k) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < k.size(); ++i) {
    v |= std::uint64_t{static_cast<unsigned char>(k[i])} << (8 * i);
  }
  return v;
}
constexpr std::uint64_t key_word(std::string_view k) {
  return text_word(k) | (std::uint64_t{k.size()} << 56);
}

// A number at p read as read_u64 reads it, where it is the text `g` remembers (the value a
// record before had for the key, with the byte after it, so that it ends there) by one
// masked compare: consecutive tasks mostly share their root, device task and group.
[[gnu::always_inline]] inline const char* read_u64_guessed(const char* p, std::uint64_t max,
                                                           std::uint64_t* out, NumberGuess& g) {
  const std::uint64_t w = load8(p);
  if (((w ^ g.word) & g.mask) == 0) {
    *out = g.value;
    return p + g.digits;
  }
  const char* q = read_u64(p, max, out);
  if (q && q - p < 8) {  // the digits and the byte after them fit a word
    g.digits = static_cast<std::uint32_t>(q - p);
    g.mask = ~0ull >> (64 - 8 * (g.digits + 1));
    g.word = w & g.mask;
    g.value = *out;
  }
  return q;
}

// A task's "id" as read_u64 reads it, by one compare where it is the record before's plus
// one (ids are dense): g holds that text where the record before's last digit was no 9.
[[gnu::always_inline]] inline const char* read_id(const char* p, std::uint64_t* out,
                                                  NumberGuess& g) {
  const std::uint64_t w = load8(p);
  const char* q;
  if (((w ^ g.word) & g.mask) == 0) {
    *out = g.value;
    q = p + g.digits;
  } else {
    q = read_u64(p, common::kNoTask - 1, out);
    if (!q || q - p >= 8) {  // no room for the byte after the digits
      g = NumberGuess{};
      return q;
    }
    g.digits = static_cast<std::uint32_t>(q - p);
    g.mask = ~0ull >> (64 - 8 * (g.digits + 1));
    g.word = w & g.mask;
    g.value = *out;
  }
  // At most 7 digits: the next value stays below the limit.
  const unsigned shift = 8 * g.digits - 8;
  if (g.digits != 0 && ((g.word >> shift) & 0xFF) != '9') {
    g.word += 1ull << shift;
    ++g.value;
  } else {
    g = NumberGuess{};
  }
  return q;
}

// A range's kind at p, quotes included, as a word: "r", "w", "rn" or "wn" (an escaped form
// is left to the walk), into m; past it, or nullptr.
inline const char* read_kind(const char* p, sched::MemAccess* m) {
  const std::uint64_t w = load8(p);
  const std::uint64_t three = w & 0xFFFFFFull, four = w & 0xFFFFFFFFull;
  if (three == text_word("\"r\"") || three == text_word("\"w\"")) {
    p += 3;
  } else if (four == text_word("\"rn\"") || four == text_word("\"wn\"")) {
    p += 4;
    m->no_l2 = 1;
  } else {
    return nullptr;
  }
  m->is_write = ((w >> 8) & 0xFF) == 'w' ? 1 : 0;
  return p;
}

// The task keys of up to 6 characters by a perfect hash of their words: 16 slots, the
// multiplier found by search (every key in a slot of its own).
constexpr std::uint64_t kKeyHashMul = 0x3f0298a85b8da5a7ull;
constexpr unsigned key_slot(std::uint64_t word) {
  return static_cast<unsigned>((word * kKeyHashMul) >> 60);
}
constexpr std::string_view kKeyNames[] = {"id",    "dt",    "pg",     "end",   "dur",
                                          "mem",   "ops",   "core",   "root",  "succ",
                                          "start", "tiles", "kernel", "cycles"};
constexpr Key kKeys[] = {kId,   kDt,   kPg,   kEnd,   kDur,   kMem,    kOps,
                         kCore, kRoot, kSucc, kStart, kTiles, kKernel, kCycles};
struct KeyTable {
  std::uint64_t word[16] = {};
  Key key[16] = {};
  bool collision_free = true;  // every key in a slot of its own
  constexpr KeyTable() {
    for (std::size_t i = 0; i < std::size(kKeyNames); ++i) {
      const std::uint64_t w = key_word(kKeyNames[i]);
      collision_free = collision_free && word[key_slot(w)] == 0;
      word[key_slot(w)] = w;
      key[key_slot(w)] = kKeys[i];
    }
  }
};
constexpr KeyTable kKeyTable;
static_assert(std::size(kKeyNames) == std::size(kKeys), "a name for every key");
static_assert(kKeyTable.collision_free, "the key hash puts two keys in one slot");

// The key at p, read as a word where it is one of the keys of up to 6 characters, else as
// key_of reads it; kUnknown where it is no plain string. *end: past its closing quote.
inline Key read_key(const char* p, const char** end) {
  if (*p != '"') return kUnknown;
  const std::uint64_t w = load8(p + 1);
  const std::uint64_t quote = zero_bytes(w ^ (kOnes * '"'));
  const unsigned n = quote ? static_cast<unsigned>(__builtin_ctzll(quote)) / 8 : 8;
  if (n != 0 && n <= 6) {
    const std::uint64_t word = (w & (~0ull >> (64 - 8 * n))) | (std::uint64_t{n} << 56);
    const unsigned slot = key_slot(word);
    if (kKeyTable.word[slot] == word) {
      *end = p + 2 + n;
      return kKeyTable.key[slot];
    }
  }
  std::string_view s;
  *end = read_str(p, &s);
  return *end ? key_of(s) : kUnknown;
}

}  // namespace

// A word at a time (inline, twice a record; memcmp was a call). The first kHeadWords words
// are compared with those where the text was taken, the bytes after a shorter text included:
// prefix_slot hashed them all, so the text is only found where they recur anyway, and no
// mask is needed. The last word's bytes past a longer text are masked off, and reading them
// stays within the chunk's padding (fast_end_ is the end of its whole lines, 32 bytes or more
// before the buffer's end).
template <int kHeadWords>
[[gnu::always_inline]] inline const char* RecordParser::known_text(const TextSlot& slot,
                                                                   const char* p,
                                                                   std::uint32_t* index) const {
  const std::size_t n = slot.size;
  if (n == 0 || n > std::size_t(fast_end_ - p)) return nullptr;
  std::uint64_t diff = 0;
  for (int k = 0; k < kHeadWords; ++k) diff |= load8(p + 8 * k) ^ slot.head[k];
  if (diff != 0) return nullptr;
  const char* t = slot.text.data();
  std::size_t i = 8 * kHeadWords;
  for (; i + 8 <= n; i += 8) {
    if (load8(p + i) != load8(t + i)) return nullptr;
  }
  if (i < n && ((load8(p + i) ^ load8(t + i)) & (~0ull >> (64 - 8 * (n - i)))) != 0) {
    return nullptr;
  }
  *index = slot.index;
  return p + n;
}

// The slot of the text at p: a hash of its first `bytes` (8 or 32) as they appear (those
// after a shorter text included, so that such a text is only found where the same text
// follows).
[[gnu::always_inline]] inline std::size_t RecordParser::prefix_slot(const char* p, int bytes) {
  std::uint64_t h = load8(p) * 0x9E3779B97F4A7C15ull;
  if (bytes == 32) {
    h ^= load8(p + 8) * 0xC2B2AE3D27D4EB4Full ^ load8(p + 16) * 0x165667B19E3779F9ull ^
         load8(p + 24) * 0xD6E8FEB86659FD93ull;
  }
  return static_cast<std::size_t>(h >> 56) % kTextSlots;
}

inline const char* RecordParser::fast_succ(const char* p) {
  if (*p != '[') return nullptr;
  p = skip_space(p + 1);
  if (*p == ']') return p + 1;
  while (true) {
    std::uint64_t id = 0;
    p = read_u64_ws(p, common::kNoTask - 1, &id);
    if (!p) return nullptr;
    cur_.succ.push_back(static_cast<common::TaskId>(id));
    if (*p != ',') {
      p = skip_space(p);
      if (*p == ']') return p + 1;
      if (*p != ',') return nullptr;
    }
    ++p;
  }
}

// A "mem" range after its '[': [address, bytes, kind] or [address, bytes, kind, burst].
[[gnu::always_inline]] inline const char* RecordParser::fast_range(const char* p) {
  sched::MemAccess m{};
  std::uint64_t addr = 0, bytes = 0;
  p = read_u64_ws(p, ~0ull, &addr);
  if (!p || !(p = past(p, ','))) return nullptr;
  p = read_u64_ws(p, 0xFFFFFFFFull, &bytes);
  if (!p || bytes == 0 || !(p = past(p, ','))) return nullptr;
  const char* q = read_kind(p, &m);
  if (!q) {
    if (!is_space(*p) || !(q = read_kind(skip_space(p), &m))) return nullptr;
  }
  p = q;
  m.addr = addr;
  m.bytes = static_cast<std::uint32_t>(bytes);
  if (*p != ']') {
    p = skip_space(p);
    if (*p == ',') {
      std::uint64_t burst = 0;
      p = read_u64(skip_space(p + 1), sched::kMaxBurstBytes, &burst);
      if (!p) return nullptr;
      m.burst_bytes = static_cast<std::uint32_t>(burst);
      p = skip_space(p);
    }
    if (*p != ']') return nullptr;
  }
  if (m.bytes - 1 > ~std::uint64_t{0} - m.addr) return nullptr;
  cur_.mem.push_back(m);
  return p + 1;
}

inline const char* RecordParser::fast_mem(const char* p) {
  if (*p != '[') return nullptr;
  p = skip_space(p + 1);
  if (*p == ']') return p + 1;
  while (true) {
    if (*p != '[') {
      p = skip_space(p);
      if (*p != '[') return nullptr;
    }
    p = fast_range(p + 1);
    if (!p) return nullptr;
    if (*p != ',') {
      p = skip_space(p);
      if (*p == ']') return p + 1;
      if (*p != ',') return nullptr;
    }
    ++p;
  }
}

// A key's bit number: switching on it (0-15, dense) is one table jump, on the Key's single
// bits a chain of compares.
constexpr unsigned bit_of(Key k) { return static_cast<unsigned>(__builtin_ctz(k)); }

// One field's value at p, of the key with bit number `bit` (not seen before in the record;
// 16: none), into r; the end of the value, or nullptr where the simdjson walk must take the
// record.
[[gnu::always_inline]] inline const char* RecordParser::fast_value(unsigned bit, const char* p,
                                                                   Rec& r, std::string_view* kernel,
                                                                   std::string_view* ops) {
  switch (bit) {
    case bit_of(kId): return read_id(p, &r.id, id_guess_);
    case bit_of(kCore): {
      // The common values, quotes included, as words.
      const std::uint64_t w = load8(p) & 0xFFFFFFFFFFull;
      if (w == text_word("\"AIV\"")) {
        r.core = CoreType::kAiv;
        return p + 5;
      }
      if (w == text_word("\"AIC\"")) {
        r.core = CoreType::kAic;
        return p + 5;
      }
      std::string_view s;
      p = read_str(p, &s);
      if (!p) return nullptr;
      const auto ct = common::parse_core_type(s);
      if (!ct) return nullptr;
      r.core = *ct;
      return p;
    }
    case bit_of(kKernel): {
      // A name the fast path took before is known by its quoted text (kernel_index's
      // numbering); otherwise its text, for kernel_index.
      if (const char* q = known_text<1>(kernels_by_prefix_[prefix_slot(p, 8)], p, &r.kernel)) {
        return q;
      }
      return read_str(p, kernel);
    }
    case bit_of(kRoot): return read_u64_guessed(p, 0xFFFFFFFEull, &r.root, root_guess_);
    case bit_of(kDt): return read_u64_guessed(p, 0xFFFFFFFFull, &r.dt, dt_guess_);
    case bit_of(kPg): return read_u64_guessed(p, 0xFFFFFFFFull, &r.pg, pg_guess_);
    case bit_of(kSucc): return fast_succ(p);
    case bit_of(kStart): return read_u64(p, ~0ull, &r.start);
    case bit_of(kEnd): return read_u64(p, ~0ull, &r.end);
    case bit_of(kDur): return read_u64(p, sched::kNoRecord - 1, &r.dur);
    case bit_of(kMem): return fast_mem(p);
    case bit_of(kOps): {
      // A list the fast path took before is known by the bytes it starts with: a valid array
      // ends at its own closing bracket, so text starting with it is that array.
      // A set of two slots (an even one and the next): two lists whose bytes hash to one set
      // alternate without a miss.
      const std::size_t set = prefix_slot(p, 32) & ~std::size_t{1};
      if (const char* q = known_text<4>(ops_by_prefix_[set], p, &r.ops)) return q;
      if (const char* q = known_text<4>(ops_by_prefix_[set + 1], p, &r.ops)) return q;
      // Otherwise its text, checked, for ops_index (parse_ops).
      const char* end = skip_array(p, 0);
      if (end) *ops = std::string_view(p, std::size_t(end - p));
      return end;
    }
    case bit_of(kCycles): return read_u64(p, 0xFFFFFFFFull, &r.extra_cycles);
    case bit_of(kTiles): p = read_u64(p, 0xFFFF, &r.tiles); return p && r.tiles != 0 ? p : nullptr;
    case bit_of(kDeviceTask): {
      std::uint64_t x = 0;
      p = read_u64(p, 0xFFFFFFFFull, &x);
      r.device_task = static_cast<std::uint32_t>(x);
      return p;
    }
    case bit_of(kParallelGroup): {
      std::uint64_t x = 0;
      p = read_u64(p, 0xFFFFFFFFull, &x);
      r.parallel_group = static_cast<std::uint32_t>(x);
      return p;
    }
    default: break;
  }
  return nullptr;
}

// The record's fields into r, with its successors and ranges appended to the batch; the end
// of its line, or nullptr. A field the record lacks keeps what the slot held (the readers
// look at a field only where `seen` has it) but for those parse_record gives defaults.
const char* RecordParser::fast_fields(const char* p, Rec& r, std::string_view* kernel,
                                      std::string_view* ops) {
  // The same defaults as parse_record. The keys seen are counted in a local (a member would be
  // loaded and stored a field, the record's stores may alias it); seen_ is set once taken.
  std::uint32_t seen = 0;
  r.tiles = 1;
  r.ops = UnpricedWork::kNoOps;
  r.extra_cycles = 0;
  r.pg = 0;
  r.root = 0;
  r.parallel_group = 0;  // a device-task record without it is group 0, not the last one's
  if (*p != '{') return nullptr;
  ++p;
  unsigned after = 16;  // key_guess_'s index: the record's first key
  while (true) {
    // Writers put no whitespace before a key: the guess is compared where the key would
    // start, and whitespace is skipped only where it fails.
    KeyGuess& g = key_guess_[after];
    const std::uint64_t w = load8(p);
    Key k;
    if (((w ^ g.word) & g.mask) == 0) {
      k = g.key;
      after = g.bit;
      p += g.bytes;
      if (!g.colon && !(p = past(p, ':'))) return nullptr;
    } else {
      p = skip_space(p);
      const std::uint64_t kw = load8(p);
      const char* key = p;
      k = read_key(p, &p);
      if (k == kUnknown) return nullptr;  // p may be null then
      after = static_cast<unsigned>(__builtin_ctz(k));
      const auto bytes = static_cast<std::uint32_t>(p - key);
      const bool colon = bytes < 8 && *p == ':';
      if (!(p = past(p, ':'))) return nullptr;
      if (bytes <= 8) {  // a word with its quotes (and ':' where it fits): the guess from here on
        g.bytes = colon ? bytes + 1 : bytes;
        g.mask = ~0ull >> (64 - 8 * g.bytes);
        g.word = kw & g.mask;
        g.key = k;
        g.bit = after;
        g.colon = colon;
      }
    }
    if (seen & k) return nullptr;
    seen |= k;
    // Writers put no whitespace after ':': the value is read where it starts, and again past
    // whitespace only where that fails (every value's reader fails on a space before it
    // appends anything).
    const char* v = fast_value(after, p, r, kernel, ops);
    if (v == nullptr && is_space(*p)) v = fast_value(after, skip_space(p), r, kernel, ops);
    if (!v) return nullptr;
    p = v;
    if (*p != ',') {
      p = skip_space(p);
      if (*p == '}') break;
      if (*p != ',') return nullptr;
    }
    ++p;
  }
  p = skip_space(p + 1);
  if (*p != '\n') return nullptr;
  if ((seen & (kDeviceTask | kParallelGroup)) && (seen & ~(kDeviceTask | kParallelGroup))) {
    return nullptr;
  }
  seen_ = seen;
  return p;
}

// The record is parsed straight into the batch's next slot (no copy of parse_record's
// fields); the slot counts once the record is taken.
const char* RecordParser::fast_record(const char* p) {
  Batch& b = cur_;
  const std::size_t succ_begin = b.succ.size(), mem_begin = b.mem.size();
  if (b.size == b.recs.size()) b.recs.emplace_back();
  Rec& r = b.recs[b.size];
  std::string_view kernel, ops;
  p = fast_fields(p, r, &kernel, &ops);
  if (!p) {
    b.succ.resize(succ_begin);
    b.mem.resize(mem_begin);
    return nullptr;
  }
  // The record is taken: only a new op list's own errors remain, as the walk reports them.
  last_line_unterminated_ = false;
  if (!ops.empty()) {
    r.ops = ops_index(ops);
    // The new list takes its set's first slot, the one it displaces the second.
    const std::size_t set = prefix_slot(ops.data(), 32) & ~std::size_t{1};
    std::swap(ops_by_prefix_[set], ops_by_prefix_[set + 1]);
    ops_by_prefix_[set].set(ops.data(), ops.size(), r.ops, 32);
  }
  if (kernel.data() != nullptr) {
    r.kernel = kernel_index(kernel);
    // With its quotes.
    kernels_by_prefix_[prefix_slot(kernel.data() - 1, 8)].set(kernel.data() - 1, kernel.size() + 2,
                                                              r.kernel, 8);
  }
  r.line = line_;
  r.seen = seen_;
  set_ranges(r, b, succ_begin, mem_begin);
  if (++b.size == kBatchRecords) flush();
  return p + 1;
}

// The header as parse_header takes it; what it refuses is left to it.
const char* RecordParser::fast_header(const char* p) {
  if (*p != '{') return nullptr;
  p = skip_space(p + 1);
  Header h;
  enum : unsigned { kFormat = 1, kVersion = 2, kChip = 4, kUnit = 8, kTasks = 16, kGenerator = 32 };
  unsigned seen = 0;
  while (true) {
    std::string_view key, text;
    p = read_str(p, &key);
    if (!p) return nullptr;
    p = skip_space(p);
    if (*p != ':') return nullptr;
    p = skip_space(p + 1);
    unsigned bit = 0;
    if (key == "format") {
      bit = kFormat;
      p = read_str(p, &text);
      if (p && text != "pypto-sim-trace") return nullptr;
    } else if (key == "version") {
      bit = kVersion;
      std::uint64_t version = 0;
      p = read_u64(p, ~0ull, &version);
      if (p && version != kFormatVersion) return nullptr;
    } else if (key == "chip") {
      bit = kChip;
      p = read_str(p, &text);
      h.chip_hint = std::string(text);
    } else if (key == "time_unit") {
      bit = kUnit;
      p = read_str(p, &text);
      if (p && text != "ns") return nullptr;
    } else if (key == "tasks") {
      bit = kTasks;
      p = read_u64(p, common::kNoTask - 1, &h.tasks);
      h.has_tasks = true;
    } else if (key == "generator") {
      bit = kGenerator;
      p = read_str(p, &text);
    }
    if (!p || bit == 0 || (seen & bit)) return nullptr;
    seen |= bit;
    p = skip_space(p);
    if (*p == '}') break;
    if (*p != ',') return nullptr;
    p = skip_space(p + 1);
  }
  p = skip_space(p + 1);
  if (*p != '\n' || !(seen & kFormat) || !(seen & kVersion)) return nullptr;
  header_ = std::move(h);
  if (header_.has_tasks) {
    header_.reserve_tasks =
        std::min<std::uint64_t>(header_.tasks, file_bytes_ / kMinTaskRecordBytes);
  }
  header_.seen = true;
  cur_.header = true;
  return p + 1;
}

}  // namespace pypto::trace::detail::native
