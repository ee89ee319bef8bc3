#include "model_report.hpp"

#include <limits>
#include <random>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::orchestrator {

std::vector<TaskModelReport> describe_tasks(const Snapshot* fit, const ModelData& data, const models::ModelEntry& model,
                                            const jobs::JobSpec& job, std::size_t run_tasks) {
  std::vector<TaskModelReport> reports(run_tasks * static_cast<std::size_t>(data.steps()));
  if (fit == nullptr) return reports;
  constexpr int kPoints = 256;
  std::mt19937_64 rng(job.seed ^ 0x5151u);
  std::vector<Eigen::VectorXd> points;
  for (int i = 0; i < kPoints; ++i) points.push_back(data.encode(job.space.sample(rng)));
  const Eigen::MatrixXd X = surrogate::stack_rows(points, data.encoder().dimension());
  std::vector<Eigen::VectorXd> centred(reports.size());
  for (std::size_t k = 0; k < reports.size(); ++k) {
    const std::size_t m = data.warm_tasks() + k;
    const bool fitted = m < fit->trials.size() && !fit->trials[m].empty();
    if (model.describe) model.describe(fit->state, m, fitted, reports[k]);
    const auto& posterior = m < fit->posteriors.size() ? fit->posteriors[m] : nullptr;
    if (posterior && fitted) {
      const Eigen::VectorXd mean = posterior->predict(X).mean;
      centred[k] = mean.array() - mean.mean();
    }
  }
  for (std::size_t k = 0; k < reports.size(); ++k) {
    if (centred[k].size() == 0) continue;
    for (std::size_t j = 0; j < reports.size(); ++j) {
      const double norms = centred[k].norm() * (centred[j].size() ? centred[j].norm() : 0.0);
      reports[k].similarity.push_back(norms > 0 ? centred[k].dot(centred[j]) / norms
                                                : std::numeric_limits<double>::quiet_NaN());
    }
  }
  return reports;
}

}  // namespace lbo::orchestrator
