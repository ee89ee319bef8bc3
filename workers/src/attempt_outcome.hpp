#pragma once
// What an ended attempt's outcome is, from how it ended and what it wrote (private to workers/).

#include <cstdint>
#include <string>

#include "captured_stream.hpp"
#include "lbo/workers/work_order.hpp"

namespace lbo::workers::detail {

/// Why lbo stopped an attempt, if it did.
enum class Stop : std::uint8_t { none, timeout, cancel };

/// How an attempt ended.
struct AttemptEnd {
  const WorkOrder& order;
  std::string start_error;  ///< non-empty: it never started, for this reason
  int start_error_number = 0;  ///< with start_error: lbo's own errno (0: the command is at fault)
  std::string start_error_path;
  Stop stop = Stop::none;
  int wait_status = 0;  ///< of the reaped leader
  const CapturedStream& out;
  const CapturedStream& err;
};

/// ok with the parsed result (from result.json, else the last JSON line of stdout), or failed,
/// timeout, crashed, cancelled or lbo_error with a reason. A failure while lbo itself could not
/// write the trial's output files (a full disk) is lbo's error, never charged to the trial.
Outcome outcome_of(const AttemptEnd& end);

}  // namespace lbo::workers::detail
