#pragma once
// HedgePortfolios: GP-Hedge (Hoffman, Brochu and de Freitas 2011) for each run model task: the
// gains of its acquisition functions, the nominees each one proposed since the last fit (whose
// new posterior mean is their reward), and the Hedge memory across tasks. Private to policy/.

#include <Eigen/Core>
#include <array>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "lbo/orchestrator/policy_state.hpp"
#include "lbo/surrogate/acquisition.hpp"
#include "lbo/surrogate/hedge.hpp"
#include "lbo/surrogate/posterior.hpp"

namespace lbo::orchestrator {

class HedgePortfolios {
 public:
  /// The portfolio, in arm order.
  static constexpr std::array<surrogate::AcquisitionKind, 3> kArms = {
      surrogate::AcquisitionKind::ucb, surrogate::AcquisitionKind::ei, surrogate::AcquisitionKind::pi};
  /// Each arm's maximizer at one draw.
  using Nominees = std::array<Eigen::VectorXd, kArms.size()>;
  using Log = std::function<void(const std::string&)>;

  /// `eta`: GP-Hedge's learning rate; `memory`: [policy] hedge_memory.
  HedgePortfolios(double eta, double memory) : eta_(eta), memory_(memory) {}

  /// Portfolios for `slots` run model tasks (they only grow).
  void track(std::size_t slots);
  /// The arm slot `k` (task `task`'s `step`) uses, drawn from its gains by `rng`; at its first
  /// draw the gains start from the latest earlier task's (the Hedge memory). `name(task)`: the
  /// task's `step` for the log.
  std::size_t draw(std::size_t k, int task, int step, int steps, std::mt19937_64& rng,
                   const std::function<std::string(int task)>& name, const Log& log);
  std::vector<double> probabilities(std::size_t k) const { return hedges_[k].probabilities(); }
  /// Each arm's maximizer at slot `k`'s latest draw; rewarded at the next fit.
  void nominated(std::size_t k, Nominees points) { nominees_[k].push_back(std::move(points)); }
  /// The latest draw's nominees are dropped (the draw is made again).
  void withdraw_last(std::size_t k) { nominees_[k].pop_back(); }
  /// A new fit: each arm gains the posterior mean (`posterior_of(k)`, null: none) at the
  /// nominees it proposed since the last one.
  void reward(const std::function<std::shared_ptr<const surrogate::TaskPosterior>(std::size_t)>& posterior_of);

  /// Slot `k`'s gains; a fresh portfolio's beyond the tracked slots.
  std::vector<double> gains(std::size_t k) const;
  std::vector<HedgeState> save() const;
  void restore(const std::vector<HedgeState>& saved);

 private:
  double eta_ = 1, memory_ = 0;
  std::vector<surrogate::GpHedge> hedges_;
  std::vector<bool> seeded_;  // per slot: its first draw happened
  std::vector<std::vector<Nominees>> nominees_;
};

}  // namespace lbo::orchestrator
