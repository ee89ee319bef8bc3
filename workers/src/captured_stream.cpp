#include "captured_stream.hpp"

#include <algorithm>

#include "lbo/jobs/protocol.hpp"

namespace lbo::workers::detail {

void CapturedStream::consume(const char* data, std::size_t n) {
  const std::size_t room = limit_ - std::min(limit_, written_);
  const std::size_t kept = std::min(room, n);
  if (kept > 0) {
    if (write_all(file_.get(), data, kept)) {
      written_ += kept;
    } else if (write_error_ == 0) {
      write_error_ = errno;
    }
  }
  if (kept < n) {
    if (dropped_ == 0) {
      const std::string marker =
          "\n[lbo: output limit of " + std::to_string(limit_) + " bytes reached; the rest is dropped]\n";
      write_all(file_.get(), marker.data(), marker.size());
    }
    dropped_ += n - kept;
  }
  if (keep_ == Keep::json_lines) {
    track_json_lines(std::string_view(data, n));
  } else {
    constexpr std::size_t kTail = 4096;
    tail_.append(data, n);
    if (tail_.size() > 2 * kTail) tail_.erase(0, tail_.size() - kTail);
  }
}

// Keeps the last complete line that looks like a JSON object, even past the output limit, so a
// chatty objective's final result is still found.
void CapturedStream::track_json_lines(std::string_view data) {
  constexpr std::size_t kMaxLine = 16u << 20;
  while (!data.empty()) {
    const std::size_t newline = data.find('\n');
    const std::string_view piece = data.substr(0, newline);
    if (partial_line_.size() + piece.size() <= kMaxLine) partial_line_.append(piece);
    if (newline == std::string_view::npos) return;
    if (jobs::looks_like_json_object(partial_line_)) {
      last_json_line_ = partial_line_;
    } else if (on_report_line_ && std::string_view(partial_line_).starts_with(jobs::kReportPrefix)) {
      on_report_line_(std::string_view(partial_line_).substr(jobs::kReportPrefix.size()));
    }
    partial_line_.clear();
    data.remove_prefix(newline + 1);
  }
}

std::string CapturedStream::last_json_line() const {
  // The final line may lack its newline.
  if (jobs::looks_like_json_object(partial_line_)) return partial_line_;
  return last_json_line_;
}

std::string CapturedStream::last_line(std::size_t max_length) const {
  std::string_view text = tail_;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  const std::size_t start = text.rfind('\n');
  std::string_view line = start == std::string_view::npos ? text : text.substr(start + 1);
  if (line.size() > max_length) return std::string(line.substr(0, max_length)) + "...";
  return std::string(line);
}

}  // namespace lbo::workers::detail
