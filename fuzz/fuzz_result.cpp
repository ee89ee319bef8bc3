// Fuzzes the objective-result parser, which reads what an objective printed: it never throws,
// and a result it accepts holds only finite numbers and a metrics object.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "lbo/jobs/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)lbo::jobs::looks_like_json_object(text);
  const lbo::jobs::ParsedResult parsed = lbo::jobs::parse_objective_result(text);
  if (parsed.result.has_value() == !parsed.error.empty()) std::abort();  // exactly one of the two
  if (parsed.result) {
    if (!std::isfinite(parsed.result->objective)) std::abort();
    for (const double step : parsed.result->steps) {
      if (!std::isfinite(step)) std::abort();
    }
    if (parsed.result->metrics_json.empty() || parsed.result->metrics_json.front() != '{') std::abort();
  }
  return 0;
}
