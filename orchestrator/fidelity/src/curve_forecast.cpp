#include "curve_forecast.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>

#include "lbo/surrogate/blr.hpp"

namespace lbo::orchestrator {

// A rung's regression on the curves before `before` (none: all that had ended when ended_ had
// `ended` of them): nothing but its count while it has too few curves.
struct CurveForecast::Fit {
  std::optional<std::int64_t> before;
  std::size_t ended = 0;
  int curves = 0;
  int tasks = 0;
  Eigen::VectorXd shift, scale;  // the features' standardization over the curves
  double centre = 0;             // ȳ, the mean rise to the final value
  Eigen::VectorXd mean;          // m (empty: too few curves)
  Eigen::MatrixXd covariance;    // Σ = (αI + βΦᵀΦ)⁻¹
  double noise = 0;              // s², the mean squared leave-one-out residual
};

CurveForecast::CurveForecast(const jobs::JobSpec& job, const RungTable& table)
    : table_(table), encoder_(job.space), several_(!job.objective.several.empty()) {
  features_ = 2 + encoder_.dimension();  // the value at the rung, its rise, the configuration
  fits_.resize(table.rungs(0).size());
}

CurveForecast::~CurveForecast() = default;

void CurveForecast::refresh(const RunState& state) const {
  for (; seen_ < state.next_trial_id(); ++seen_) open_.insert(seen_);
  for (auto it = open_.begin(); it != open_.end();) {
    const Trial& t = state.trial(*it);
    if (!t.finished) {
      ++it;
      continue;
    }
    if (t.outcome.status == workers::TrialStatus::ok && !t.lost() && std::isfinite(final_value(t))) {
      ended_.insert(std::upper_bound(ended_.begin(), ended_.end(), *it), *it);
    }
    it = open_.erase(it);
  }
}

double CurveForecast::final_value(const Trial& t) const {
  const std::size_t i = table_.spec().objective;
  if (several_) return i < t.outcome.values.size() ? table_.oriented(t.outcome.values[i]) : std::nan("");
  return table_.oriented(t.outcome.objective);
}

std::optional<Eigen::VectorXd> CurveForecast::features(const Trial& t, std::size_t k, double at) const {
  const std::vector<std::int64_t>& rungs = table_.rungs(0);
  double before = at;
  if (k > 0) {
    const std::optional<RungTable::AtRung> previous = table_.at_rung(t, rungs[k - 1]);
    if (!previous) return std::nullopt;
    before = table_.oriented(previous->value);
  } else if (const auto [begin, end] = table_.curve(t); begin != end && begin->step <= rungs[0]) {
    before = table_.oriented(begin->value);  // the first rung's rise is from the first report
  }
  const std::vector<double> u = encoder_.encode(t.config);
  Eigen::VectorXd phi(features_);
  phi(0) = at;
  phi(1) = at - before;
  for (std::size_t j = 0; j < u.size(); ++j) phi(static_cast<Eigen::Index>(j) + 2) = u[j];
  return phi;
}

const CurveForecast::Fit* CurveForecast::fit(const RunState& state, std::size_t k, std::optional<std::int64_t> before) const {
  refresh(state);
  std::unique_ptr<Fit>& fit = fits_[k];
  // With a bound the curves are fixed (they ended before it); without, they grow with ended_.
  if (fit && fit->before == before && (before || fit->ended == ended_.size())) return fit.get();
  fit = std::make_unique<Fit>();
  fit->before = before;
  fit->ended = ended_.size();
  // The newest curves that reached the rung, in ascending ids.
  const std::int64_t rung = table_.rungs(0)[k];
  std::vector<Eigen::VectorXd> rows;
  std::vector<double> rises;
  std::set<int> tasks;
  for (auto it = ended_.rbegin(); it != ended_.rend() && rows.size() < kMaxCurves; ++it) {
    const Trial& t = state.trial(*it);
    if (before && t.final_seq >= *before) continue;
    const std::optional<RungTable::AtRung> at = table_.at_rung(t, rung);
    if (!at) continue;
    const double value = table_.oriented(at->value);
    std::optional<Eigen::VectorXd> phi = features(t, k, value);
    if (!phi || !phi->allFinite() || !std::isfinite(value)) continue;
    rows.push_back(std::move(*phi));
    rises.push_back(final_value(t) - value);
    tasks.insert(t.task);
  }
  fit->curves = static_cast<int>(rows.size());
  fit->tasks = static_cast<int>(tasks.size());
  if (fit->curves < needed()) return fit.get();
  const auto n = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd phi(n, features_);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {  // ascending ids: the newest was read first
    phi.row(i) = rows[rows.size() - 1 - static_cast<std::size_t>(i)].transpose();
    y(i) = rises[rises.size() - 1 - static_cast<std::size_t>(i)];
  }
  fit->shift = phi.colwise().mean().transpose();
  fit->scale = ((phi.rowwise() - fit->shift.transpose()).colwise().squaredNorm() / static_cast<double>(n)).cwiseSqrt().transpose();
  for (Eigen::Index j = 0; j < features_; ++j) {
    if (!(fit->scale(j) > 1e-12)) fit->scale(j) = 1.0;  // a constant feature: 0 after the shift
  }
  phi = (phi.rowwise() - fit->shift.transpose()).array().rowwise() / fit->scale.transpose().array();
  fit->centre = y.mean();
  y.array() -= fit->centre;
  const surrogate::BlrPrecisions at = surrogate::blr_evidence_maximum(phi, y);
  Eigen::MatrixXd precision = at.beta * (phi.transpose() * phi);
  precision.diagonal().array() += at.alpha;
  fit->covariance = precision.llt().solve(Eigen::MatrixXd::Identity(features_, features_));
  fit->mean = at.beta * (fit->covariance * (phi.transpose() * y));
  // Leave-one-out residuals of a linear smoother: eᵢ / (1 − hᵢ), hᵢ = β φᵢᵀΣφᵢ (the hat matrix's
  // diagonal): the noise a forecast of a curve not learned from has.
  const Eigen::VectorXd residual = y - phi * fit->mean;
  const Eigen::VectorXd hat = at.beta * (phi * fit->covariance).cwiseProduct(phi).rowwise().sum();
  fit->noise = (residual.array() / (1.0 - hat.array()).max(1e-6)).square().mean();
  return fit.get();
}

int CurveForecast::curves(const RunState& state, std::size_t k, std::optional<std::int64_t> before) const {
  return fit(state, k, before)->curves;
}

std::optional<Forecast> CurveForecast::at_rung(const RunState& state, const Trial& t, std::size_t k,
                                               const RungTable::AtRung& mine, std::optional<std::int64_t> before) const {
  const Fit* f = fit(state, k, before);
  if (f->mean.size() == 0) return std::nullopt;
  const double value = table_.oriented(mine.value);
  std::optional<Eigen::VectorXd> phi = features(t, k, value);
  if (!phi || !phi->allFinite()) return std::nullopt;
  const Eigen::VectorXd z = (*phi - f->shift).cwiseQuotient(f->scale);
  const double variance = f->noise * (1.0 + 1.0 / f->curves) + z.dot(f->covariance * z);
  return Forecast{value + f->centre + z.dot(f->mean), std::sqrt(std::max(variance, 0.0)), f->curves, f->tasks};
}

}  // namespace lbo::orchestrator
