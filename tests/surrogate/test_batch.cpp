#include "lbo/surrogate/batch.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "lbo/surrogate/gp.hpp"

using namespace lbo::surrogate;
using Kind = CoordinateGroup::Kind;

namespace {

// A 2-d GP posterior of a smooth function with one broad peak near (0.7, 0.3).
std::shared_ptr<const TaskPosterior> posterior_of_a_peak() {
  Eigen::MatrixXd X(9, 2);
  X << 0.1, 0.1, 0.5, 0.1, 0.9, 0.1, 0.1, 0.5, 0.5, 0.5, 0.9, 0.5, 0.1, 0.9, 0.5, 0.9, 0.9, 0.9;
  Eigen::VectorXd y(9);
  for (Eigen::Index i = 0; i < 9; ++i) {
    const double dx = X(i, 0) - 0.7, dy = X(i, 1) - 0.3;
    y(i) = std::exp(-(dx * dx + dy * dy) / 0.1);
  }
  Eigen::VectorXd theta(4);
  theta << std::log(0.25), std::log(0.25), 0.0, std::log(1e-4);
  return make_gp_posterior(X, y, theta, Standardization{});
}

const BoxSpace kSquare({{Kind::continuous, 0, 1, 0}, {Kind::continuous, 1, 1, 0}});

}  // namespace

TEST(BatchProposerTest, the_first_point_is_the_acquisitions_maximizer_under_the_pending_points) {
  const auto posterior = posterior_of_a_peak();
  Eigen::MatrixXd pending(1, 2);
  pending << 0.2, 0.8;
  const BatchProposer batch(posterior, pending, kSquare, MaximizerOptions{}, 5);
  const AcquisitionParams params{.ucb_beta = 4.0, .xi = 0.0, .incumbent = 0.9};
  const auto ours = batch.next(AcquisitionKind::ei, params);
  Acquisition direct(AcquisitionKind::ei, params, posterior);
  direct.set_pending(pending);
  BoxObjective f;
  f.values = [&](const Eigen::MatrixXd& X) { return direct.evaluate(X); };
  f.gradient = [&](const Eigen::VectorXd& x, Eigen::VectorXd& g) { return direct.evaluate(x, g); };
  const auto theirs = maximize(f, kSquare, MaximizerOptions{}, 5);
  ASSERT_FALSE(ours.empty());
  EXPECT_NEAR((ours.front().x - theirs.front().x).norm(), 0.0, 1e-9);
  EXPECT_NEAR(ours.front().value, theirs.front().value, 1e-12);
}

// A brief refinement is the maximizer with kBriefProgress as its progress rule, a full one the
// maximizer without it; the two stop at different points here.
TEST(BatchProposerTest, a_brief_refinement_is_the_maximizer_with_the_progress_rule) {
  const auto posterior = posterior_of_a_peak();
  const BatchProposer batch(posterior, Eigen::MatrixXd(0, 2), kSquare, MaximizerOptions{}, 5);
  const AcquisitionParams params{.ucb_beta = 4.0, .xi = 0.0, .incumbent = 0.9};
  Acquisition direct(AcquisitionKind::ei, params, posterior);
  BoxObjective f;
  f.values = [&](const Eigen::MatrixXd& X) { return direct.evaluate(X); };
  f.gradient = [&](const Eigen::VectorXd& x, Eigen::VectorXd& g) { return direct.evaluate(x, g); };
  const auto brief = batch.next(AcquisitionKind::ei, params, Refinement::brief);
  const auto full = batch.next(AcquisitionKind::ei, params, Refinement::full);
  const auto with_rule = maximize(f, kSquare, MaximizerOptions{.progress = kBriefProgress}, 5);
  ASSERT_FALSE(brief.empty());
  EXPECT_NEAR((brief.front().x - with_rule.front().x).norm(), 0.0, 1e-9);
  EXPECT_GT((brief.front().x - full.front().x).norm(), 1e-9);
}

TEST(BatchProposerTest, accepted_points_are_hallucinated_at_the_mean_and_equal_a_fresh_batch_with_them_pending) {
  const auto posterior = posterior_of_a_peak();
  BatchProposer batch(posterior, Eigen::MatrixXd(0, 2), kSquare, MaximizerOptions{}, 1);
  const Eigen::Vector2d x(0.65, 0.35), probe(0.62, 0.38);
  const Posterior before = batch.conditioned()->predict(probe.transpose());
  batch.accept(x);
  EXPECT_EQ(batch.size(), 1);
  const Posterior after = batch.conditioned()->predict(probe.transpose());
  // GP-BUCB: a hallucinated observation at the mean leaves the mean and shrinks the variance.
  EXPECT_NEAR(after.mean(0), before.mean(0), 1e-9);
  EXPECT_LT(after.var(0), 0.5 * before.var(0));
  const BatchProposer fresh(posterior, x.transpose(), kSquare, MaximizerOptions{}, 1);
  const Posterior same = fresh.conditioned()->predict(probe.transpose());
  EXPECT_NEAR(same.mean(0), after.mean(0), 1e-9);
  EXPECT_NEAR(same.var(0), after.var(0), 1e-9);
}

