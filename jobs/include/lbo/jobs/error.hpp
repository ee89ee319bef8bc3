#pragma once
// The exception root of lbo: every error lbo reports derives from lbo::Error (docs/architecture.md).

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace lbo {

/// Root of every error lbo raises on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad job file or command-line use: the message names the place and the fix; exit status 2.
class InputError : public Error {
 public:
  using Error::Error;
};

/// A damaged journal or checkpoint that cannot be recovered from.
class CorruptStateError : public Error {
 public:
  using Error::Error;
};

/// lbo's own I/O failed (its run directory, journal, checkpoint or a trial's files), not the
/// objective: disk full, read-only filesystem, quota, I/O error. The message names the path and
/// the system's reason. A run stops on it rather than charging trials for it.
class IoError : public Error {
 public:
  IoError(const std::string& what, int error_number) : Error(what), error_number_(error_number) {}
  int error_number() const { return error_number_; }
  /// Whether the condition may pass without a change to the run (space freed, filesystem
  /// remounted, quota raised, a storage hiccup): a run stopped by it resumes with the same
  /// command, so it exits 75.
  bool may_pass() const { return may_pass(error_number_); }
  static bool may_pass(int error_number) {
    switch (error_number) {
      case ENOSPC: case EDQUOT: case EROFS: case EIO: case ENOMEM: case EAGAIN: case EMFILE: case ENFILE:
      case ETIMEDOUT: case ESTALE: case EINTR: case EBUSY:
        return true;
      default:
        return false;
    }
  }

 private:
  int error_number_;
};

/// The system's reason for `error_number`, as strerror; but ELOOP, which lbo's opens with
/// O_NOFOLLOW give for a symbolic link, says so and what to do: lbo writes through no link
/// planted in its run directory (its lock, journal, results, a trial's files).
inline std::string system_reason(int error_number) {
  if (error_number == ELOOP) return "it is a symbolic link, and lbo writes through none in its run directory: remove the link";
  return std::strerror(error_number);
}

}  // namespace lbo
