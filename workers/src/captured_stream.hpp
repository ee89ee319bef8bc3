#pragma once
// What an attempt's child writes to stdout or stderr (private to workers/): kept in a capped
// file in the trial's folder, and the parts lbo reads itself.

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "unique_fd.hpp"

namespace lbo::workers::detail {

class CapturedStream {
 public:
  /// What lbo keeps of the stream beside the file.
  enum class Keep : std::uint8_t {
    json_lines,  ///< stdout: the last line that looks like a JSON object (the result)
    tail,        ///< stderr: the last few KiB (the failure's reason)
  };

  CapturedStream(std::size_t limit_bytes, Keep keep) : limit_(limit_bytes), keep_(keep) {}

  /// stdout: hears the text after jobs::kReportPrefix of every complete line that starts with it
  /// (an intermediate report), as the line is read.
  using ReportLineHandler = std::function<void(std::string_view)>;
  void on_report_line(ReportLineHandler handler) { on_report_line_ = std::move(handler); }

  /// The file the stream goes to (truncated by the caller).
  void attach(UniqueFd file) { file_ = std::move(file); }
  void close_file() { file_.reset(); }

  /// Where the next read goes; consume() takes the bytes read.
  std::array<char, 65536>& buffer() { return buffer_; }
  /// Writes up to the limit (a marker says where the rest was dropped) and keeps what lbo reads.
  void consume(const char* data, std::size_t n);

  bool eof = false;
  /// errno of the first failed write to the file (0: none).
  int write_error() const { return write_error_; }
  /// stdout: the last complete line that looks like a JSON object, or the final line when it
  /// lacks its newline and looks like one; empty if none.
  std::string last_json_line() const;
  /// stderr: its last non-empty line, cut to `max_length` characters.
  std::string last_line(std::size_t max_length) const;

 private:
  void track_json_lines(std::string_view data);

  std::size_t limit_;
  Keep keep_;
  UniqueFd file_;
  std::size_t written_ = 0;  // bytes in the file
  std::size_t dropped_ = 0;  // bytes beyond the limit
  int write_error_ = 0;
  std::string partial_line_;  // stdout: the line being read
  std::string last_json_line_;
  std::string tail_;
  ReportLineHandler on_report_line_;
  std::array<char, 65536> buffer_{};
};

}  // namespace lbo::workers::detail
