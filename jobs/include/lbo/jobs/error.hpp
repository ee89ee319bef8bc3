#pragma once
// The exception root of lbo (STYLE.md, "Errors").

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

}  // namespace lbo
