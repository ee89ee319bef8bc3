#pragma once
// Policy: given the run so far, the configuration a new trial should evaluate.

#include <cstdint>
#include <memory>

#include "lbo/jobs/space.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class Policy {
 public:
  virtual ~Policy() = default;
  /// A valid configuration of the job's space for new trial `trial` of `task`.
  virtual jobs::Config propose(const RunState& state, int task, std::int64_t trial) = 0;
};

/// Uniform sampling that respects `when` conditions. Trial t draws from its own stream,
/// seeded from (job seed, t), so proposals do not depend on the order results arrive in.
class RandomPolicy final : public Policy {
 public:
  RandomPolicy(jobs::Space space, std::uint64_t seed) : space_(std::move(space)), seed_(seed) {}
  jobs::Config propose(const RunState& state, int task, std::int64_t trial) override;

 private:
  jobs::Space space_;
  std::uint64_t seed_;
};

/// The policy the job's [policy] table asks for.
std::unique_ptr<Policy> make_policy(const jobs::JobSpec& job);

}  // namespace lbo::orchestrator
