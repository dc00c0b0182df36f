#include "support/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace autotune {

namespace {

std::string KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "not a regular file (a FIFO)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "not a regular file (a device)";
  if (S_ISSOCK(mode)) return "not a regular file (a socket)";
  return "not a regular file";
}

// The errno of a failed open in a user's words (strerror's "No such file or directory" reads as a
// sentence fragment).
std::string WhyNotOpened(int err) {
  switch (err) {
    case ENOENT: return "no such file";
    case EACCES:
    case EPERM: return "permission denied";
    case ENOTDIR: return "a part of the path is not a directory";
    default: return std::strerror(err);
  }
}

std::string Size(int64_t bytes) {
  if (bytes >= kMiB) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// An open descriptor of a checked regular file; O_NONBLOCK so that opening a FIFO does not wait for
// a writer (the check refuses it right after).
Result<int> OpenChecked(const std::string& path, int64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return MakeError(WhyNotOpened(errno));
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = KindOf(st.st_mode);
  } else if (st.st_size > max_bytes) {
    why = "too large (" + Size(st.st_size) + ", over the limit of " + Size(max_bytes) + ")";
  }
  if (!why.empty()) {
    ::close(fd);
    return MakeError(why);
  }
  return fd;
}

}  // namespace

Result<void> CheckInputFile(const std::string& path, int64_t max_bytes) {
  auto fd = OpenChecked(path, max_bytes);
  if (!fd) return fd.error();
  ::close(*fd);
  return {};
}

Result<std::string> ReadInputFile(const std::string& path, int64_t max_bytes) {
  auto fd = OpenChecked(path, max_bytes);
  if (!fd) return fd.error();
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(*fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(*fd);
      return MakeError(why);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    // The file may have grown since the check.
    if (static_cast<int64_t>(text.size()) > max_bytes) {
      ::close(*fd);
      return MakeError("too large (over the limit of " + Size(max_bytes) + ")");
    }
  }
  ::close(*fd);
  return text;
}

}  // namespace autotune
