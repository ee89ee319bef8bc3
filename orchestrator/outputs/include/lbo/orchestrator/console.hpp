#pragma once
// Console: what the master tells people on stderr. On a terminal, one status line redrawn in
// place under the log lines; otherwise plain timestamped lines (batch logs stay readable).
// Hand-written: loggers (spdlog) write lines but do not keep a live status line below them.

#include <cstdio>
#include <string>
#include <string_view>

namespace lbo::orchestrator {

/// `text` with every control character written as an escape (\n, \r, \t, \x1b, ...): a file
/// name, a task name or an objective's message cannot start a log line of its own or move the
/// terminal's cursor. Console escapes every line it writes.
std::string printable(std::string_view text);

class Console {
 public:
  explicit Console(std::FILE* out = stderr);
  /// Whether the stream is a terminal (status lines are redrawn in place).
  bool interactive() const { return interactive_; }

  /// A timestamped line: "[12:01:05] text", with `text` printable.
  void log(std::string_view text);
  void warn(std::string_view text) { log("warning: " + std::string(text)); }
  /// Terminal: redraws the status line. Otherwise logs it as a plain line.
  void status(std::string_view text);
  /// Terminal: erases the status line (before the program's last words).
  void clear_status();

 private:
  std::FILE* out_;
  bool interactive_;
  std::string status_;
};

}  // namespace lbo::orchestrator
