// SPDX-License-Identifier: Apache-2.0
#include "pypto/common/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <streambuf>

#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"

namespace pypto::common {
namespace {

std::string temporary_name(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string name = "." + p.filename().string() + ".tmp." + std::to_string(::getpid());
  return p.has_parent_path() ? (p.parent_path() / name).string() : name;
}

std::string reason(int err) {
  return err != 0 ? std::strerror(err) : "write failed: disk full or I/O error";
}

// Opens `path` for writing as std::ofstream would (created with 0666 less the umask,
// truncated); -1 with errno set on failure.
int open_for_writing(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// The descriptor a path names when it is one of the process's own open files
// (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), else -1. Such a path may lead to a
// regular file (`> out.txt`): no rename can replace what the shell opened, and reopening it
// would truncate it and ignore `>>`; the descriptor itself is written.
int descriptor_of(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::size_t n = std::strlen(prefix);
    if (path.compare(0, n, prefix) != 0 || path.size() == n || path.size() > n + 6) continue;
    if (path.find_first_not_of("0123456789", n) != std::string::npos) return -1;
    return std::stoi(path.substr(n));
  }
  return -1;
}

}  // namespace

// A stream buffer that writes to a descriptor with write(2) and keeps the errno of the first
// failure.
// Small pieces (nlohmann's dump, `<<`) gather in a 64 KiB buffer; large ones (the report
// writers hand over 1 MiB at a time) go straight to the file.
class OutputFile::Sink : public std::streambuf {
 public:
  explicit Sink(int fd) : fd_(fd), buf_(new char[kBufferBytes]) {
    setp(buf_.get(), buf_.get() + kBufferBytes);
  }
  ~Sink() override {
    if (fd_ >= 0) ::close(fd_);
  }

  // errno of the first failed write or close; 0 if none failed.
  int error() const { return err_; }

  // Contract: writes out what is buffered and closes the descriptor; false (error() says
  // why) if a write or the close failed. Idempotent.
  bool close() {
    const bool drained = drain();
    if (fd_ >= 0) {
      // A failed close can report a write that failed late (NFS, quotas); EINTR leaves the
      // descriptor closed on Linux.
      if (::close(fd_) != 0 && errno != EINTR && err_ == 0) err_ = errno;
      fd_ = -1;
    }
    return drained && err_ == 0;
  }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
    return c;
  }

  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const auto room = epptr() - pptr();
    if (n <= room) {
      std::memcpy(pptr(), s, static_cast<std::size_t>(n));
      pbump(static_cast<int>(n));
      return n;
    }
    if (!drain()) return 0;
    if (n >= static_cast<std::streamsize>(kBufferBytes)) {
      return write_all(s, static_cast<std::size_t>(n)) ? n : 0;
    }
    std::memcpy(pptr(), s, static_cast<std::size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }

  int sync() override { return drain() ? 0 : -1; }

 private:
  static constexpr std::size_t kBufferBytes = 64 * 1024;

  bool drain() {
    const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
    setp(buf_.get(), buf_.get() + kBufferBytes);
    return n == 0 || write_all(buf_.get(), n);
  }

  bool write_all(const char* p, std::size_t n) {
    if (err_ != 0 || fd_ < 0) return false;
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        err_ = errno;
        return false;
      }
      if (w == 0) {  // no progress and no errno: report it as a full device
        err_ = ENOSPC;
        return false;
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }

  int fd_;
  int err_ = 0;
  std::unique_ptr<char[]> buf_;
};

OutputFile::OutputFile(std::string path) : path_(std::move(path)), f_(nullptr) {
  namespace fs = std::filesystem;
  if (const int own = descriptor_of(path_); own >= 0) {
    direct_ = true;
    const int fd = ::fcntl(own, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) throw Error("cannot write " + path_ + ": " + reason(errno));
    sink_ = std::make_unique<Sink>(fd);
    f_.rdbuf(sink_.get());
    return;
  }
  std::error_code ec;
  const fs::file_status st = fs::status(path_, ec);  // follows links
  if (fs::is_directory(st)) throw Error("cannot write " + path_ + ": it is a directory");
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    // A device, pipe or terminal (/dev/null, /dev/stdout): no rename can replace it, and no
    // partial state can be taken back; write to it directly.
    direct_ = true;
    const int fd = open_for_writing(path_);
    if (fd < 0) throw Error("cannot write " + path_ + ": " + reason(errno));
    sink_ = std::make_unique<Sink>(fd);
    f_.rdbuf(sink_.get());
    return;
  }
  // Through a link, the file it names is the one replaced (the link stays).
  target_ = path_;
  if (fs::is_symlink(fs::symlink_status(path_, ec))) {
    const fs::path to = fs::read_symlink(path_, ec);
    if (!ec) target_ = (to.is_absolute() ? to : fs::path(path_).parent_path() / to).string();
  }
  tmp_ = temporary_name(target_);
  slot_ = register_temporary(tmp_);
  const int fd = open_for_writing(tmp_);
  if (fd < 0) {
    const int err = errno;
    unregister_temporary(slot_);
    slot_ = -1;
    throw Error("cannot write " + path_ + ": " + reason(err));
  }
  sink_ = std::make_unique<Sink>(fd);
  f_.rdbuf(sink_.get());
}

OutputFile::~OutputFile() {
  if (!committed_) discard();
}

void OutputFile::discard() noexcept {
  if (sink_) sink_->close();
  if (!direct_) ::unlink(tmp_.c_str());
  unregister_temporary(slot_);
  slot_ = -1;
}

bool OutputFile::failed() {
  if (!f_.good() && err_ == 0) err_ = sink_->error();
  return !f_.good();
}

void OutputFile::finish() {
  if (finished_) return;
  f_.flush();
  const bool closed = sink_->close();
  if (err_ == 0) err_ = sink_->error();
  if (!f_.good() || !closed) {
    discard();
    throw Error("error while writing " + path_ + " (" + reason(err_) + "); nothing written");
  }
  finished_ = true;
}

void OutputFile::commit() {
  if (committed_) return;
  finish();
  if (!direct_ && std::rename(tmp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    discard();
    throw Error("cannot write " + path_ + ": " + reason(err));
  }
  committed_ = true;
  unregister_temporary(slot_);
  slot_ = -1;
}

}  // namespace pypto::common
