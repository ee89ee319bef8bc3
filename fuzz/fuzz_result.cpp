// Fuzzes the objective-result parser, which reads what an objective printed: it never throws,
// and a result it accepts holds only finite numbers and a metrics object.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "lbo/jobs/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)lbo::jobs::looks_like_json_object(text);
  // One objective, and two by name ([objective] objectives): each value given, finite.
  const std::vector<std::string> two = {"auc", "train_s"};
  for (const std::vector<std::string>* names : {static_cast<const std::vector<std::string>*>(nullptr), &two}) {
    const lbo::jobs::ParsedResult parsed = names ? lbo::jobs::parse_objective_result(text, *names) : lbo::jobs::parse_objective_result(text);
    if (parsed.result.has_value() == !parsed.error.empty()) std::abort();  // exactly one of the two
    if (!parsed.result) continue;
    if (!std::isfinite(parsed.result->objective)) std::abort();
    if (parsed.result->values.size() != (names ? names->size() : 0)) std::abort();
    for (const double v : parsed.result->values) {
      if (!std::isfinite(v)) std::abort();
    }
    for (const double step : parsed.result->steps) {
      if (!std::isfinite(step)) std::abort();
    }
    if (parsed.result->metrics_json.empty() || parsed.result->metrics_json.front() != '{') std::abort();
  }
  return 0;
}
