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
  if (file_ == nullptr) file_ = open_for_appending(path_, kHeader);
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
