#pragma once
// What a checkpoint keeps of a policy (policy/), so that a resumed run continues where it
// stopped: the surrogate's fitted state and GP-Hedge's memory. Persisted, so it lives with the
// store; the policy reads and writes it.

#include <cstdint>
#include <string>
#include <vector>

#include "lbo/surrogate/state.hpp"

namespace lbo::orchestrator {

/// GP-Hedge's memory for one task: the arms' gains, and the nominees proposed since the last fit
/// (each one point per arm, encoded), which the next fit rewards.
struct HedgeState {
  std::vector<double> gains;
  std::vector<std::vector<std::vector<double>>> nominees;
  bool seeded = false;  ///< its first draw happened: Hedge memory seeded its gains then

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(gains, nominees);
    if (version >= 2) archive(seeded);
  }
};

/// One run model task as the fit a policy proposes from saw it. The trials of a checkpoint may
/// say otherwise by then (a paused trial promoted and running, one a kill cancelled, the results
/// of the round after the fit), so the model is rebuilt on these: it proposes as that fit did.
struct FittedTask {
  std::vector<std::int64_t> rows;    ///< the trials of its rows, in order (what max_fit_results kept)
  std::vector<double> values;        ///< their values as fitted: oriented, scalarized, warped
  std::vector<std::int64_t> usable;  ///< every trial it could learn from then, ascending
  bool finished = false;             ///< its budget was spent then

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(rows, values, usable, finished);
  }
};

/// What a checkpoint keeps of a policy, so a resumed run continues where it stopped.
struct PolicyState {
  surrogate::SurrogateState surrogate;
  std::vector<HedgeState> hedge;           ///< per task; empty unless acquisition = "hedge"
  std::int64_t fitted_observations = -1;  ///< observations of the last fit; -1 before the first
  std::vector<std::string> warm_sources;  ///< the warm-start tasks the model put first
  int steps = 1;                          ///< model tasks per run task (stepwise objectives)
  std::vector<FittedTask> fitted;         ///< per run model task of the last fit; empty before version 4

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(surrogate, hedge, fitted_observations);
    if (version >= 2) archive(warm_sources);
    if (version >= 3) archive(steps);
    if (version >= 4) archive(fitted);
  }
};

}  // namespace lbo::orchestrator
