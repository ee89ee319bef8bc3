#include "lbo/orchestrator/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "lbo/jobs/error.hpp"

namespace fs = std::filesystem;

namespace lbo::orchestrator {

namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& path, int error_number = errno) {
  throw IoError(path.string() + ": " + what + ": " + system_reason(error_number), error_number);
}

// A descriptor closed on every path; close() reports the error a network filesystem may only
// give there. A file opened to be written is never a symbolic link (O_NOFOLLOW): a link planted
// in the run directory would have lbo write wherever it points.
int open_flags(int flags) {
  const bool writes = (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0;
  return flags | O_CLOEXEC | (writes ? O_NOFOLLOW : 0);
}

class File {
 public:
  File(const fs::path& path, int flags, mode_t mode = 0644) : path_(path), fd_(::open(path.c_str(), open_flags(flags), mode)) {
    if (fd_ < 0) fail(flags & O_CREAT ? "cannot create" : "cannot open", path_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }

  void write_all(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot write", path_);
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void sync() {
    if (::fsync(fd_) != 0) fail("cannot fsync", path_);
  }
  void close() {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0 && errno != EINTR) fail("cannot write (close)", path_);
  }

 private:
  fs::path path_;
  int fd_;
};

}  // namespace

void write_file_atomically(const fs::path& path, std::string_view bytes, Durability durability) {
  const fs::path temporary = path.string() + ".tmp";
  try {
    File file(temporary, O_WRONLY | O_CREAT | O_TRUNC);
    file.write_all(bytes);
    if (durability == Durability::synced) file.sync();
    file.close();
  } catch (const IoError&) {
    ::unlink(temporary.c_str());  // a partial temporary file helps no one and holds disk space
    throw;
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error_number = errno;
    ::unlink(temporary.c_str());
    fail("cannot rename " + temporary.filename().string() + " to it", path, error_number);
  }
  if (durability == Durability::synced) sync_directory(path.parent_path().empty() ? fs::path(".") : path.parent_path());
}

void sync_directory(const fs::path& dir) {
  File folder(dir, O_RDONLY | O_DIRECTORY);
  folder.sync();
}

void copy_file_synced(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::copy_file(from, to, fs::copy_options::none, ec)) {
    throw IoError(to.string() + ": cannot copy " + from.string() + " there: " + ec.message(), ec.value());
  }
  File copy(to, O_RDONLY);
  copy.sync();
  sync_directory(to.parent_path());
}

std::string not_a_regular_file(const std::filesystem::path& path) {
  std::error_code ec;
  switch (std::filesystem::status(path, ec).type()) {
    case std::filesystem::file_type::directory: return "a folder";
    case std::filesystem::file_type::fifo: return "a FIFO";
    case std::filesystem::file_type::socket: return "a socket";
    case std::filesystem::file_type::block:
    case std::filesystem::file_type::character: return "a device";
    case std::filesystem::file_type::unknown: return "not a regular file";
    default: return "";
  }
}

}  // namespace lbo::orchestrator
