// SPDX-License-Identifier: Apache-2.0
// Output files that are either complete or absent. Each is written to a temporary name in
// its destination folder (".<name>.tmp.<pid>", so the final rename is atomic on the same
// file system) and renamed over the final name only by commit(). A write error (disk full,
// read-only folder) or an exception before commit() leaves no file behind: the destructor
// removes the temporary. A destination that is a device or a pipe (/dev/null), or one of the
// process's open descriptors (/dev/stdout, /dev/stderr, /dev/fd/N, even when the shell
// redirected it to a file), is written in place; a symbolic link's target is the file
// replaced.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>

namespace pypto::common {

class OutputFile {
 public:
  // Opens the temporary file for `path`. Throws pypto::Error "cannot write <path>: <reason>"
  // if it cannot be created (missing or read-only folder, path is a directory).
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return f_; }
  const std::string& path() const { return path_; }
  // Written in place (a device, a pipe, an open descriptor): nothing is renamed.
  bool in_place() const { return direct_; }
  // A write has failed already (long writers ask every few thousand records, to stop early
  // instead of formatting the rest for a full disk; asking also keeps the reason).
  bool failed();

  // Flushes and closes the temporary. Throws pypto::Error "error while writing <path>
  // (<reason>)" if any write failed; the temporary is then removed. Idempotent.
  void finish();
  // finish(), then renames the temporary to path(). Throws pypto::Error if the rename fails.
  void commit();

 private:
  class Sink;  // the stream buffer over the file's descriptor (output_file.cpp)

  std::string path_, target_, tmp_;  // target_: path_ with a final link resolved
  std::unique_ptr<Sink> sink_;
  std::ostream f_;
  int slot_ = -1;        // register_temporary
  int err_ = 0;          // errno of the first failed write seen
  bool direct_ = false;  // path_ is a device or pipe: written in place, never renamed
  bool finished_ = false, committed_ = false;
  void discard() noexcept;
};

// Runs write(), which fills the files' streams; a writer that stops on a failed stream
// (with its own, pathless error) ends with the failed file's own error instead: "error while
// writing <path> (<reason>); nothing written".
template <class Write>
void write_files(std::initializer_list<OutputFile*> files, Write&& write) {
  try {
    write();
  } catch (...) {
    for (OutputFile* f : files) {
      if (f != nullptr && f->failed()) f->finish();  // throws, naming the file
    }
    throw;
  }
}

}  // namespace pypto::common
