// TaskBatch: a task's proposals in flight, and what it believes of its running trials when
// thousands of them run at once.
#include "task_batch.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "lbo/surrogate/gp.hpp"
#include "test_support.hpp"

using namespace lbo::orchestrator;
using lbo::jobs::Config;

namespace {

const lbo::surrogate::BoxSpace kLine({{lbo::surrogate::CoordinateGroup::Kind::continuous, 0, 1, 0}});

// A 1-d GP posterior on three points, with a short lengthscale (far points barely correlate).
std::shared_ptr<const lbo::surrogate::TaskPosterior> three_points() {
  Eigen::MatrixXd X(3, 1);
  X << 0.05, 0.5, 0.95;
  Eigen::VectorXd y(3);
  y << 0.0, 1.0, 0.0;
  Eigen::VectorXd theta(3);
  theta << std::log(0.05), 0.0, std::log(1e-4);
  return lbo::surrogate::make_gp_posterior(X, y, theta, lbo::surrogate::Standardization{});
}

double x_of_trial(const Trial& t) { return *t.config.values[0]; }

TaskTrials trials_of(const RunState& state) {
  return TaskTrials{state, 0,
                    [](const Trial& t) {
                      Eigen::VectorXd v(1);
                      v(0) = x_of_trial(t);
                      return v;
                    },
                    [](const Trial& t) { return t.finished && t.outcome.status == lbo::workers::TrialStatus::ok; },
                    [](const Trial& t) { return t.outcome.objective; }};
}

double variance_at(TaskBatch& batch, double x) {
  return batch.proposer().conditioned()->predict(Eigen::MatrixXd::Constant(1, 1, x)).var(0);
}

}  // namespace

// With more trials running than it believes, a rebuilt batch believes the newest; a result of
// one it did not believe joins it, and a trial started since is believed.
TEST(TaskBatchTest, a_batch_believes_the_newest_running_trials_and_takes_the_others_results) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  constexpr int kOld = 40;
  // The oldest trials run near x = 0.2, the newest kBelieved near x = 0.8.
  for (int i = 0; i < kOld; ++i) lbo::testing::start_trial(state, 0, Config{{0.15 + 0.1 * i / kOld}});
  for (int i = 0; i < TaskBatch::kBelieved; ++i) lbo::testing::start_trial(state, 0, Config{{0.75 + 0.1 * i / TaskBatch::kBelieved}});
  const std::vector<std::int64_t> fitted;
  const Basis basis{Basis::Kind::fit, three_points(), "fit 1", 0, &fitted, nullptr};
  const BatchSettings settings{&kLine, lbo::surrogate::MaximizerOptions{.candidates = 64, .refine = 0}, 0.01, false, nullptr};

  TaskBatch batch;
  batch.update(trials_of(state), basis, settings, 1);
  EXPECT_EQ(batch.unbelieved(), kOld);
  EXPECT_EQ(batch.proposer().points(), TaskBatch::kBelieved);
  EXPECT_EQ(batch.count(), kOld + TaskBatch::kBelieved);
  const auto prior_at = [](double x) { return three_points()->predict(Eigen::MatrixXd::Constant(1, 1, x)).var(0); };
  const double prior_var = prior_at(0.2);
  EXPECT_NEAR(variance_at(batch, 0.2), prior_var, 1e-9) << "an old running trial is believed";
  EXPECT_LT(variance_at(batch, 0.8), 1e-3 * prior_at(0.8));

  // The oldest trial's result comes in, and a new trial starts near x = 0.35.
  lbo::testing::end_attempt(state, 0, lbo::testing::ok_with(2.5));
  const std::int64_t started = lbo::testing::start_trial(state, 0, Config{{0.35}});
  batch.update(trials_of(state), basis, settings, 1);
  EXPECT_EQ(batch.unbelieved(), kOld - 1);
  EXPECT_EQ(batch.proposer().points(), TaskBatch::kBelieved + 2) << "not rebuilt: the result and the new trial joined";
  const auto at = [&](double x) { return batch.proposer().conditioned()->predict(Eigen::MatrixXd::Constant(1, 1, x)); };
  EXPECT_NEAR(at(0.15).mean(0), 2.5, 0.01) << "the result of a trial it did not believe joins it";
  EXPECT_LT(at(0.35).var(0), 1e-3 * prior_at(0.35))
      << "trial " << started << " started since is believed";
  EXPECT_NEAR(variance_at(batch, 0.25), prior_at(0.25), 0.1 * prior_at(0.25)) << "the other old ones are still not believed";
}

