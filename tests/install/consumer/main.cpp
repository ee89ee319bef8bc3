// Uses the installed lbo::jobs and lbo::surrogate: reads a job file's space, encodes a design
// of it into the unit box, and checks GP posteriors there. Exit 0 when every check holds.
#include <Eigen/Core>
#include <cmath>
#include <cstdio>
#include <random>

#include "lbo/jobs/encoding.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/surrogate/gp.hpp"

namespace {

int failures = 0;

void check(bool ok, const char* what, double got, double expected) {
  std::printf("%s %s: %.9g (expected %.9g)\n", ok ? "ok  " : "FAIL", what, got, expected);
  if (!ok) ++failures;
}

}  // namespace

int main() {
  using namespace lbo;
  const jobs::JobSpec job = jobs::parse_job(R"(
[objective]
command = ["true"]
direction = "maximize"
[space]
x = { type = "float", low = -1.0, high = 1.0 }
y = { type = "float", low = 1e-3, high = 1.0, log = true }
[[tasks]]
name = "only"
budget = 8
)", "consumer.toml");
  const jobs::Encoder encoder(job.space);
  check(encoder.dimension() == 2, "encoded dimension", encoder.dimension(), 2);

  // Six configurations of the space, encoded; the objective is smooth in the unit box.
  std::mt19937_64 rng(job.seed);
  surrogate::Observations data{Eigen::MatrixXd(6, encoder.dimension()), Eigen::VectorXd(6)};
  for (int i = 0; i < 6; ++i) {
    const std::vector<double> u = encoder.encode(job.space.sample(rng));
    data.X.row(i) = Eigen::Map<const Eigen::RowVectorXd>(u.data(), encoder.dimension());
    data.y(i) = std::sin(3 * u[0]) + u[1];
  }

  // One observation, fixed θ: mean σ_f² y / (σ_f² + σ_n²), variance σ_f² σ_n² / (σ_f² + σ_n²).
  const double signal = 1.5, noise = 0.1;
  Eigen::VectorXd theta(4);
  theta << std::log(0.3), std::log(0.3), std::log(signal), std::log(noise);
  const auto one = surrogate::make_gp_posterior(data.X.topRows(1), data.y.head(1), theta, surrogate::Standardization{});
  const surrogate::Posterior at_one = one->predict(data.X.topRows(1));
  const double mean = signal * data.y(0) / (signal + noise), var = signal * noise / (signal + noise);
  check(std::abs(at_one.mean(0) - mean) < 1e-9, "closed-form posterior mean", at_one.mean(0), mean);
  check(std::abs(at_one.var(0) - var) < 1e-9, "closed-form posterior variance", at_one.var(0), var);

  // A fitted GP (L-BFGS-B, OpenMP) goes near its training values.
  surrogate::GaussianProcess gp;
  gp.fit(data, 1);
  const surrogate::Posterior fitted = gp.posterior()->predict(data.X);
  for (int i = 0; i < 6; ++i) {
    const double predicted = gp.posterior()->standardization().invert(fitted.mean(i));
    check(std::abs(predicted - data.y(i)) < 0.1, "fitted mean at a training point", predicted, data.y(i));
  }
  return failures == 0 ? 0 : 1;
}
