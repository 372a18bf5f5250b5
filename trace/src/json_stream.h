// SPDX-License-Identifier: Apache-2.0
// A streaming pull parser for the record-oriented JSON inputs (topo.json, the prof file,
// the fixed-latency graph). The file is read in 4 MiB chunks and walked token by token, so a
// reader keeps only what it builds (the graph), never the text or a DOM of the whole file.
// It accepts exactly the JSON nlohmann accepts (the readers used nlohmann's DOM before),
// and a syntax error is reported by re-reading the file with nlohmann's own parser, so the
// messages ("file:line:col: invalid JSON: ...", a number too large for a double with its
// record and key) are the ones the DOM readers gave.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace pypto::trace::detail {

class JsonStream {
 public:
  enum class Kind : std::uint8_t {
    kNone,  // absent (a key not given)
    kString,
    kUint,   // an integer without '-' that fits 64 bits
    kInt,    // a negative integer that fits 64 bits ("-0" is one)
    kFloat,  // anything else numeric (a fraction, an exponent, or too large for an integer)
    kTrue,
    kFalse,
    kNull,
    kArray,
    kObject,
  };
  // A scalar value as nlohmann would have parsed it.
  struct Scalar {
    Kind kind = Kind::kNone;
    std::uint64_t u = 0;
    std::int64_t i = 0;
    double d = 0;
    std::string_view s;  // kString, unescaped; valid until the next call on the stream
  };

  // Opens `path` (TraceError if it is missing, a directory or not a regular file).
  // `top_name` names the elements of the top-level array in messages ("record", "block").
  JsonStream(const std::string& path, const char* top_name);
  ~JsonStream();
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;

  const std::string& path() const { return path_; }
  std::uint64_t file_bytes() const { return file_bytes_; }
  // Bytes of the file consumed so far.
  std::uint64_t offset() const { return base_ + pos_; }

  // Contract: the kind of the next value (whitespace skipped); a syntax error if no value
  // can start there. Nothing is consumed.
  Kind peek_kind();
  // Contract: consume '[' / '{' (a syntax error otherwise).
  void begin_array() { expect('['); }
  void begin_object() { expect('{'); }
  // Contract: inside an array, true when another element follows (the ',' before it is
  // consumed), false after the closing ']'. `first` starts true for each array.
  bool next_element(bool& first);
  // Contract: inside an object, true with the next key (unescaped; valid until the next
  // call) and its ':' consumed, false after the closing '}'.
  bool next_key(bool& first, std::string_view& key);
  // Contract: reads a string, number or literal (peek_kind() is neither array nor object).
  void read_scalar(Scalar& out);

  // A flat object in the plain form writers produce, as PlainObject holds it.
  struct PlainField {
    std::string_view key;
    Kind kind = Kind::kNone;           // kString, kUint or kArray (of kUint)
    std::uint64_t u = 0;               // kUint
    std::string_view s;                // kString
    std::uint32_t begin = 0, end = 0;  // kArray: its elements in PlainObject::numbers
  };
  struct PlainObject {
    std::vector<PlainField> fields;  // in file order
    std::vector<std::uint64_t> numbers;
  };
  // Contract: at an object (peek_kind() kObject), reads it into `out` and returns true when
  // it is plain: no whitespace, keys and strings without escapes, control bytes or non-ASCII,
  // values unsigned integers of at most 15 digits, such strings, or arrays of such integers
  // each at most array_max, the whole object within the next 4 KiB. Otherwise returns false
  // and consumes nothing, for the token-by-token calls (which give any message). The views
  // are valid until the next call on the stream. The values are those read_scalar gives.
  bool plain_object(PlainObject& out, std::uint64_t array_max);
  // Contract: skips (and fully validates) the next value of any kind and depth.
  void skip_value();
  // Contract: after the top-level value only whitespace may follow.
  void end_document();

  // A JSON syntax error at the current position: the TraceError nlohmann's parser gives for
  // the file, or this description if nlohmann would accept it.
  [[noreturn]] void syntax_error(const char* what);
  // A user error in a syntactically valid record. Like the DOM readers, a syntax error
  // anywhere in the file is reported first, so the rest of the file is checked before
  // `msg` is thrown.
  [[noreturn]] void semantic_error(const std::string& msg);