// A batch at kExact points penalizes the trials started since; a penalized trial's result does
// not join it then, but counts for the incumbent.
TEST(TaskBatchTest, a_full_batch_penalizes_the_trials_started_since) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  for (int i = 0; i < TaskBatch::kExact; ++i) lbo::testing::start_trial(state, 0, Config{{0.5 * i / TaskBatch::kExact}});
  const std::vector<std::int64_t> fitted;
  const Basis basis{Basis::Kind::fit, three_points(), "fit 1", 0, &fitted, nullptr};
  const BatchSettings settings{&kLine, lbo::surrogate::MaximizerOptions{.candidates = 64, .refine = 0}, 0.01, false, nullptr};
  TaskBatch batch;
  batch.update(trials_of(state), basis, settings, 1);
  EXPECT_EQ(batch.proposer().points(), TaskBatch::kBelieved);
  EXPECT_EQ(batch.proposer().penalized(), TaskBatch::kExact - TaskBatch::kBelieved) << "the oldest";
  // The batch takes trials started since until it holds kExact points.
  for (int i = 0; i < TaskBatch::kExact - TaskBatch::kBelieved; ++i) {
    lbo::testing::start_trial(state, 0, Config{{0.5 + 0.4 * i / TaskBatch::kExact}});
  }
  batch.update(trials_of(state), basis, settings, 1);
  EXPECT_EQ(batch.proposer().points(), TaskBatch::kExact);
  lbo::testing::start_trial(state, 0, Config{{0.999}});
  batch.update(trials_of(state), basis, settings, 1);
  EXPECT_EQ(batch.proposer().points(), TaskBatch::kExact) << "not rebuilt, not grown";
  EXPECT_EQ(batch.proposer().penalized(), TaskBatch::kExact - TaskBatch::kBelieved + 1);
  EXPECT_EQ(batch.unbelieved(), TaskBatch::kExact - TaskBatch::kBelieved + 1);
  EXPECT_GT(variance_at(batch, 0.999), 0.5 * three_points()->predict(Eigen::MatrixXd::Constant(1, 1, 0.999)).var(0))
      << "not believed";
  // The oldest trial (penalized) ends with the best result so far.
  lbo::testing::end_attempt(state, 0, lbo::testing::ok_with(7.0));
  batch.update(trials_of(state), basis, settings, 1);
  EXPECT_EQ(batch.proposer().points(), TaskBatch::kExact) << "no room: the result stays out";
  EXPECT_EQ(batch.params().incumbent, 7.0);
  EXPECT_EQ(batch.unbelieved(), TaskBatch::kExact - TaskBatch::kBelieved);
}

// A rebuilt batch's posterior joins the best kJoined results its basis has not seen; the others
// wait for the next fit.
TEST(TaskBatchTest, a_rebuilt_batch_joins_the_best_unseen_results_and_penalizes_the_rest) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  constexpr int kLeft = 5;
  // kJoined results of 1 on [0, 0.5), then kLeft of −5 on [0.8, 0.9).
  for (int i = 0; i < TaskBatch::kJoined + kLeft; ++i) {
    const bool good = i < TaskBatch::kJoined;
    const double x = good ? 0.5 * i / TaskBatch::kJoined : 0.8 + 0.02 * (i - TaskBatch::kJoined);
    const std::int64_t id = lbo::testing::start_trial(state, 0, Config{{x}});
    lbo::testing::end_attempt(state, id, lbo::testing::ok_with(good ? 1.0 : -5.0));
  }
  const std::vector<std::int64_t> fitted;  // the basis saw none of them
  const Basis basis{Basis::Kind::fit, three_points(), "fit 1", 0, &fitted, nullptr};
  const BatchSettings settings{&kLine, lbo::surrogate::MaximizerOptions{.candidates = 64, .refine = 0}, 0.01, false, nullptr};
  TaskBatch batch;
  batch.update(trials_of(state), basis, settings, 1);
  EXPECT_EQ(batch.proposer().penalized(), 0);
  EXPECT_EQ(batch.proposer().points(), 0);
  EXPECT_EQ(batch.params().incumbent, 1.0);
  const auto mean_at = [&](double x) { return batch.proposer().conditioned()->predict(Eigen::MatrixXd::Constant(1, 1, x)).mean(0); };
  EXPECT_NEAR(mean_at(0.25), 1.0, 1e-2) << "the best results joined";
  EXPECT_GT(mean_at(0.84), -1.0) << "the worst did not";
}

// However long the last full refinement took (here an hour: the time rule is not due for nine),
// at least every kRefineEvery-th ranking is refined, briefly; a refinement starts the count again;
// --sync refines every ranking in full.
TEST(TaskBatchTest, at_least_every_twentieth_ranking_is_refined) {
  using lbo::surrogate::Refinement;
  TaskBatch batch;
  batch.refined(Refinement::full, std::chrono::steady_clock::now() - std::chrono::hours(1));
  for (int round = 0; round < 2; ++round) {
    for (int i = 1; i < TaskBatch::kRefineEvery; ++i) {
      EXPECT_EQ(batch.take_refinement(false), Refinement::none) << "ranking " << i;
    }
    EXPECT_EQ(batch.take_refinement(false), Refinement::brief) << "round " << round;
    batch.refined(Refinement::brief, std::chrono::steady_clock::now());
  }
  EXPECT_EQ(batch.take_refinement(true), Refinement::full);
}

// The time rule weighs full refinements only: after a full one of 1 ms, a brief one however long
// leaves the next full one due 9 ms later (the sleep is longer; a loaded machine only lengthens it).
TEST(TaskBatchTest, a_full_refinement_is_due_after_nine_times_the_last_full_ones_cost) {
  using lbo::surrogate::Refinement;
  using namespace std::chrono_literals;
  TaskBatch batch;
  EXPECT_EQ(batch.take_refinement(false), Refinement::full) << "nothing refined yet";
  batch.refined(Refinement::full, std::chrono::steady_clock::now() - 1ms);
  batch.refined(Refinement::brief, std::chrono::steady_clock::now() - std::chrono::hours(1));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(batch.take_refinement(false), Refinement::full);
}