TEST(BatchProposerTest, a_batch_spreads_out_and_each_point_stays_good) {
  const auto posterior = posterior_of_a_peak();
  BatchProposer batch(posterior, Eigen::MatrixXd(0, 2), kSquare, MaximizerOptions{.candidates = 512}, 11);
  const AcquisitionParams params{.ucb_beta = 1.0, .xi = 0.0, .incumbent = 0.0};
  std::vector<Eigen::VectorXd> points;
  for (int i = 0; i < 6; ++i) {
    const auto maxima = batch.next(AcquisitionKind::ucb, params);
    points.push_back(maxima.front().x);
    batch.accept(maxima.front().x);
  }
  // Without hallucination every point would be the same maximizer; with it, no two coincide.
  double closest = 1;
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) closest = std::min(closest, (points[i] - points[j]).norm());
  }
  EXPECT_GT(closest, 0.03);
  // The first lands on the peak, and the batch stays in its neighbourhood rather than wandering
  // to the corners where the mean is low.
  EXPECT_LT((points.front() - Eigen::Vector2d(0.7, 0.3)).norm(), 0.08);
  const Eigen::VectorXd means = posterior->predict([&] {
                                           Eigen::MatrixXd X(6, 2);
                                           for (int i = 0; i < 6; ++i) X.row(i) = points[static_cast<std::size_t>(i)].transpose();
                                           return X;
                                         }())
                                    .mean;
  EXPECT_GT(means.minCoeff(), 0.3);
}

TEST(BatchProposerTest, a_result_replaces_its_believed_value_as_conditioning_on_it_would) {
  const auto posterior = posterior_of_a_peak();
  const Eigen::Vector2d a(0.3, 0.7), b(0.65, 0.35);
  Eigen::MatrixXd pending(2, 2);
  pending << a.transpose(), b.transpose();
  BatchProposer batch(posterior, pending, kSquare, MaximizerOptions{.candidates = 64}, 3);
  EXPECT_EQ(batch.size(), 0);
  const double believed_b = posterior->predict(b.transpose()).mean(0);
  EXPECT_NEAR(batch.believed_best(), std::max(posterior->predict(a.transpose()).mean(0), believed_b), 1e-9);
  batch.observe(1, 0.25);  // b's result: far below what was believed there
  // The only believed value left is a's.
  EXPECT_NEAR(batch.believed_best(), posterior->predict(a.transpose()).mean(0), 1e-9);
  Eigen::VectorXd y(2);
  y << posterior->predict(a.transpose()).mean(0), 0.25;
  const auto exact = posterior->condition(pending, &y);
  const Eigen::Vector2d probe(0.62, 0.38);
  EXPECT_NEAR(batch.conditioned()->predict(probe.transpose()).mean(0), exact->predict(probe.transpose()).mean(0), 1e-9);
  // The candidates' scores follow: UCB with β = 0 is the mean, maximal away from b now.
  const auto maxima = batch.next(AcquisitionKind::ucb, AcquisitionParams{.ucb_beta = 0.0}, Refinement::none);
  const Eigen::MatrixXd C = candidate_points(kSquare, MaximizerOptions{.candidates = 64}, 3);
  const Posterior at = exact->predict(C);
  Eigen::Index best = 0;
  at.mean.maxCoeff(&best);
  EXPECT_NEAR((maxima.front().x - C.row(best).transpose()).norm(), 0.0, 1e-12);
  EXPECT_NEAR(maxima.front().value, at.mean(best), 1e-9);
}

TEST(BatchProposerTest, an_accepted_candidate_ranks_last_so_a_long_batch_does_not_repeat_one) {
  const auto posterior = posterior_of_a_peak();
  BatchProposer batch(posterior, Eigen::MatrixXd(0, 2), kSquare, MaximizerOptions{.candidates = 32}, 4);
  EXPECT_EQ(batch.candidates_left(), 32);
  // UCB with β = 0 ranks by the mean alone, which a believed point does not change: without
  // marking, the same candidate would come first every time.
  const AcquisitionParams params{.ucb_beta = 0.0};
  std::vector<Eigen::VectorXd> chosen;
  for (int i = 0; i < 5; ++i) {
    const Eigen::VectorXd x = batch.next(AcquisitionKind::ucb, params, Refinement::none).front().x;
    for (const Eigen::VectorXd& earlier : chosen) EXPECT_GT((x - earlier).norm(), 0.0);
    chosen.push_back(x);
    batch.accept(x);
  }
  EXPECT_EQ(batch.candidates_left(), 27);
  EXPECT_FALSE(std::isfinite(batch.next(AcquisitionKind::ucb, params, Refinement::none).back().value));
}
