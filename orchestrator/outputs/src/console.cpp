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

Console::Console(std::FILE* out) : out_(out), interactive_(::isatty(::fileno(out)) != 0) {}

void Console::log(std::string_view text) {
  if (interactive_ && !status_.empty()) std::fputs(kEraseLine, out_);
  std::fprintf(out_, "[%s] %.*s\n", timestamp().c_str(), static_cast<int>(text.size()), text.data());
  if (interactive_ && !status_.empty()) std::fputs(status_.c_str(), out_);
  std::fflush(out_);
}

void Console::status(std::string_view text) {
  if (!interactive_) {
    log(text);
    return;
  }
  status_ = std::string(text);
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
