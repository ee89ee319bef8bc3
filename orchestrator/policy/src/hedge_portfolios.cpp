#include "hedge_portfolios.hpp"

#include <algorithm>

#include "models/models.hpp"

namespace lbo::orchestrator {

void HedgePortfolios::track(std::size_t slots) {
  while (hedges_.size() < slots) hedges_.emplace_back(static_cast<int>(kArms.size()), eta_);
  seeded_.resize(std::max(seeded_.size(), slots), false);
  nominees_.resize(std::max(nominees_.size(), slots));
}

// Hedge memory: at a task's (step's) first draw its gains start at hedge_memory × those of the
// latest earlier task that has drawn (the same step), so a portfolio that learned which
// acquisition pays on this family starts the next task knowing it, and forgets it as the
// task's own rewards come in.
std::size_t HedgePortfolios::draw(std::size_t k, int task, int step, int steps, std::mt19937_64& rng,
                                  const std::function<std::string(int task)>& name, const Log& log) {
  if (!seeded_[k]) {
    seeded_[k] = true;
    for (int earlier = task - 1; memory_ > 0 && earlier >= 0; --earlier) {
      const std::size_t j = static_cast<std::size_t>(earlier) * static_cast<std::size_t>(steps) + static_cast<std::size_t>(step);
      if (!seeded_[j]) continue;
      std::vector<double> seed = hedges_[j].gains();
      for (double& g : seed) g *= memory_;
      hedges_[k].reward(seed);
      if (log) {
        std::string line = name(task) + ": GP-Hedge gains start at hedge_memory " + models::format_number(memory_) + " x " +
                           name(earlier) + "'s:";
        for (std::size_t a = 0; a < kArms.size(); ++a) {
          line += std::string(a ? "," : "") + " " + std::string(surrogate::to_string(kArms[a])) + " " +
                  models::format_number(seed[a]);
        }
        log(line);
      }
      break;
    }
  }
  return static_cast<std::size_t>(hedges_[k].choose(rng));
}

void HedgePortfolios::reward(
    const std::function<std::shared_ptr<const surrogate::TaskPosterior>(std::size_t)>& posterior_of) {
  for (std::size_t k = 0; k < nominees_.size(); ++k) {
    if (const auto posterior = posterior_of(k)) {
      for (const Nominees& arms : nominees_[k]) {
        Eigen::MatrixXd X(static_cast<Eigen::Index>(kArms.size()), arms[0].size());
        for (std::size_t a = 0; a < kArms.size(); ++a) X.row(static_cast<Eigen::Index>(a)) = arms[a].transpose();
        const Eigen::VectorXd mean = posterior->predict(X).mean;
        hedges_[k].reward(std::vector<double>(mean.data(), mean.data() + mean.size()));
      }
    }
    nominees_[k].clear();
  }
}

std::vector<double> HedgePortfolios::gains(std::size_t k) const {
  if (k >= hedges_.size()) return surrogate::GpHedge(static_cast<int>(kArms.size()), eta_).gains();
  return hedges_[k].gains();
}

std::vector<HedgeState> HedgePortfolios::save() const {
  std::vector<HedgeState> saved;
  for (std::size_t k = 0; k < hedges_.size(); ++k) {
    HedgeState h;
    h.gains = hedges_[k].gains();
    h.seeded = seeded_[k];
    for (const Nominees& arms : nominees_[k]) {
      std::vector<std::vector<double>> points;
      for (const Eigen::VectorXd& x : arms) points.emplace_back(x.data(), x.data() + x.size());
      h.nominees.push_back(std::move(points));
    }
    saved.push_back(std::move(h));
  }
  return saved;
}

void HedgePortfolios::restore(const std::vector<HedgeState>& saved) {
  for (std::size_t k = 0; k < saved.size() && k < hedges_.size(); ++k) {
    const HedgeState& h = saved[k];
    hedges_[k] = surrogate::GpHedge(static_cast<int>(kArms.size()), eta_);
    if (h.gains.size() == kArms.size()) hedges_[k].reward(h.gains);
    // A version 1 state (before Hedge memory) drew if it holds any gain or nominee.
    seeded_[k] = h.seeded || !h.nominees.empty() || std::any_of(h.gains.begin(), h.gains.end(), [](double g) { return g != 0; });
    nominees_[k].clear();
    for (const auto& arms : h.nominees) {
      if (arms.size() != kArms.size()) continue;
      Nominees points;
      for (std::size_t a = 0; a < arms.size(); ++a) {
        points[a] = Eigen::Map<const Eigen::VectorXd>(arms[a].data(), static_cast<Eigen::Index>(arms[a].size()));
      }
      nominees_[k].push_back(std::move(points));
    }
  }
}

}  // namespace lbo::orchestrator
