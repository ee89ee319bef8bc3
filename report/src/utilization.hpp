#pragma once
// How busy a run kept its slots (private to report/).

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "history.hpp"

namespace lbo::report {

/// Slot time of one group of slots (the local slots, or one MPI worker rank).
struct SlotGroupUse {
  std::string group;  ///< "local", "rank1", ...
  int slots = 0;      ///< the most slots of the group seen running attempts in one allocation
  double busy_s = 0;
  double available_s = 0;
};

/// An allocation lasts from its RunStarted record to the last record written in it, so the
/// time between a stop and the next start is never counted (a no-op `lbo run` of a finished
/// run adds an allocation of no length). An attempt is busy from its start to its end (one still
/// running: to the run's last activity; one its allocation's end cut off: to that allocation's
/// last record), within its allocation.
struct Utilization {
  double busy_s = 0;       ///< attempt time, summed over attempts
  double available_s = 0;  ///< slots × length, summed over allocations
  double wall_s = 0;       ///< allocation lengths, summed
  std::vector<double> allocation_end;     ///< per allocation: its last record's time
  std::vector<double> allocation_busy_s;  ///< per allocation: attempt time in it
  std::vector<SlotGroupUse> groups;       ///< per group of slots, in name order
};

Utilization utilization(const History& history, bool running);

/// {"busy", "available", "share" (null without slot time), "wall", "ranks": [{"rank", "slots",
/// "busy", "available"}]} in seconds.
nlohmann::json utilization_json(const Utilization& use);

}  // namespace lbo::report
