#include "lbo/orchestrator/hedge_csv.hpp"

#include <cerrno>
#include <cstring>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/results_csv.hpp"

namespace lbo::orchestrator {

HedgeCsv::~HedgeCsv() {
  if (file_ != nullptr) std::fclose(file_);
}

void HedgeCsv::append(const HedgeDraw& draw) {
  if (file_ == nullptr) {
    std::error_code ec;
    const bool fresh = !std::filesystem::exists(path_, ec) || std::filesystem::file_size(path_, ec) == 0;
    file_ = std::fopen(path_.c_str(), "a");
    if (file_ == nullptr) throw IoError(path_.string() + ": cannot write: " + std::strerror(errno), errno);
    if (fresh) std::fputs(kHeader, file_);
  }
  for (std::size_t i = 0; i < draw.options.size(); ++i) {
    const double p = i < draw.probabilities.size() ? draw.probabilities[i] : 0.0;
    std::fprintf(file_, "%lld,%s,%s,%s,%.6g,%d\n", static_cast<long long>(draw.trial), draw.over.c_str(),
                 csv_field(draw.task).c_str(), csv_field(draw.options[i]).c_str(), p, i == draw.chosen ? 1 : 0);
  }
}

void HedgeCsv::flush() {
  if (file_ != nullptr && std::fflush(file_) != 0) {
    throw IoError(path_.string() + ": cannot write: " + std::strerror(errno), errno);
  }
}

}  // namespace lbo::orchestrator
