#pragma once
// Which lbo this is: "0.1.0+<commit>" ("-dirty" when built from changed files), or "0.1.0"
// outside a git checkout. Written into the journal at every start and into reports.

#include <string_view>

namespace lbo::orchestrator {

std::string_view lbo_version();

}  // namespace lbo::orchestrator
