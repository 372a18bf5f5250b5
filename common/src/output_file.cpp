// SPDX-License-Identifier: Apache-2.0
#include "pypto/common/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"

namespace pypto {
namespace {

std::string temporary_name(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string name = "." + p.filename().string() + ".tmp." + std::to_string(::getpid());
  return p.has_parent_path() ? (p.parent_path() / name).string() : name;
}

std::string reason(int err) {
  return err != 0 ? std::strerror(err) : "write failed: disk full or I/O error";
}

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path_, ec);  // follows links
  if (fs::is_directory(st)) throw Error("cannot write " + path_ + ": it is a directory");
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    // A device, pipe or terminal (/dev/null, /dev/stdout): no rename can replace it, and no
    // partial state can be taken back; write to it directly.
    direct_ = true;
    errno = 0;
    f_.open(path_, std::ios::binary);
    if (!f_) throw Error("cannot write " + path_ + ": " + reason(errno));
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
  errno = 0;
  f_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!f_) {
    const int err = errno;
    unregister_temporary(slot_);
    slot_ = -1;
    throw Error("cannot write " + path_ + ": " + reason(err));
  }
}

OutputFile::~OutputFile() {
  if (!committed_) discard();
}

void OutputFile::discard() noexcept {
  if (f_.is_open()) f_.close();
  if (!direct_) ::unlink(tmp_.c_str());
  unregister_temporary(slot_);
  slot_ = -1;
}

bool OutputFile::failed() {
  // errno right after the failing write names the cause (ENOSPC, EIO, EFBIG).
  if (!f_.good() && err_ == 0) err_ = errno;
  return !f_.good();
}

void OutputFile::finish() {
  if (finished_) return;
  if (f_.good()) {
    errno = 0;
    f_.flush();
    if (!f_.good()) err_ = errno;
  } else {
    failed();  // the reason, if no writer asked yet
  }
  const bool ok_before_close = f_.good();
  f_.close();
  if (ok_before_close && !f_ && err_ == 0) err_ = errno;
  if (!ok_before_close || !f_) {
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

}  // namespace pypto
