#pragma once
// A new trial as a policy proposes it, and how its configuration was chosen (results.csv's
// proposed_by): the record that tells a user where the model took over, and every place it
// did not.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lbo/jobs/space.hpp"

namespace lbo::orchestrator {

/// How a trial's configuration was chosen. Persisted as its number: new values go at the end.
enum class ProposalSource : std::uint8_t {
  unrecorded,       ///< a trial journaled before lbo recorded this
  initial,          ///< the task's initial random design ([policy] initial_random)
  random,           ///< the job asks for random search (surrogate = "random")
  model,            ///< the acquisition's maximizer under the task's own fitted model
  model_prior,      ///< from what earlier tasks taught, before the task has a fit of its own
  random_fallback,  ///< random although the job asks for a model; the note says why
  earlier_best,     ///< the best configuration of an earlier task ([policy] transfer_best)
  /// a plain GP on the task's own results, while the job's model has no fit that covers them
  /// (its fit is under way, or a wave of results came after it); the note says which
  interim_gp,
};
inline constexpr std::size_t kProposalSources = 8;

/// "initial", "random", "model", "model-prior", "random-fallback", "earlier-best",
/// "interim-gp" ("" when unrecorded).
std::string_view to_string(ProposalSource source);

/// A new trial: which task it serves, what it evaluates, and how that was chosen.
struct Proposal {
  int task = 0;
  jobs::Config config;
  ProposalSource source = ProposalSource::model;
  std::string note;  ///< why, for a random fallback; what, for a model-prior or interim-gp one
};

}  // namespace lbo::orchestrator
