#pragma once
// What ended attempts left outside their process groups, looked for off the event loop
// (private to workers/).

#include <string>

namespace lbo::workers::detail {

/// A new LBO_ATTEMPT_ID: unique on this host while this process lives, and after (its pid).
std::string new_attempt_id();

/// Asks the sweeper's thread to kill what the attempt `attempt_id` (its LBO_ATTEMPT_ID) left
/// outside its process group; `what` names the attempt in the log line of a kill.
void sweep_escaped_later(std::string attempt_id, std::string what);

}  // namespace lbo::workers::detail