 private:
  bool more(std::size_t& keep);  // reads on, keeping bytes from `keep`; false at the end
  void ensure(std::size_t n);    // at least n bytes from pos_ if the file has them
  // Next non-whitespace byte, 0 at the end of the file.
  char peek_char() {
    if (pos_ < end_) {
      const char c = buf_[pos_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c;
    }
    return peek_char_slow();
  }
  char peek_char_slow();
  void expect(char c);
  void read_string(std::string_view& out);
  void read_string_slow(std::size_t start, std::string_view& out);
  void read_number(Scalar& out);
  void read_literal(const char* word, std::size_t len);

  std::string path_;
  const char* top_name_;
  std::FILE* file_ = nullptr;
  std::uint64_t file_bytes_ = 0;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0;
  std::uint64_t base_ = 0;  // file offset of buf_[0]
  bool eof_ = false;
  bool validated_ = false;  // the whole document was read without a syntax error
  std::string scratch_;     // strings with escapes, number tokens
};

// nlohmann's rendering of a value for messages, as json_brief() gives it: "an array",
// "an object", or the value's JSON (at most 40 characters, then "...").
std::string brief(const JsonStream::Scalar& v);
// A copy of a scalar whose string outlives the stream position.
struct HeldScalar {
  JsonStream::Kind kind = JsonStream::Kind::kNone;
  std::uint64_t u = 0;
  std::int64_t i = 0;
  double d = 0;
  std::string s;
  void hold(const JsonStream::Scalar& v) {
    kind = v.kind;
    u = v.u;
    i = v.i;
    d = v.d;
    if (v.kind == JsonStream::Kind::kString) s.assign(v.s.data(), v.s.size());
  }
  // A value that was an array or object (skipped).
  void hold_kind(JsonStream::Kind k) { kind = k; }
  bool present() const { return kind != JsonStream::Kind::kNone; }
  JsonStream::Scalar view() const {
    JsonStream::Scalar v;
    v.kind = kind;
    v.u = u;
    v.i = i;
    v.d = d;
    v.s = s;
    return v;
  }
};

// The known keys one object has given, a bit per field of the reader's own enum: a key given
// twice is refused ("duplicate key"), never "the last one counts" (a record saying two things
// would silently mean the second; the native reader refuses it too).
struct SeenKeys {
  std::uint32_t bits = 0;
  std::string repeated;  // the first known key given twice; empty: none
  void clear() {
    bits = 0;
    repeated.clear();
  }
  void add(unsigned field, std::string_view key) {
    const std::uint32_t b = std::uint32_t{1} << field;
    if ((bits & b) != 0 && repeated.empty()) repeated.assign(key.data(), key.size());
    bits |= b;
  }
  // ": duplicate key \"K\"" for messages; empty when no key repeated.
  std::string message() const {
    return repeated.empty() ? std::string() : ": duplicate key \"" + repeated + "\"";
  }
};

// json_uint()'s rules on a held value: "" when it is a non-negative integer at most `max`
// (stored in *out), else the message after the record's location (missing, wrong type, too
// large), exactly as the DOM readers worded it.
std::string check_uint(const HeldScalar& v, const char* key, std::uint64_t max, std::uint64_t* out);
// json_string()'s rules: "" for a string, else the message.
std::string check_string(const HeldScalar& v, const char* key);

// Contract: reads the next value into `slot`: a scalar, or only the kind of an array or
// object (skipped). `tmp` is scratch.
inline void read_held(JsonStream& js, HeldScalar& slot, JsonStream::Scalar& tmp) {
  const JsonStream::Kind kind = js.peek_kind();
  if (kind == JsonStream::Kind::kArray || kind == JsonStream::Kind::kObject) {
    js.skip_value();
    slot.hold_kind(kind);
  } else {
    js.read_scalar(tmp);
    slot.hold(tmp);
  }
}
// Contract: reads a taskId array (a "successors" value, peek_kind() kArray): the ids into
// `out` and "" into `bad`, or into `bad` the message for the first entry that is not one
// (check_uint's, under `key`), `out` holding the ids before it; the array is read to its end.
void read_id_array(JsonStream& js, const char* key, std::vector<std::uint32_t>& out,
                   std::string& bad, JsonStream::Scalar& tmp);

// One field's value as read_object hands it to a reader: from a plain object's scan or from
// the stream, the same values either way.
class FieldValue {
 public:
  FieldValue(JsonStream& js, JsonStream::Scalar& tmp) : js_(js), tmp_(tmp) {}
  // Contract: the value's kind (a number's is kUint until read, as peek_kind gives it).
  JsonStream::Kind kind() const { return plain_ ? plain_->kind : js_.peek_kind(); }
  // Contract: read_held's: the scalar into `slot`, or only the kind of an array or object.
  void hold(HeldScalar& slot) {
    if (!plain_) return read_held(js_, slot, tmp_);
    JsonStream::Scalar v;
    v.kind = plain_->kind;
    v.u = plain_->u;
    v.s = plain_->s;
    slot.hold(v);  // an array's kind alone (hold copies a string only)
  }
  // Contract: read_id_array's (kind() kArray). A plain array's ids are within range (the
  // scan's array_max), so `bad` is "".
  void ids(const char* key, std::vector<std::uint32_t>& out, std::string& bad) {
    if (!plain_) return read_id_array(js_, key, out, bad, tmp_);
    out.assign(numbers_->begin() + plain_->begin, numbers_->begin() + plain_->end);
    bad.clear();
  }
  // Contract: the value is not wanted.
  void skip() {
    if (!plain_) js_.skip_value();
  }

 private:
  template <class OnField>
  friend void read_object(JsonStream& js, JsonStream::PlainObject& plain, std::uint64_t array_max,
                          JsonStream::Scalar& tmp, OnField&& on_field);
  JsonStream& js_;
  JsonStream::Scalar& tmp_;
  const JsonStream::PlainField* plain_ = nullptr;
  const std::vector<std::uint64_t>* numbers_ = nullptr;
};

// Contract: reads the object at the stream (peek_kind() kObject), calling
// on_field(key, FieldValue&) for each key in file order, which takes the value once (hold,
// ids or skip). A plain object (JsonStream::plain_object, arrays up to array_max) is read in
// one scan, any other token by token; `plain` and `tmp` are scratch.
template <class OnField>
void read_object(JsonStream& js, JsonStream::PlainObject& plain, std::uint64_t array_max,
                 JsonStream::Scalar& tmp, OnField&& on_field) {
  FieldValue v(js, tmp);
  if (js.plain_object(plain, array_max)) {
    v.numbers_ = &plain.numbers;
    for (const JsonStream::PlainField& f : plain.fields) {
      v.plain_ = &f;
      on_field(f.key, v);
    }
    return;
  }
  js.begin_object();
  bool first = true;
  std::string_view key;
  while (js.next_key(first, key)) on_field(key, v);
}

}  // namespace pypto::trace::detail
