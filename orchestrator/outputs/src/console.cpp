#include "lbo/orchestrator/console.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>

namespace lbo::orchestrator {

namespace {

std::string timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", &local);
  return text;
}

constexpr const char* kEraseLine = "\r\033[K";

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

}  // namespace

Console::Console(std::FILE* out) : out_(out), interactive_(::isatty(::fileno(out)) != 0) {}

void Console::log(std::string_view text) {
  if (interactive_ && !status_.empty()) std::fputs(kEraseLine, out_);
  const std::string line = printable(text);
  std::fprintf(out_, "[%s] %s\n", timestamp().c_str(), line.c_str());
  if (interactive_ && !status_.empty()) std::fputs(status_.c_str(), out_);
  std::fflush(out_);
}

void Console::status(std::string_view text) {
  if (!interactive_) {
    log(text);
    return;
  }
  status_ = printable(text);
  std::fputs(kEraseLine, out_);
  std::fputs(status_.c_str(), out_);
  std::fflush(out_);
}

void Console::clear_status() {
  if (interactive_ && !status_.empty()) {
    std::fputs(kEraseLine, out_);
    std::fflush(out_);
  }
  status_.clear();
}

}  // namespace lbo::orchestrator
